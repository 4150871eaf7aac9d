"""A workspace's background jobs: long commands started now, read by offset later, cancelled.

Each job's process is spawned from its own long-lived thread (``PR_SET_PDEATHSIG`` is tied to the
spawning thread), its merged stdout and stderr go to an :class:`~.capture.OutputLog`, and its tree
is killed on cancel, timeout, a root change that leaves its folder, workspace close or server exit.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import selectors
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..failures import ToolFailure
from .capture import OutputLog, decode, drain, read_available
from .command import cwd_label, inside_any, prepare
from .containment import KILL_GRACE_S, LEFTOVER_WAIT_S, Prepared, ProcessTree, open_pidfd, spawn
from .shutdown import register_service
from .sweeper import sweep_later

if TYPE_CHECKING:
    from ...workspace import Workspace

JOB_LOG_BYTES = 4 << 20
MAX_RUNNING_JOBS = 16
MAX_KEPT_JOBS = 64

JobState = Literal["running", "exited", "killed", "timed_out", "failed"]

_ids = itertools.count(1)


def _now() -> float:
    return time.time()


@dataclass
class Job:
    """One background job: its command, state, exit code and output log (``_`` fields: the engine's)."""

    id: str
    title: str
    command: str
    cwd: str
    started_at: float
    state: JobState = "running"
    exit_code: int | None = None
    ended_at: float | None = None
    pid: int | None = None
    error: str | None = None
    limit_hit: str | None = None
    """The resource limit the job hit (``pids limit 1024 reached (fork failed)``), once it ended."""
    log: OutputLog = field(default_factory=lambda: OutputLog(JOB_LOG_BYTES))
    has_stdin: bool = False
    timeout_s: float | None = None
    _proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _tree: ProcessTree | None = field(default=None, repr=False)
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _stop_reason: str = field(default="killed", repr=False)
    _done: threading.Event = field(default_factory=threading.Event, repr=False)
    _wake_w: int | None = field(default=None, repr=False)
    _stdin_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _where: Path | None = field(default=None, repr=False)
    """The absolute working directory: which root the job belongs to."""

    @property
    def running(self) -> bool:
        return self.state == "running"

    @property
    def duration_ms(self) -> int:
        return int(((self.ended_at or _now()) - self.started_at) * 1000)

    def read(self, offset: int = 0, max_bytes: int = 100_000) -> tuple[str, int, int, int, bool]:
        """``(text, start, next_offset, skipped, has_more)``."""
        data, start, nxt, skipped = self.log.read(offset, max_bytes, final=not self.running)
        return decode(data), start, nxt, skipped, nxt < self.log.end


class Jobs:
    """A workspace's background jobs: long commands started now and read later."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.jobs: dict[str, Job] = {}
        self.lock = threading.Lock()
        self.closed = False
        register_service(self)

    def start(
        self,
        command: str | Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str | None] | None = None,
        title: str | None = None,
        stdin: bool = False,
        timeout_s: float | None = None,
        shared: Sequence[Path] = (),
    ) -> Job:
        """Start ``command`` in the background; its merged stdout+stderr go to the job's log.

        ``shared``: folders of the server's a hosted workspace's sandbox shows the job, read-write
        (a multi-step run's plan and progress files)."""
        if self.closed:
            raise ToolFailure("unavailable: the workspace is closing", kind="unavailable")
        with self.lock:
            if sum(j.running for j in self.jobs.values()) >= MAX_RUNNING_JOBS:
                raise ToolFailure(
                    f"refused: {MAX_RUNNING_JOBS} jobs are already running in this workspace (rule: a workspace runs "
                    "at most that many jobs; cancel one with cancel_job)",
                    kind="refused",
                )
        prep = prepare(command, ws=self.ws, cwd=cwd, env=env, shared=shared)
        job = Job(
            id=f"job-{next(_ids)}",
            title=title or prep.display[:80],
            command=prep.display,
            cwd=cwd_label(prep.cwd, self.ws.root),
            started_at=_now(),
            has_stdin=stdin,
            timeout_s=timeout_s,
            _where=prep.cwd,
        )
        started = threading.Event()
        failure: list[BaseException] = []
        thread = threading.Thread(
            target=self._run_job, args=(job, prep, started, failure), name=f"mcp-ide-{job.id}", daemon=True
        )
        thread.start()
        started.wait()
        if failure:
            raise failure[0]
        with self.lock:
            self.jobs[job.id] = job
            self._forget_old()
        return job

    def _run_job(
        self, job: Job, prep: Prepared, started: threading.Event, failure: list[BaseException]
    ) -> None:
        # The process is spawned from this thread, which lives as long as it does (PDEATHSIG).
        try:
            proc, tree = spawn(
                prep,
                stdin=subprocess.PIPE if job.has_stdin else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                pdeathsig=True,
            )
        except BaseException as exc:
            failure.append(exc)
            started.set()
            return
        job._proc, job._tree, job.pid = proc, tree, proc.pid
        if proc.stdin is not None:
            os.set_blocking(proc.stdin.fileno(), False)
        wake_r, wake_w = os.pipe()
        job._wake_w = wake_w
        started.set()
        assert proc.stdout is not None
        out_fd = proc.stdout.fileno()
        os.set_blocking(out_fd, False)
        pidfd = open_pidfd(proc.pid)
        sel = selectors.DefaultSelector()
        sel.register(out_fd, selectors.EVENT_READ)
        sel.register(wake_r, selectors.EVENT_READ)
        if pidfd is not None:
            sel.register(pidfd, selectors.EVENT_READ)
        deadline = time.monotonic() + job.timeout_s if job.timeout_s else None
        out_open = True
        exited_at: float | None = None
        reason: JobState = "exited"
        try:
            while True:
                if exited_at is None and proc.poll() is not None:
                    exited_at = time.monotonic()
                if exited_at is not None and not out_open:
                    break
                if job._stop.is_set():
                    reason = "killed" if job._stop_reason == "killed" else "exited"
                    break
                now = time.monotonic()
                wait: float | None = None
                if deadline is not None:
                    if now >= deadline and exited_at is None:
                        reason = "timed_out"
                        break
                    wait = max(0.0, deadline - now)
                if exited_at is not None:
                    left = exited_at + LEFTOVER_WAIT_S - now
                    if left <= 0:
                        break  # leftovers hold the output open: stopped below
                    wait = left if wait is None else min(wait, left)
                elif pidfd is None:
                    wait = 0.05 if wait is None else min(wait, 0.05)
                for key, _ in sel.select(wait):
                    if pidfd is not None and key.fd == pidfd:
                        sel.unregister(pidfd)
                        proc.wait()
                        exited_at = time.monotonic()
                    elif key.fd == wake_r:
                        with contextlib.suppress(OSError):
                            os.read(wake_r, 64)
                    elif key.fd == out_fd and out_open and read_available(out_fd, job.log.append):
                        sel.unregister(out_fd)
                        out_open = False
        except Exception as exc:  # never leave a job "running" because of a bug here
            job.error = str(exc)
            reason = "failed"
        finally:
            clean = reason == "exited" and exited_at is not None and not out_open and not job._stop.is_set()
            if not clean:
                tree.kill(KILL_GRACE_S)
            if out_open:
                drain({out_fd}, {out_fd: job.log.append})
            sel.close()
            for fd in (pidfd, wake_r):
                if fd is not None:
                    with contextlib.suppress(OSError):
                        os.close(fd)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
            job._wake_w = None
            with contextlib.suppress(OSError):
                os.close(wake_w)
            job.limit_hit = tree.note_limits(proc.returncode)
            if clean:
                sweep_later(tree)  # what it left running in the background, found through /proc
            else:
                tree.forget()
            job.exit_code = proc.returncode
            job.ended_at = _now()
            if reason == "exited" and job._stop.is_set() and job._stop_reason == "killed":
                reason = "killed"
            job.state = reason
            job.log.version += 1
            job._done.set()

    def track(self, title: str, command: str, *, started_at: float, stop: threading.Event) -> Job:
        """Record work the server does on its own thread (an action's git fetch, a formatting) as a job
        with no process: listed, read and waited on like any job. ``cancel`` sets ``stop`` (the work
        passes it on to ``run``, which then stops its command); the work ends the job with :meth:`finish`."""
        job = Job(
            id=f"job-{next(_ids)}", title=title, command=command, cwd=".", started_at=started_at, _stop=stop
        )
        with self.lock:
            self.jobs[job.id] = job
            self._forget_old()
        return job

    def finish(self, job: Job, error: str | None = None, *, exit_code: int | None = 0) -> None:
        """End a job made by :meth:`track`: "exited" with ``exit_code``, or, given ``error``, "failed"
        (or "killed" when it was cancelled) with no exit code and the error as its output."""
        if error is not None:
            job.log.append(f"{error}\n".encode())
            job.error = error
        job.exit_code = exit_code if error is None else None
        job.ended_at = _now()
        job.state = "exited" if error is None else "killed" if job._stop.is_set() else "failed"
        job.log.version += 1
        job._done.set()

    def _forget_old(self) -> None:
        finished = [j for j in self.jobs.values() if not j.running]
        for job in finished[: max(0, len(finished) - MAX_KEPT_JOBS)]:
            self.jobs.pop(job.id, None)

    def get(self, job_id: str) -> Job:
        with self.lock:
            job = self.jobs.get(job_id)
        if job is None:
            raise ToolFailure(
                f"not found: no job {job_id!r} in this workspace (list_jobs shows the jobs)", kind="not_found"
            )
        return job

    def list(self) -> list[Job]:
        with self.lock:
            return list(self.jobs.values())

    def send(self, job_id: str, data: bytes, *, close: bool = False) -> int:
        job = self.get(job_id)
        if not job.running:
            raise ToolFailure(f"conflict: job {job_id!r} has ended ({job.state})", kind="conflict")
        proc = job._proc
        if not job.has_stdin or proc is None or proc.stdin is None:
            raise ToolFailure(
                f"refused: job {job_id!r} was started without stdin (rule: commands get no input unless "
                "started with stdin=true)",
                kind="refused",
            )
        with job._stdin_lock:
            if proc.stdin.closed:
                raise ToolFailure(f"conflict: the input of job {job_id!r} is already closed", kind="conflict")
            fd = proc.stdin.fileno()
            written = 0
            deadline = time.monotonic() + 10
            try:
                view = memoryview(data)
                while view:
                    if time.monotonic() > deadline:
                        raise ToolFailure(
                            f"unavailable: job {job_id!r} is not reading its input ({written} bytes sent)",
                            kind="unavailable",
                        )
                    try:
                        n = os.write(fd, view)
                    except BlockingIOError:
                        time.sleep(0.01)
                        continue
                    written += n
                    view = view[n:]
            except BrokenPipeError:
                raise ToolFailure(f"conflict: job {job_id!r} closed its input", kind="conflict") from None
            if close:
                proc.stdin.close()
        return written

    def cancel(self, job_id: str, *, wait_s: float = KILL_GRACE_S + 3) -> Job:
        job = self.get(job_id)
        self._stop(job)
        job._done.wait(wait_s)
        return job

    def release_later(self, job_id: str, grace_s: float) -> None:
        """The session that started the job ended: kill the job after ``grace_s`` if it still runs
        (its output stays readable from any session until the workspace closes)."""
        job = self.jobs.get(job_id)
        if job is None or not job.running:
            return
        timer = threading.Timer(max(0.0, grace_s), lambda: self._stop(job) if job.running else None)
        timer.daemon = True
        timer.start()

    def _stop(self, job: Job) -> None:
        job._stop_reason = "killed"
        job._stop.set()
        if job._wake_w is not None:
            with contextlib.suppress(OSError):
                os.write(job._wake_w, b"x")

    def follow_roots(self, roots: list[Path]) -> bool:
        """The workspace's roots changed: kill the jobs started in a folder no root holds now (as
        ``cancel_job`` does); the others keep running and stay readable. The service stays."""
        jobs = self.list()
        gone = [j for j in jobs if j.running and not inside_any(j._where, roots)]
        for job in gone:
            self._stop(job)
        for job in jobs:
            if job._where is not None:
                job.cwd = cwd_label(job._where, roots[0])
        for job in gone:
            job._done.wait(KILL_GRACE_S + 3)
        return True

    def close(self) -> None:
        """Kill every job's tree (workspace close, server exit)."""
        self.closed = True
        jobs = self.list()
        for job in jobs:
            if job.running:
                self._stop(job)
        for job in jobs:
            job._done.wait(KILL_GRACE_S + 3)

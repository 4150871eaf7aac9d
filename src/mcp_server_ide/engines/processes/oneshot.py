"""One-shot commands: run to completion, contained, with a timeout and capped output.

:func:`run` blocks (tools on worker threads, git, formatters); :func:`run_async` runs on the event
loop and reports progress. Both kill the whole tree on timeout or cancellation, stop what the
command left running once it exits, and return a :class:`Completed`.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import subprocess
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio

from ..failures import ToolFailure
from .capture import DEFAULT_MAX_OUTPUT, Capture, decode, drain, read_available
from .command import prepare
from .containment import KILL_GRACE_S, LEFTOVER_WAIT_S, ProcessTree, open_pidfd, spawn
from .sweeper import sweep_later

if TYPE_CHECKING:
    from ...workspace import Workspace

DEFAULT_TIMEOUT_S = 60.0
MAX_TIMEOUT_S = 3600.0


@dataclass
class Completed:
    """What a one-shot command left: its capped output, exit status and how it ended."""

    stdout_bytes: bytes
    stderr_bytes: bytes
    exit_code: int | None
    """The process's exit status; negative when a signal ended it (-9: killed)."""
    timed_out: bool = False
    truncated: bool = False
    duration_ms: int = 0
    cancelled: bool = False
    stdout_total: int = 0
    stderr_total: int = 0
    leftovers_killed: int = 0
    limit: str | None = None
    """The resource limit the command hit, in words (``pids limit 1024 reached (fork failed)``)."""

    @property
    def stdout(self) -> str:
        return decode(self.stdout_bytes)

    @property
    def stderr(self) -> str:
        return decode(self.stderr_bytes)

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


def _check_timeout(timeout_s: float | None) -> float:
    if timeout_s is None:
        return DEFAULT_TIMEOUT_S
    if timeout_s <= 0:
        raise ToolFailure("invalid timeout: it must be more than 0")
    return min(float(timeout_s), MAX_TIMEOUT_S)


def _stdin_bytes(stdin: bytes | str | None) -> bytes | None:
    if stdin is None:
        return None
    return stdin.encode() if isinstance(stdin, str) else bytes(stdin)


def _start_captured(
    command: str | Sequence[str],
    ws: Workspace | None,
    cwd: str | os.PathLike[str] | None,
    env: Mapping[str, str | None] | None,
    shell: str | None,
    stdin: bytes | str | None,
    max_output: int,
) -> tuple[subprocess.Popen[bytes], ProcessTree, bytes | None, Capture, Capture, float]:
    """Start a contained command with piped, non-blocking stdout/stderr and their capped captures
    (what :func:`run` and :func:`run_async` share). Returns the process, its tree tracker, the stdin
    bytes to feed, the two captures and the start time."""
    prep = prepare(
        command, ws=ws, cwd=cwd if cwd is not None or ws is not None else os.getcwd(), env=env, shell=shell
    )
    data_in = _stdin_bytes(stdin)
    started = time.perf_counter()
    proc, tree = spawn(
        prep,
        stdin=subprocess.PIPE if data_in is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    os.set_blocking(proc.stdout.fileno(), False)
    os.set_blocking(proc.stderr.fileno(), False)
    return proc, tree, data_in, Capture(max_output), Capture(max_output), started


def run(
    command: str | Sequence[str],
    *,
    ws: Workspace | None = None,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str | None] | None = None,
    timeout_s: float | None = DEFAULT_TIMEOUT_S,
    max_output: int = DEFAULT_MAX_OUTPUT,
    stdin: bytes | str | None = None,
    shell: str | None = None,
    grace_s: float = KILL_GRACE_S,
    cancel: threading.Event | None = None,
) -> Completed:
    """Run a command to completion, contained (see the module docstring). Blocking.

    ``command``: a shell string (run with ``bash -c``) or an argv list (no shell). ``cwd`` is a
    workspace path when ``ws`` is given (default: the root). ``stdin``: bytes to feed, else
    ``/dev/null``. On timeout the tree is killed and ``timed_out`` is set; output so far is kept.
    ``cancel`` (default: the current tool call's ``cancelled`` event) kills the tree and raises.
    """
    timeout = _check_timeout(timeout_s)
    if cancel is None:
        cancel = _call_cancel_event()
    proc, tree, data_in, out, err, started = _start_captured(command, ws, cwd, env, shell, stdin, max_output)
    assert proc.stdout is not None and proc.stderr is not None
    fds = {proc.stdout.fileno(): out.feed, proc.stderr.fileno(): err.feed}
    pidfd = open_pidfd(proc.pid)
    sel = selectors.DefaultSelector()
    for fd in fds:
        sel.register(fd, selectors.EVENT_READ)
    if pidfd is not None:
        sel.register(pidfd, selectors.EVENT_READ)
    pending_in = memoryview(data_in) if data_in else None
    stdin_pipe = proc.stdin
    in_fd: int | None = None
    if stdin_pipe is not None:
        if pending_in:
            in_fd = stdin_pipe.fileno()
            os.set_blocking(in_fd, False)
            sel.register(in_fd, selectors.EVENT_WRITE)
        else:
            stdin_pipe.close()
    deadline = started + timeout
    exited_at: float | None = None
    timed_out = leftovers = cancelled = False
    open_fds = set(fds)
    try:
        while True:
            if exited_at is None and pidfd is None and proc.poll() is not None:
                exited_at = time.perf_counter()
            if exited_at is not None and not open_fds:
                break
            now = time.perf_counter()
            if now >= deadline:
                timed_out = exited_at is None
                leftovers = not timed_out
                break
            wait = deadline - now
            if exited_at is not None:
                wait = min(wait, exited_at + LEFTOVER_WAIT_S - now)
                if wait <= 0:
                    leftovers = True
                    break
            elif pidfd is None:
                wait = min(wait, 0.02)
            if cancel is not None:
                if cancel.is_set():
                    cancelled = True
                    break
                wait = min(wait, 0.1)
            for key, _ in sel.select(wait):
                fd = key.fd
                if pidfd is not None and fd == pidfd:
                    sel.unregister(pidfd)
                    os.close(pidfd)
                    pidfd = None
                    proc.wait()
                    if exited_at is None:
                        exited_at = time.perf_counter()
                elif fd == in_fd and stdin_pipe is not None and pending_in is not None:
                    try:
                        n = os.write(fd, pending_in[:65536])
                        pending_in = pending_in[n:]
                    except BrokenPipeError:
                        pending_in = None
                    except BlockingIOError:
                        continue
                    if not pending_in:
                        sel.unregister(fd)
                        stdin_pipe.close()
                        in_fd = None
                elif fd in open_fds and read_available(fd, fds[fd]):
                    sel.unregister(fd)
                    open_fds.discard(fd)
    finally:
        killed = 0
        if timed_out or leftovers or cancelled or exited_at is None:
            killed = tree.kill(grace_s)
            drain(open_fds, fds)
        sel.close()
        if pidfd is not None:
            os.close(pidfd)
        _close_pipes(proc)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(5)
        tree.note_limits(proc.returncode, err.value())
        if not (timed_out or leftovers or cancelled):
            sweep_later(tree)
        else:
            tree.forget()
    if cancelled:
        raise ToolFailure(
            "cancelled: the caller cancelled this call (the command was stopped)", kind="conflict"
        )
    return _completed(proc, tree, out, err, started, timed_out=timed_out, killed=killed if leftovers else 0)


def _close_pipes(proc: subprocess.Popen[bytes]) -> None:
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


def _completed(
    proc: subprocess.Popen[bytes],
    tree: ProcessTree,
    out: Capture,
    err: Capture,
    started: float,
    *,
    timed_out: bool,
    killed: int,
) -> Completed:
    """The result of a run that has ended (``killed``: leftover processes killed after it exited)."""
    return Completed(
        stdout_bytes=out.value(),
        stderr_bytes=err.value(),
        exit_code=proc.returncode,
        timed_out=timed_out,
        truncated=out.truncated or err.truncated,
        duration_ms=int((time.perf_counter() - started) * 1000),
        stdout_total=out.total,
        stderr_total=err.total,
        leftovers_killed=killed,
        limit=tree.limit_hit,
    )


def _call_cancel_event() -> threading.Event | None:
    from ...call import current_or_none

    call = current_or_none()
    return call.cancelled if call is not None else None


ProgressFn = Callable[[float, int], Awaitable[None]]
"""``on_progress(elapsed_seconds, output_bytes_so_far)``."""


async def run_async(
    command: str | Sequence[str],
    *,
    ws: Workspace | None = None,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str | None] | None = None,
    timeout_s: float | None = DEFAULT_TIMEOUT_S,
    max_output: int = DEFAULT_MAX_OUTPUT,
    stdin: bytes | str | None = None,
    shell: str | None = None,
    grace_s: float = KILL_GRACE_S,
    on_progress: ProgressFn | None = None,
    progress_every_s: float = 1.0,
) -> Completed:
    """:func:`run` for the event loop. Cancelling the caller kills the tree (then re-raises)."""
    timeout = _check_timeout(timeout_s)
    proc, tree, data_in, out, err, started = _start_captured(command, ws, cwd, env, shell, stdin, max_output)
    assert proc.stdout is not None and proc.stderr is not None
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    open_fds = {out_fd, err_fd}
    sinks = {out_fd: out.feed, err_fd: err.feed}
    pidfd = open_pidfd(proc.pid)
    eof = anyio.Event()
    timed_out = leftovers = False
    finished = False
    killed = 0

    async def pump(fd: int) -> None:
        while fd in open_fds:
            await anyio.wait_readable(fd)
            if read_available(fd, sinks[fd]):
                open_fds.discard(fd)
        if not open_fds:
            eof.set()

    async def feed_stdin() -> None:
        assert proc.stdin is not None
        fd = proc.stdin.fileno()
        os.set_blocking(fd, False)
        view = memoryview(data_in or b"")
        try:
            while view:
                await anyio.wait_writable(fd)
                try:
                    view = view[os.write(fd, view[:65536]) :]
                except BlockingIOError:
                    continue
        except BrokenPipeError:
            pass
        finally:
            proc.stdin.close()

    async def ticker() -> None:
        assert on_progress is not None
        while True:
            await anyio.sleep(progress_every_s)
            await on_progress(time.perf_counter() - started, out.total + err.total)

    async def wait_exit() -> None:
        if pidfd is not None:
            await anyio.wait_readable(pidfd)
        while proc.poll() is None:
            await anyio.sleep(0.02)

    try:
        with anyio.move_on_after(max(0.0, started + timeout - time.perf_counter())) as limit:
            async with anyio.create_task_group() as tg:
                tg.start_soon(pump, out_fd)
                tg.start_soon(pump, err_fd)
                if data_in is not None:
                    tg.start_soon(feed_stdin)
                if on_progress is not None:
                    tg.start_soon(ticker)
                await wait_exit()
                with anyio.move_on_after(LEFTOVER_WAIT_S):
                    await eof.wait()
                leftovers = bool(open_fds)
                tg.cancel_scope.cancel()
        timed_out = limit.cancelled_caught
        finished = True
    finally:
        with anyio.CancelScope(shield=True):
            if not finished or timed_out or leftovers:
                killed = await tree.kill_async(grace_s)
                drain(open_fds, sinks)
            if pidfd is not None:
                os.close(pidfd)
            _close_pipes(proc)
            for _ in range(250):
                if proc.poll() is not None:
                    break
                await anyio.sleep(0.02)
            tree.note_limits(proc.returncode, err.value())
            if finished and not (timed_out or leftovers):
                sweep_later(tree)
            else:
                tree.forget()
    return _completed(proc, tree, out, err, started, timed_out=timed_out, killed=killed if leftovers else 0)

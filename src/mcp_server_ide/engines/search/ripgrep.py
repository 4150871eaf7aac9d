"""Ripgrep: finding the executable and running it contained, with a deadline and an output cap.

Ripgrep comes from the PyPI ``ripgrep`` wheel (``rg`` beside the Python interpreter), else from
PATH. A run stopped by its deadline, its cap or the caller's cancellation returns what it read so
far and says why; the searches mark such answers incomplete.
"""

from __future__ import annotations

import contextlib
import functools
import os
import selectors
import shutil
import signal
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Callable
from pathlib import Path

from ..failures import ToolFailure

DEFAULT_TIMEOUT = 30.0
MAX_OUTPUT = 64 * 1024 * 1024


@functools.cache
def rg_binary() -> str:
    """The ripgrep executable: the wheel's (beside ``sys.executable``), else the one on PATH
    (found once; not found is not remembered)."""
    name = "rg.exe" if os.name == "nt" else "rg"
    candidates = [Path(sys.executable).parent / name]
    with contextlib.suppress(KeyError):
        candidates.append(Path(sysconfig.get_path("scripts")) / name)
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which("rg")
    if found is None:
        raise ToolFailure(
            "unavailable: ripgrep (rg) is not installed; install the PyPI wheel with "
            "`pip install --only-binary :all: ripgrep`",
            kind="unavailable",
        )
    return found


def run(
    args: list[str],
    cwd: Path,
    timeout: float,
    max_output: int,
    on_output: Callable[[bytes], None] | None = None,
) -> tuple[bytes, bytes, int, str | None]:
    """Run ripgrep; returns (stdout, stderr, exit code, why it was stopped early or None).

    With ``on_output``, stdout is handed to it as it arrives (a chunk at a time, on this thread)
    and not kept (the stdout returned is empty). :class:`Running` is the same run for a caller with
    work of its own to do on its thread meanwhile.

    Spawned here with subprocess directly rather than through the process engine: this is the hot
    path of every search (the benchmark's 1.5x budget over a bare ``rg`` leaves ~1 ms), it needs
    no job or pty, and it still follows the process rules: its own process group, killed
    whole on timeout or cap, stdin closed, a scrubbed environment, cwd the root.

    A process group, not a session of its own: where the scheduler groups tasks by session
    (autogroup, on by default in many kernels), a new session is a new group that starts with no
    share of a busy machine; measured here under load, ``rg --files`` of 100,000 files took 2.3x as
    long in a session of its own (1,190 ms against 515 ms).
    """
    running = Running(args, cwd, timeout, max_output, on_output)
    return running.finish()


class Running:
    """ripgrep started, read by the thread that started it: :meth:`poll` takes what it has printed so
    far without waiting, :meth:`finish` reads to the end. For a caller that works while ripgrep
    runs (``project_fs_list`` walks), polling between its own steps rather than reading in another
    thread: a reading thread wakes for every few KB ripgrep prints and takes the interpreter from
    the working one each time, which on a busy machine (every hand-over waits for the scheduler)
    made the walk beside it 2-4x slower."""

    def __init__(
        self,
        args: list[str],
        cwd: Path,
        timeout: float,
        max_output: int,
        on_output: Callable[[bytes], None] | None = None,
    ) -> None:
        try:
            self._proc = subprocess.Popen(
                args,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=_scrubbed_env(),
                process_group=0,
                close_fds=True,
            )
        except OSError as exc:
            raise ToolFailure(
                f"unavailable: could not start ripgrep ({exc.strerror})", kind="unavailable"
            ) from None
        assert self._proc.stdout is not None and self._proc.stderr is not None
        self._stdout = self._proc.stdout.fileno()
        _widen(self._stdout)
        self._open = {self._stdout, self._proc.stderr.fileno()}
        for fd in self._open:
            os.set_blocking(fd, False)
        self._out: list[bytes] = []
        self._err: list[bytes] = []
        self._on_output = on_output
        self._size = 0
        self._max_output = max_output
        self._timeout = timeout
        self._deadline = time.monotonic() + timeout
        self._cancelled = _cancel_event()
        self.reason: str | None = None
        """Why ripgrep was stopped early (its output then is not all), or None."""

    def poll(self) -> None:
        """Take what ripgrep has printed so far, without waiting (nothing once it was stopped)."""
        if self.reason is not None:
            return
        try:
            for fd in list(self._open):
                self._drain(fd)
        except BaseException:
            self.stop()
            raise

    def finish(self) -> tuple[bytes, bytes, int, str | None]:
        """Read to the end (or the deadline, the cap, the caller's cancellation); as :func:`run`."""
        try:
            self._read_to_end()
        except BaseException:
            self.stop()  # on_output failed, or the thread was interrupted: ripgrep stops too
            raise
        if self.reason is not None:
            _kill_group(self._proc)
        return self._close()

    def stop(self) -> None:
        """Stop ripgrep (the caller has no use for the rest)."""
        _kill_group(self._proc)
        self._close()

    def _close(self) -> tuple[bytes, bytes, int, str | None]:
        proc = self._proc
        code = proc.wait()
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()
        proc.stderr.close()
        self._open.clear()
        self._on_output = None  # often a method of the caller, which holds this: no cycle left
        return b"".join(self._out), b"".join(self._err)[:4096], code, self.reason

    def _read_to_end(self) -> None:
        for fd in list(self._open):  # what is there first: ripgrep may be done (the deadline then is moot)
            if self.reason is None:
                self._drain(fd)
        with selectors.DefaultSelector() as sel:
            for fd in self._open:
                sel.register(fd, selectors.EVENT_READ)
            while self._open and self.reason is None:
                left = self._deadline - time.monotonic()
                if left <= 0:
                    self.reason = (
                        f"the search stopped after {self._timeout:g} s (rule: searches have a time limit)"
                    )
                    break
                if self._cancelled is not None and self._cancelled.is_set():
                    self.reason = "the search was cancelled"
                    break
                for key, _ in sel.select(min(left, 0.25)):
                    if not self._drain(key.fd):
                        sel.unregister(key.fd)
                    if self.reason is not None:
                        break

    def _drain(self, fd: int) -> bool:
        """Read what ``fd`` holds; False once it has ended (or the cap was reached)."""
        while True:
            try:
                chunk = os.read(fd, 1 << 20)
            except BlockingIOError:
                return True
            if not chunk:
                self._open.discard(fd)
                return False
            if fd != self._stdout:
                self._err.append(chunk)
                continue
            self._size += len(chunk)
            if self._on_output is not None:
                self._on_output(chunk)
            else:
                self._out.append(chunk)
            if self._size > self._max_output:
                self.reason = (
                    f"the search stopped after {self._max_output // (1024 * 1024)} MB of results "
                    "(rule: search output is capped; narrow the search)"
                )
                return False


PIPE_SIZE = 1 << 20
"""The output pipe's buffer (Linux's default limit for a user): ``rg --files`` of a big tree writes
megabytes, and with the default 64 KB it waits on every 64 KB until this thread, which needs the
GIL while the caller's thread walks (``project_fs_list``), has read it: under load, seconds."""


def _widen(fd: int) -> None:
    with contextlib.suppress(ImportError, AttributeError, OSError):  # not Linux, a lower limit: as is
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_SIZE)


def _cancel_event() -> threading.Event | None:
    """The running call's cancellation event, when there is one (set when the caller cancels)."""
    from ...call import current_or_none

    call = current_or_none()
    return None if call is None else call.cancelled


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


_ENV_KEEP = ("PATH", "HOME", "XDG_CONFIG_HOME", "LANG", "LC_ALL", "LC_CTYPE", "SYSTEMROOT", "TMPDIR")


def _scrubbed_env() -> dict[str, str]:
    """Only what ripgrep needs (HOME/XDG_CONFIG_HOME find the user's global git excludes)."""
    return {k: v for k, v in os.environ.items() if k in _ENV_KEEP}


def rel_name(raw: bytes) -> str:
    if raw.startswith(b"./"):
        raw = raw[2:]
    return _text(raw)


def _text(raw: bytes) -> str:
    # Names that are not UTF-8 decode as ``os`` decodes them (surrogate escapes), so they match the
    # names a folder walk sees and still open; answers show them with U+FFFD (runner._valid_unicode).
    return raw.decode("utf-8", "surrogateescape")

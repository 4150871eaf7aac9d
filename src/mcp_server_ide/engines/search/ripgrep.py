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

    With ``on_output``, stdout is handed to it as it arrives (on this thread, a chunk at a time:
    the caller works on it while ripgrep still runs) and not kept (the stdout returned is empty).

    Spawned here with subprocess directly rather than through the process engine: this is the hot
    path of every search (the benchmark's 1.5x budget over a bare ``rg`` leaves ~1 ms), it needs
    no job or pty, and it still follows the process rules: its own process group, killed
    whole on timeout or cap, stdin closed, a scrubbed environment, cwd the root.

    A process group, not a session of its own: where the scheduler groups tasks by session
    (autogroup, on by default in many kernels), a new session is a new group that starts with no
    share of a busy machine; measured here under load, ``rg --files`` of 100,000 files took 2.3x as
    long in a session of its own (1,190 ms against 515 ms).
    """
    env = _scrubbed_env()
    try:
        proc = subprocess.Popen(
            args,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            process_group=0,
            close_fds=True,
        )
    except OSError as exc:
        raise ToolFailure(
            f"unavailable: could not start ripgrep ({exc.strerror})", kind="unavailable"
        ) from None
    assert proc.stdout is not None and proc.stderr is not None
    _widen(proc.stdout.fileno())
    out: list[bytes] = []
    err: list[bytes] = []
    try:
        reason = _read(proc, out, err, timeout, max_output, on_output)
    except BaseException:
        _kill_group(proc)  # on_output failed, or the thread was interrupted: ripgrep stops too
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()
        raise
    if reason is not None:
        _kill_group(proc)
    code = proc.wait()
    proc.stdout.close()
    proc.stderr.close()
    return b"".join(out), b"".join(err)[:4096], code, reason


def _read(
    proc: subprocess.Popen[bytes],
    out: list[bytes],
    err: list[bytes],
    timeout: float,
    max_output: int,
    on_output: Callable[[bytes], None] | None,
) -> str | None:
    """Read ripgrep's streams until both end; why it must be stopped early, or None."""
    assert proc.stdout is not None and proc.stderr is not None
    size = 0
    reason: str | None = None
    deadline = time.monotonic() + timeout
    cancelled = _cancel_event()
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ, out)
        sel.register(proc.stderr, selectors.EVENT_READ, err)
        open_streams = 2
        while open_streams:
            left = deadline - time.monotonic()
            if left <= 0:
                reason = f"the search stopped after {timeout:g} s (rule: searches have a time limit)"
                break
            if cancelled is not None and cancelled.is_set():
                reason = "the search was cancelled"
                break
            for key, _ in sel.select(min(left, 0.25)):
                chunk = os.read(key.fd, 1 << 20)
                if not chunk:
                    sel.unregister(key.fileobj)
                    open_streams -= 1
                    continue
                if key.data is not out:
                    err.append(chunk)
                else:
                    size += len(chunk)
                    if on_output is not None:
                        on_output(chunk)
                    else:
                        out.append(chunk)
                    if size > max_output:
                        reason = (
                            f"the search stopped after {max_output // (1024 * 1024)} MB of results "
                            "(rule: search output is capped; narrow the search)"
                        )
                        break
            if reason:
                break
    return reason


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

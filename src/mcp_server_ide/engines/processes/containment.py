"""How a child process is started contained and how its whole tree is stopped (SECURITY.md §4).

The interface every runner (one-shot commands, jobs, terminals) goes through:

- :func:`spawn` starts a :class:`Prepared` command in its own session and process group, with
  ``close_fds``, optionally ``PR_SET_PDEATHSIG`` (dies with the server thread that spawned it) and a
  controlling terminal; it returns the ``Popen`` and the :class:`ProcessTree` that tracks it.
- :func:`hosted_argv` wraps a hosted workspace's command in bubblewrap (own user, mount, pid and
  network namespaces; only the project's root visible and writable).
- :class:`ProcessTree` finds everything the command started (same session or group, descendants
  by parent pid, and any process carrying the run's :data:`~.env.TAG_VAR` tag, which catches
  ``setsid -f`` daemons) and kills it: SIGTERM, a grace period, then SIGSTOP + SIGKILL rounds until
  nothing is left.
- :func:`all_trees` lists the trees not yet forgotten (shutdown kills them).

A later design may put each command in its own cgroup or pid namespace; it changes this module.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import secrets
import shutil
import signal
import subprocess
import termios
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

import anyio

from ..failures import ToolFailure
from .env import TAG_VAR
from .procfs import ProcInfo, environ_has, read_proc, scan_proc

if TYPE_CHECKING:
    from ...workspace import Workspace

KILL_GRACE_S = 2.0
"""Time between SIGTERM and SIGKILL."""
LEFTOVER_WAIT_S = 0.05
"""After the main process exits, how long its pipes may stay open before the holders are stopped."""


@dataclass
class Prepared:
    """A command checked and resolved, ready to start (see :func:`.command.prepare`)."""

    argv: list[str]
    cwd: Path
    env: dict[str, str]
    tag: str
    display: str


def hosted_argv(ws: Workspace, argv: list[str], cwd: Path, *, tty: bool = False) -> list[str]:
    """Wrap ``argv`` in bubblewrap for a hosted workspace: only its own root is visible and writable.

    ``tty``: the command runs on our own pty (a terminal), which keeps its session so job control
    works; anything else gets a new session (no terminal to inject keystrokes into)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise ToolFailure(
            "unavailable: commands in a hosted workspace run in a bubblewrap sandbox and `bwrap` is not "
            "installed on this server (rule: hosted commands are always sandboxed)",
            kind="unavailable",
        )
    wrapped = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    # Hide the server's home (credentials), its state and the other projects beside this one.
    hidden = {os.path.expanduser("~"), str(ws.state_home), *(str(Path(r).parent) for r in ws.roots)}
    for folder in sorted(h for h in hidden if h not in ("/", "") and os.path.isdir(h)):
        wrapped += ["--tmpfs", folder]
    for root in ws.roots:
        wrapped += ["--bind", str(root), str(root)]
    wrapped += ["--unshare-all", "--die-with-parent", "--uid", "1000", "--gid", "1000"]
    if not tty:
        wrapped.append("--new-session")
    wrapped += ["--chdir", str(cwd), "--", *argv]
    return wrapped


_ALL_TREES: weakref.WeakSet[ProcessTree] = weakref.WeakSet()
_TREES_LOCK = threading.Lock()


class ProcessTree:
    """One started command and everything it started, found again through /proc."""

    def __init__(self, pid: int, tag: str) -> None:
        self.pid = pid
        self.tag = tag
        self.needle = f"{TAG_VAR}={tag}\x00".encode()
        info = read_proc(pid)
        self.start = info.start if info else 0
        self.sid = pid  # start_new_session: the child leads its own session and group
        self.done = False
        with _TREES_LOCK:
            _ALL_TREES.add(self)

    def members(self, procs: dict[int, ProcInfo] | None = None) -> list[ProcInfo]:
        """Live (non-zombie) processes of this tree."""
        procs = procs if procs is not None else scan_proc()
        protected = {1, os.getpid(), os.getppid()}
        newer = [p for p in procs.values() if p.start >= self.start and p.pid not in protected]
        tree: dict[int, ProcInfo] = {}
        for p in newer:
            if p.sid == self.sid or p.pgid == self.sid or p.pid == self.pid:
                tree[p.pid] = p
        children: dict[int, list[ProcInfo]] = {}
        for p in newer:
            children.setdefault(p.ppid, []).append(p)
        for p in newer:
            if p.pid not in tree and environ_has(p.pid, self.needle):
                tree[p.pid] = p
        todo = list(tree)
        while todo:
            for child in children.get(todo.pop(), ()):
                if child.pid not in tree:
                    tree[child.pid] = child
                    todo.append(child.pid)
        return [p for p in tree.values() if p.state not in ("Z", "X")]

    def signal_all(self, sig: int, members: list[ProcInfo] | None = None) -> list[ProcInfo]:
        """Send ``sig`` to every member (found now unless given); returns the members signalled."""
        members = self.members() if members is None else members
        for p in members:
            with contextlib.suppress(OSError):
                os.kill(p.pid, sig)
        return members

    def kill(self, grace_s: float = KILL_GRACE_S) -> int:
        """SIGTERM the whole tree, wait up to ``grace_s``, then SIGKILL whatever is left. Blocking."""
        count = len(self._term())
        deadline = time.monotonic() + max(0.0, grace_s)
        pause = 0.01
        while time.monotonic() < deadline:
            if not self.members():
                break
            time.sleep(pause)
            pause = min(pause * 2, 0.1)
        self._kill_rounds(time.sleep)
        self.done = True
        return count

    async def kill_async(self, grace_s: float = KILL_GRACE_S) -> int:
        """:meth:`kill` for the event loop (the grace period does not block it)."""
        count = len(self._term())
        deadline = time.monotonic() + max(0.0, grace_s)
        pause = 0.01
        while time.monotonic() < deadline:
            if not self.members():
                break
            await anyio.sleep(pause)
            pause = min(pause * 2, 0.1)
        self._kill_rounds(time.sleep)
        self.done = True
        return count

    def _term(self) -> list[ProcInfo]:
        with contextlib.suppress(OSError):
            os.killpg(self.sid, signal.SIGTERM)
        members = self.signal_all(signal.SIGTERM)
        for p in members:  # a stopped process acts on SIGTERM only once continued
            with contextlib.suppress(OSError):
                os.kill(p.pid, signal.SIGCONT)
        return members

    def _kill_rounds(self, sleep: Callable[[float], None]) -> None:
        for _ in range(50):
            members = self.members()
            if not members:
                return
            # Freeze first so nothing can fork new members between the scan and the kill.
            self.signal_all(signal.SIGSTOP, members)
            again = self.members()
            self.signal_all(signal.SIGKILL, again)
            with contextlib.suppress(OSError):
                os.killpg(self.sid, signal.SIGKILL)
            sleep(0.005)

    def forget(self) -> None:
        """Stop tracking this tree (it is dead, or the sweeper took it over); shutdown skips it."""
        self.done = True
        with _TREES_LOCK:
            _ALL_TREES.discard(self)


def all_trees() -> list[ProcessTree]:
    """The trees started and not yet forgotten (what shutdown must kill)."""
    with _TREES_LOCK:
        return list(_ALL_TREES)


def new_tag() -> str:
    """A fresh tag for one command's tree (its value of :data:`~.env.TAG_VAR`)."""
    return secrets.token_hex(8)


_libc: ctypes.CDLL | None = None
with contextlib.suppress(OSError):
    _libc = ctypes.CDLL(None, use_errno=True)
_PR_SET_PDEATHSIG = 1

Stream = int | IO[bytes] | None
"""What a child's stdin, stdout or stderr may be: ``subprocess.PIPE``/``DEVNULL``, an fd, a file."""


DEFAULT_SIGNALS = tuple(
    sig
    for sig in (
        signal.SIGINT, signal.SIGQUIT, signal.SIGTERM, signal.SIGHUP, signal.SIGTSTP, signal.SIGTTIN,
        signal.SIGTTOU, signal.SIGCHLD, signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM, signal.SIGWINCH,
    )
)  # fmt: skip
"""Signals a child starts with at their default action, whatever this server ignores: an ignored
signal stays ignored across exec, so a server started with SIGINT ignored (by ``nohup``, a launcher,
a test runner) would give terminals where ctrl+c interrupts nothing."""


def _inherits_signals() -> bool:
    """Whether a child would inherit an ignored or blocked signal of this thread (then it needs a reset)."""
    if signal.pthread_sigmask(signal.SIG_BLOCK, ()):
        return True
    return any(signal.getsignal(sig) == signal.SIG_IGN for sig in DEFAULT_SIGNALS)


def _make_preexec(*, pdeathsig: bool, ctty: bool) -> Callable[[], None] | None:
    """What the child runs before exec, or None when it needs nothing (the faster spawn path)."""
    if not pdeathsig and not ctty and not _inherits_signals():
        return None
    prctl: Callable[..., int] | None = getattr(_libc, "prctl", None) if pdeathsig else None
    reset: Callable[..., int] | None = getattr(_libc, "signal", None)
    parent = os.getpid()

    def preexec() -> None:  # runs in the child between fork and exec: keep it tiny
        if reset is not None:  # libc's own: Python's signal.signal refuses outside the main thread
            for sig in DEFAULT_SIGNALS:
                reset(sig, 0)  # SIG_DFL
        signal.pthread_sigmask(signal.SIG_SETMASK, ())
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if os.getppid() != parent:
                os._exit(1)
        if ctty:
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    return preexec


def spawn(
    prep: Prepared,
    *,
    stdin: Stream,
    stdout: Stream,
    stderr: Stream,
    pdeathsig: bool = False,
    ctty: bool = False,
) -> tuple[subprocess.Popen[bytes], ProcessTree]:
    """Start ``prep`` in its own session and process group (all other fds closed) and track its tree.

    ``pdeathsig``: the child gets SIGKILL when the *calling thread* ends, so call it from a thread
    that lives as long as the child (jobs, terminals). ``ctty``: stdin (a pty) becomes the child's
    controlling terminal. A missing or non-executable program is a ToolFailure naming it.
    """
    try:
        proc = subprocess.Popen(
            prep.argv,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            cwd=prep.cwd,
            env=prep.env,
            start_new_session=True,
            close_fds=True,
            preexec_fn=_make_preexec(pdeathsig=pdeathsig, ctty=ctty),
        )
    except FileNotFoundError:
        raise ToolFailure(
            f"not found: the program {os.path.basename(prep.argv[0])!r} is not installed or not on PATH",
            kind="not_found",
        ) from None
    except PermissionError:
        raise ToolFailure(
            f"refused: the program {os.path.basename(prep.argv[0])!r} is not executable", kind="refused"
        ) from None
    except OSError as exc:
        raise ToolFailure(f"could not start the command: {exc.strerror}", kind="unavailable") from None
    return proc, ProcessTree(proc.pid, prep.tag)


def open_pidfd(pid: int) -> int | None:
    """A pidfd that becomes readable when ``pid`` exits, or None where the kernel has none."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None

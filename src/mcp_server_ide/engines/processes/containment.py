"""How a child process is started contained and how its whole tree is stopped (SECURITY.md §4).

The interface every runner (one-shot commands, jobs, terminals) goes through:

- :func:`spawn` starts a :class:`Prepared` command in its own session and process group, with
  ``close_fds``, optionally ``PR_SET_PDEATHSIG`` (dies with the server thread that spawned it) and a
  controlling terminal; it returns the ``Popen`` and the :class:`ProcessTree` that tracks it.
- :func:`hosted_argv` wraps a hosted workspace's command in its sandbox (:mod:`.bubblewrap`: own
  uid, mount, pid and network namespaces; only the project, at ``/workspace``, visible and writable).
- :class:`ProcessTree` finds everything the command started (same session or group, descendants
  by parent pid, and any process carrying the run's :data:`~.env.TAG_VAR` tag, which catches
  ``setsid -f`` daemons) and kills it: SIGTERM, a grace period, then SIGSTOP + SIGKILL rounds until
  nothing is left.
- :func:`all_trees` lists the trees not yet forgotten (shutdown kills them).

Containment that the child cannot undo, best first (:func:`contain_argv`, the one place a contained
process starts, used by commands, jobs, terminals and language servers alike):

1. its own cgroup (:mod:`.cgroups`, v1 or v2): a start-up prelude (``/bin/sh``, ~1 ms) writes its
   own pid into the cgroup's ``cgroup.procs`` and sets the rlimits of :mod:`.limits` *before* it
   execs the command, so nothing the command runs is ever outside; the tree's kill ends with
   killing the cgroup (:meth:`.cgroups.Cgroup.kill`), whatever its members did to their session,
   parent or environment;
2. else its own pid namespace (``bwrap --unshare-pid --die-with-parent``): killing the outer
   bwrap kills the namespace's init, and the kernel kills every process in it;
3. else ``PR_SET_CHILD_SUBREAPER`` on the server: orphans re-parent to the server instead of init,
   and shutdown kills every child of the server, whatever tree it came from.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import fcntl
import os
import secrets
import shlex
import shutil
import signal
import subprocess
import termios
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

import anyio

from ..failures import ToolFailure
from . import cgroups
from .env import TAG_VAR
from .limits import CommandLimits, Limits, output_hit, signal_hit, ulimit_lines
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
    limits: Limits | None = None
    """The workspace's limits (None: the defaults); ``workspace``: whose totals the command counts in."""
    workspace: object | None = None


def hosted_argv(
    ws: Workspace, argv: list[str], cwd: Path, *, tty: bool = False, shared: Sequence[Path] = ()
) -> list[str]:
    """Wrap ``argv`` in the hosted workspace's sandbox (:func:`.bubblewrap.wrap`): its own uid, pid
    and network namespaces, only its project visible (at ``/workspace``) and writable.

    ``tty``: the command runs on our own pty (a terminal), which keeps its session so job control
    works; anything else gets a new session (no terminal to inject keystrokes into)."""
    from .bubblewrap import wrap

    return wrap(ws, argv, cwd, tty=tty, shared=shared)


_ALL_TREES: weakref.WeakSet[ProcessTree] = weakref.WeakSet()
_TREES_LOCK = threading.Lock()


class ProcessTree:
    """One started command and everything it started, found again through /proc."""

    def __init__(self, pid: int, tag: str, group: Group | None = None) -> None:
        self.pid = pid
        self.tag = tag
        self.group = group
        self.limit_hit: str | None = None
        """The resource limit the command ran into, in words (see :meth:`note_limits`)."""
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
        if self.group is not None:
            for pid in self.group.pids():
                info = procs.get(pid) or read_proc(pid)
                if info is not None and pid not in protected:
                    tree[pid] = info
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

    def note_limits(self, returncode: int | None, stderr: bytes = b"") -> str | None:
        """Record (and return) the limit the command hit: its cgroup's counters, its end signal,
        its error output (``File too large``)."""
        if self.group is not None:
            self.limit_hit = (
                self.limit_hit or self.group.limit_hit(returncode) or output_hit(stderr, self.group.limits)
            )
        return self.limit_hit

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
        if self.group is not None:
            self.group.kill()
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
        if self.group is not None:
            self.group.remove()


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


class Group:
    """A command's containment that its members cannot leave: a cgroup, or a pid namespace."""

    def __init__(
        self,
        limits: CommandLimits,
        cgroup: cgroups.Cgroup | None = None,
        parent: cgroups.Cgroup | None = None,
    ) -> None:
        self.limits = limits
        self.cgroup = cgroup
        self.parent = parent
        """The workspace's cgroup (its totals), with its counters when the command started."""
        self._parent_since = parent.counters() if parent is not None else (0, 0)
        self._checked = False
        self._cgroup_hit: str | None = None
        self.pidns = False
        self.pidns_leader: int | None = None
        """pidns: the outer bwrap's pid (killing it kills the whole namespace)."""

    def pids(self) -> set[int]:
        if self.cgroup is not None:
            return self.cgroup.pids()
        return set()

    def kill(self) -> None:
        if self.cgroup is not None:
            self._snapshot()  # before the kill, which stops forks with pids.max 0
            self.cgroup.kill()
        elif self.pidns_leader is not None:
            with contextlib.suppress(OSError):
                os.kill(self.pidns_leader, signal.SIGKILL)

    def _snapshot(self) -> str | None:
        if not self._checked and self.cgroup is not None:
            self._checked = True
            parent_hit = self.parent.limit_hit(self._parent_since, "workspace") if self.parent else None
            own_hit = self.cgroup.limit_hit()
            if own_hit and own_hit.startswith("pids") and self.parent is not None and not parent_hit:
                # cgroup v1 counts a refused fork in the forking cgroup only, whichever limit
                # refused it: when the workspace's is the lower one, it is the one that was hit.
                own, total = self.cgroup.pids_max(), self.parent.pids_max()
                if total is not None and (own is None or total < own):
                    own_hit = f"workspace pids limit {total} reached (fork failed)"
            self._cgroup_hit = parent_hit or own_hit
        return self._cgroup_hit

    def limit_hit(self, returncode: int | None) -> str | None:
        return self._snapshot() or signal_hit(returncode, self.limits)

    def remove(self) -> None:
        if self.cgroup is not None:
            self.cgroup.remove()


_WS_GROUPS: weakref.WeakKeyDictionary[object, cgroups.Cgroup] = weakref.WeakKeyDictionary()
_SERVER_GROUP: dict[str, cgroups.Cgroup] = {}


def _workspace_cgroup(
    hierarchy: cgroups.Hierarchy, limits: Limits, workspace: object | None
) -> cgroups.Cgroup | None:
    """The cgroup holding a workspace's commands, with its totals (made once a workspace)."""
    with _TREES_LOCK:
        group = _WS_GROUPS.get(workspace) if workspace is not None else _SERVER_GROUP.get("default")
        if group is not None:
            return group
        group = cgroups.Cgroup.create(hierarchy, hierarchy.new_dir_name())
        if group is None:
            return None
        group.set_limits(limits.workspace_pids, limits.workspace_memory, limits.workspace_cpus)
        if workspace is not None:
            _WS_GROUPS[workspace] = group
        else:
            _SERVER_GROUP["default"] = group
        return group


def workspace_busy(workspace: object) -> bool:
    """Whether anything runs in the workspace's cgroup (False without one)."""
    group = _WS_GROUPS.get(workspace)
    return bool(group is not None and group.pids())


def stop_workspace(workspace: object, reason: str) -> int:
    """Kill every command of the workspace (the trees in its cgroup), each reporting ``reason`` as
    the limit it hit; returns how many were stopped. Blocking."""
    group = _WS_GROUPS.get(workspace)
    if group is None:
        return 0
    mine = [
        t
        for t in all_trees()
        if not t.done
        and t.group is not None
        and t.group.cgroup is not None
        and any(d.parent == group.dirs.get(k) for k, d in t.group.cgroup.dirs.items())
    ]
    for tree in mine:
        tree.limit_hit = reason
    for tree in mine:
        tree.kill(grace_s=0)
    return len(mine)


def _bwrap_pidns() -> str | None:
    return shutil.which("bwrap") if cgroups.mode() in ("auto", "pidns") else None


def _check_program(argv: list[str], cwd: Path, env: dict[str, str]) -> None:
    """The program's not-found/not-executable failures, checked here: the prelude runs it by exec."""
    prog = argv[0]
    path = (cwd / prog) if "/" in prog else None
    if path is None:
        found = shutil.which(prog, path=env.get("PATH", os.defpath))
        if found is None:
            if shutil.which(prog, mode=os.F_OK, path=env.get("PATH", os.defpath)):
                raise ToolFailure(f"refused: the program {prog!r} is not executable", kind="refused")
            raise ToolFailure(
                f"not found: the program {prog!r} is not installed or not on PATH", kind="not_found"
            )
        return
    if not path.exists():
        raise ToolFailure(
            f"not found: the program {os.path.basename(prog)!r} is not installed or not on PATH",
            kind="not_found",
        )
    if path.is_dir() or not os.access(path, os.X_OK):
        raise ToolFailure(
            f"refused: the program {os.path.basename(prog)!r} is not executable", kind="refused"
        )


PRELUDE_NAME = "mcp-ide-contain"
"""``$0`` of the start-up prelude (seen in ``ps`` for the ~1 ms before it execs the command)."""


def contain_argv(
    argv: list[str], tag: str, limits: Limits | None = None, workspace: object | None = None
) -> tuple[list[str], Group]:
    """``argv`` wrapped so that it starts contained (its cgroup joined and rlimits set before its
    program runs), and the :class:`Group` that kills it. The one place containment is chosen."""
    limits = limits if limits is not None else Limits()
    cmd = limits.command
    hierarchy = cgroups.detect() if cgroups.mode() in ("auto", "cgroup-v1", "cgroup-v2") else None
    cgroup = parent = None
    if hierarchy is not None:
        parent = _workspace_cgroup(hierarchy, limits, workspace)
        cgroup = cgroups.Cgroup.create(hierarchy, f"cmd-{tag}", parent) if parent is not None else None
        if cgroup is not None:
            cgroup.set_limits(cmd.pids, cmd.memory)
    group = Group(cmd, cgroup, parent if cgroup is not None else None)
    lines: list[str] = ulimit_lines(
        cmd,
        cgroup_pids=cgroup is not None and cgroup.has("pids"),
        cgroup_memory=cgroup is not None and cgroup.has("memory"),
    )
    if cgroup is not None:
        lines += [f"echo $$ >{shlex.quote(f)}" for f in cgroup.procs_files]
    elif (bwrap := _bwrap_pidns()) is not None:
        argv = [bwrap, "--dev-bind", "/", "/", "--unshare-pid", "--die-with-parent", "--", *argv]
        group.pidns = True
    else:
        set_subreaper()
    if not lines:
        return argv, group
    script = " && ".join([*lines, 'exec "$@"'])
    return ["/bin/sh", "-c", script, PRELUDE_NAME, *argv], group


_PR_SET_CHILD_SUBREAPER = 36
_subreaper = False


def set_subreaper() -> None:
    """Make this server the reaper of its orphans (the last line: shutdown then kills every child)."""
    global _subreaper
    if not _subreaper and _libc is not None:
        _subreaper = _libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
        if _subreaper:
            atexit.register(kill_orphans)


def kill_orphans() -> None:
    """With the subreaper on (no cgroups, no bwrap), SIGKILL every live child of this server, the
    orphans it took in among them (server exit only: a child left then has nothing to finish)."""
    if not _subreaper:
        return
    me = os.getpid()
    for p in scan_proc().values():
        if p.ppid == me and p.state not in ("Z", "X"):
            with contextlib.suppress(OSError):
                os.kill(p.pid, signal.SIGKILL)


def spawn(
    prep: Prepared,
    *,
    stdin: Stream,
    stdout: Stream,
    stderr: Stream,
    pdeathsig: bool = False,
    ctty: bool = False,
) -> tuple[subprocess.Popen[bytes], ProcessTree]:
    """Start ``prep`` contained (:func:`contain_argv`) in its own session and process group (all
    other fds closed) and track its tree.

    ``pdeathsig``: the child gets SIGKILL when the *calling thread* ends, so call it from a thread
    that lives as long as the child (jobs, terminals). ``ctty``: stdin (a pty) becomes the child's
    controlling terminal. A missing or non-executable program is a ToolFailure naming it.
    """
    _check_program(prep.argv, prep.cwd, prep.env)
    argv, group = contain_argv(prep.argv, prep.tag, prep.limits, prep.workspace)
    try:
        proc = subprocess.Popen(
            argv,
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
        group.remove()
        raise ToolFailure(
            f"not found: the program {os.path.basename(prep.argv[0])!r} is not installed or not on PATH",
            kind="not_found",
        ) from None
    except PermissionError:
        group.remove()
        raise ToolFailure(
            f"refused: the program {os.path.basename(prep.argv[0])!r} is not executable", kind="refused"
        ) from None
    except OSError as exc:
        group.remove()
        raise ToolFailure(f"could not start the command: {exc.strerror}", kind="unavailable") from None
    if group.pidns:
        group.pidns_leader = proc.pid
    return proc, ProcessTree(proc.pid, prep.tag, group)


def open_pidfd(pid: int) -> int | None:
    """A pidfd that becomes readable when ``pid`` exits, or None where the kernel has none."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None

"""Starting a language server so that nothing outlives us, and measuring what it uses.

- Each server runs in its own session and process group (``start_new_session``), so one
  ``killpg`` ends the server and every helper it started (tsserver, typings installer...).
- ``PR_SET_PDEATHSIG(SIGKILL)`` is set in the child before exec. The kernel ties that signal to
  the *thread* that forked, not the process: children are therefore forked from one long-lived
  spawner thread, never from a worker thread that may exit while the server still runs.
- Grandchildren do not inherit the parent-death signal; a server's helpers exit when their stdin
  pipe closes (tsserver does), and :func:`kill_group` reaps whatever is left in the group.
- Memory: node servers reserve far more address space than they use, so ``RLIMIT_AS`` would break
  them; :func:`group_rss` sums the resident memory of the whole process group for a watchdog
  instead (and node servers get ``--max-old-space-size`` as a first line of defence).
- Environment: a server gets a copy of ours without tokens and secrets (:func:`server_env`).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import queue
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..processes.containment import Group, contain_argv, new_tag
from ..processes.limits import CommandLimits, Limits

if TYPE_CHECKING:
    from ...workspace import Workspace

PR_SET_PDEATHSIG = 1

_libc: Any = None


def _set_pdeathsig() -> None:
    """Runs in the child between fork and exec: die with SIGKILL when the forking thread dies."""
    global _libc
    try:
        if _libc is None:
            _libc = ctypes.CDLL(None, use_errno=True)
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except Exception:
        pass
    # The parent may already be gone (a race between fork and prctl): then exit at once.
    if os.getppid() == 1:
        os._exit(1)


# Loaded in the parent once, so the child's preexec_fn does not import or dlopen after fork.
try:
    _libc = ctypes.CDLL(None, use_errno=True)
except OSError:  # pragma: no cover - not Linux
    _libc = None


class _Spawner:
    """A thread that lives as long as the process and forks every server."""

    def __init__(self) -> None:
        self._jobs: queue.Queue[tuple[Callable[[], Any], Future[Any]]] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="lsp-spawner", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            fn, fut = self._jobs.get()
            if not fut.set_running_or_notify_cancel():
                continue
            try:
                fut.set_result(fn())
            except BaseException as exc:
                fut.set_exception(exc)

    def call(self, fn: Callable[[], Any]) -> Any:
        fut: Future[Any] = Future()
        self._jobs.put((fn, fut))
        return fut.result()


_spawner: _Spawner | None = None
_spawner_lock = threading.Lock()


def _get_spawner() -> _Spawner:
    global _spawner
    with _spawner_lock:
        if _spawner is None:
            _spawner = _Spawner()
        return _spawner


_SCRUB = ("MCP_IDE_TOKEN", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY")


def server_env(extra: dict[str, str]) -> dict[str, str]:
    """Our environment without tokens, secrets and ``NODE_OPTIONS``, plus the adapter's ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in _SCRUB and not k.endswith(("_TOKEN", "_SECRET"))}
    env.pop("NODE_OPTIONS", None)
    env.update(extra)
    return env


def program_folders(argv: list[str]) -> list[Path]:
    """The folders a server's program and scripts (absolute paths in ``argv``) need to be seen in a
    sandbox: a file inside a ``node_modules`` is shown with the folder that holds that
    ``node_modules``, anything else with its own folder."""
    folders: list[Path] = []
    for arg in argv:
        if not arg.startswith("/") or not os.path.exists(arg):
            continue
        path = Path(os.path.realpath(arg))
        parts = path.parts
        folder = Path(*parts[: parts.index("node_modules")]) if "node_modules" in parts else path.parent
        if folder not in folders:
            folders.append(folder)
    return folders


_GROUPS: dict[int, Group] = {}
"""A running server's pid → its containment (cgroup or pid namespace), killed by :func:`kill_group`."""


def spawn(
    argv: list[str], cwd: str, env: dict[str, str], ws: Workspace | None = None
) -> subprocess.Popen[bytes]:
    """Start ``argv`` with pipes, contained (its own cgroup, see ``processes.containment``) and in
    its own process group, dying with us. A missing program is an OSError, as before the prelude.

    A hosted workspace's server runs in the project's sandbox (``processes.bubblewrap``, with the
    folders of its program shown read-only), as the project's uid, counted in the project's limits,
    with the sandbox's clean environment plus ``env``'s entries that the launch itself set."""
    prog = argv[0] if "/" in argv[0] else shutil.which(argv[0], path=env.get("PATH", os.defpath))
    if prog is None or not os.path.exists(os.path.join(cwd, prog)):
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), argv[0])
    # No memory limit here: node reserves far more than it uses (see above); the watchdog holds it.
    limits = Limits(command=CommandLimits(memory=None))
    tag = new_tag()
    if ws is not None and ws.policy.hosted:
        from ..processes.bubblewrap import sandbox_env, wrap

        base = ws.policy.limits or Limits()
        limits = Limits(
            command=CommandLimits(pids=base.command.pids, memory=None, file_size=base.command.file_size),
            workspace_pids=base.workspace_pids,
            workspace_memory=base.workspace_memory,
            workspace_cpus=base.workspace_cpus,
        )
        argv = wrap(ws, argv, Path(cwd), readonly=program_folders(argv))
        env = sandbox_env(env, tag=tag)
    wrapped, group = contain_argv(argv, tag, limits, workspace=ws)

    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            wrapped,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=_set_pdeathsig,
            close_fds=True,
        )

    try:
        proc: subprocess.Popen[bytes] = _get_spawner().call(start)
    except BaseException:
        group.remove()
        raise
    if group.pidns:
        group.pidns_leader = proc.pid
    _GROUPS[proc.pid] = group
    return proc


def group_members(pgid: int) -> list[int]:
    """Every live process of a process group (read from /proc)."""
    members = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return members
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # pid (comm) state ppid pgrp ... ; comm may contain spaces and parentheses
        rest = stat[stat.rfind(b")") + 2 :].split()
        if len(rest) > 2 and int(rest[2]) == pgid and rest[0] != b"Z":
            members.append(int(name))
    return members


def rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            fields = f.read().split()
        return int(fields[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return 0


def group_rss(pgid: int) -> int:
    """Resident memory of a whole process group, in bytes."""
    return sum(rss_bytes(pid) for pid in group_members(pgid))


def kill_group(proc: subprocess.Popen[bytes], grace: float = 2.0) -> None:
    """End a server and everything in its process group: SIGTERM, then SIGKILL after ``grace``."""
    pgid = proc.pid
    for stream in (proc.stdin,):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace)
    # Helpers may still be alive in the group even when the leader exited.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace)
    group = _GROUPS.pop(proc.pid, None)
    if group is not None:  # what left the group (setsid, a double fork) is still in the cgroup
        group.kill()
        group.remove()
    for stream in (proc.stdout, proc.stderr):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass

"""Nothing outlives the server: every job, terminal, running command and language server is
killed at exit, with their cgroups (or, without cgroups, every child the subreaper took in).

Job and terminal services register here; :func:`kill_all` closes them and kills every tree not
yet forgotten, at interpreter exit (``atexit``) and, after :func:`install_exit_hooks`, on SIGTERM
and SIGHUP.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import threading
import weakref
from types import FrameType
from typing import Protocol

from . import cgroups
from .containment import all_trees, kill_orphans
from .procfs import scan_proc


class Service(Protocol):
    """A workspace service that owns children (jobs, terminals): ``close`` kills them all."""

    def close(self) -> None: ...


_SERVICES: weakref.WeakSet[Service] = weakref.WeakSet()
_SERVICES_LOCK = threading.Lock()


def register_service(service: Service) -> None:
    """Have :func:`kill_all` close ``service`` at shutdown (held weakly: a dropped service is gone)."""
    with _SERVICES_LOCK:
        _SERVICES.add(service)
    _ensure_atexit()


def kill_all() -> None:
    """Kill every job, terminal and running command of every workspace (server shutdown)."""
    with _SERVICES_LOCK:
        services = list(_SERVICES)
    trees = all_trees()
    threads = [threading.Thread(target=s.close, daemon=True) for s in services]
    for t in threads:
        t.start()
    with contextlib.suppress(Exception):
        cgroups.kill_everything()  # every cgroup of this server: what escaped a tree too
    for tree in trees:
        if not tree.done:
            with contextlib.suppress(Exception):
                tree.signal_all(signal.SIGKILL)
    for t in threads:
        t.join(10)
    # Last sweep: anything a closing service or a finished command left behind.
    with contextlib.suppress(Exception):
        procs = scan_proc()
        for tree in trees:
            members = tree.members(procs)
            if members:
                tree.signal_all(signal.SIGKILL, members)
        kill_orphans()
    with contextlib.suppress(Exception):
        cgroups.kill_everything()


_atexit_done = False


def _ensure_atexit() -> None:
    global _atexit_done
    if not _atexit_done:
        _atexit_done = True
        atexit.register(kill_all)


def install_exit_hooks() -> None:
    """Kill every child on SIGTERM/SIGHUP as well as at normal exit. Call from the main thread."""
    _ensure_atexit()

    def handler(signum: int, _frame: FrameType | None) -> None:
        kill_all()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        previous = signal.getsignal(sig)
        if previous in (signal.SIG_DFL, None):
            signal.signal(sig, handler)

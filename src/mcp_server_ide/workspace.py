"""The workspace: the unit of state.

One workspace is one root folder (or several, for a multi-root VS Code workspace) with its
policy (protected paths, trust, read-only, what to do when a confirmation cannot be asked)
and its per-workspace services (editor model, jobs, language servers, journal...).
Services are created lazily, once per workspace, with :meth:`Workspace.service`, so this
module knows none of them by name. In hosted mode a server holds many workspaces and
nothing crosses between them.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar, cast, runtime_checkable

if TYPE_CHECKING:
    from .engines.processes.limits import Limits

DEFAULT_PROTECTED: tuple[str, ...] = (".git", "node_modules")

ConfirmPolicy = Literal["refuse", "allow"]

S = TypeVar("S")


@dataclass(frozen=True)
class Policy:
    """What a workspace allows."""

    protected: tuple[str, ...] = ()
    """Extra protected write paths relative to the root (e.g. ``src/brand``), beyond ``.git`` and ``node_modules``."""
    read_only: bool = False
    trusted: bool = True
    """An untrusted workspace runs no git hooks/filters and asks before running its own run configurations."""
    confirm_policy: ConfirmPolicy = "refuse"
    """What a risky operation does when the client cannot be asked (no elicitation)."""
    hosted: bool = False
    """A project of the hosted service: everything that runs code runs in its bubblewrap sandbox
    (``engines/processes/bubblewrap.py``), git never runs its hooks, filters or fsmonitor."""
    network: bool = False
    """Hosted: whether the sandbox keeps the network (off: its own empty network namespace)."""
    sandbox_uid: int | None = None
    """Hosted: the uid (and gid) the project's processes run as and its files belong to (None: one
    derived from the root's path, see :func:`~.engines.processes.bubblewrap.project_uid`)."""
    disk_quota: int | None = None
    """Bytes the workspace's files may take (None: no quota); write tools refuse past it and
    sandboxed commands get it as their file size limit (``engines/quota.py``)."""
    job_grace_s: float = 300.0
    """How long a job started in a client session keeps running after that session ends (HTTP
    DELETE, a closed connection), so the client can come back for its output; then it is killed."""
    limits: Limits | None = None
    """What each command may use and what all of them together may (``engines/processes/limits.py``;
    None: its defaults)."""


def default_state_home() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "mcp-server-ide"


@runtime_checkable
class FollowsRoots(Protocol):
    """A service that can follow a change of roots (see :meth:`Workspace.set_roots`)."""

    def follow_roots(self, roots: list[Path]) -> bool: ...


@dataclass(eq=False)
class Workspace:
    roots: list[Path]
    policy: Policy = field(default_factory=Policy)
    state_home: Path = field(default_factory=default_state_home)
    name: str = ""
    _services: dict[object, object] = field(default_factory=dict, repr=False)
    """Service key (its factory, unless given) -> the instance :meth:`service` made."""
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False)

    def __post_init__(self) -> None:
        if not self.roots:
            raise ValueError("a workspace needs at least one root")
        self.roots = [Path(os.path.realpath(r)) for r in self.roots]
        if not self.name:
            self.name = self.root.name

    @classmethod
    def open(
        cls,
        root: str | os.PathLike[str],
        *,
        policy: Policy | None = None,
        state_home: Path | None = None,
        name: str = "",
    ) -> Workspace:
        path = Path(root)
        if not path.is_dir():
            raise ValueError(f"workspace folder does not exist or is not a folder: {path}")
        return cls(
            roots=[path],
            policy=policy if policy is not None else Policy(),
            state_home=state_home if state_home is not None else default_state_home(),
            name=name,
        )

    @property
    def root(self) -> Path:
        """The primary root: relative paths resolve here unless they name another root's folder."""
        return self.roots[0]

    @property
    def state_dir(self) -> Path:
        """This workspace's own folder for state kept across restarts, outside the workspace."""
        path = self.state_path
        path.mkdir(parents=True, exist_ok=True)
        return path

    @property
    def state_path(self) -> Path:
        """Where :attr:`state_dir` is, without making it."""
        key = hashlib.sha256(str(self.root).encode()).hexdigest()[:16]
        return self.state_home / "workspaces" / f"{self.root.name}-{key}"

    @property
    def protected(self) -> tuple[str, ...]:
        return DEFAULT_PROTECTED + tuple(self.policy.protected)

    def service(self, factory: Callable[[Workspace], S], key: Hashable = None) -> S:
        """The workspace's one instance of a service, created on first use with ``factory(self)``."""
        key = key if key is not None else factory
        with self._lock:
            if key not in self._services:
                self._services[key] = factory(self)
            return cast(S, self._services[key])  # made by this factory (or for this key) above

    def services(self) -> list[object]:
        with self._lock:
            return list(self._services.values())

    def set_roots(self, roots: list[Path]) -> None:
        """Replace the roots (MCP roots/list_changed), keeping the work of the roots still there.

        A service with a ``follow_roots(roots) -> bool`` method is told the new roots: it stops what
        belonged to a root that is gone (a job, a terminal) and answers whether it stays (a language
        server stays while its root is still the primary one). Every other service is closed and
        made again, for the new roots, on next use. May wait for stopped processes to end."""
        new = [Path(os.path.realpath(r)) for r in roots]
        if not new:
            raise ValueError("a workspace needs at least one root")
        with self._lock:
            if new == self.roots:
                return
            self.roots = new
            self.name = self.root.name
            following = {k: s for k, s in self._services.items() if isinstance(s, FollowsRoots)}
            dropped = [s for k, s in self._services.items() if k not in following]
            self._services = dict(following)
        for key, svc in following.items():
            try:
                stays = bool(svc.follow_roots(new))
            except Exception:  # a service that cannot follow is made again, as one without the method
                stays = False
            if not stays:
                with self._lock:
                    if self._services.get(key) is svc:
                        del self._services[key]
                dropped.append(svc)
        _close_all(dropped)

    def close(self) -> None:
        """Stop every service that has a ``close`` (jobs, terminals, language servers)."""
        with self._lock:
            services = list(self._services.values())
            self._services.clear()
        _close_all(services)


def _close_all(services: list[object]) -> None:
    for svc in services:
        close = getattr(svc, "close", None)
        if callable(close):
            with contextlib.suppress(Exception):  # a failing service must not keep the others alive
                close()

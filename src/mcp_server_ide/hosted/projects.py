"""Projects as workspaces: each project's files in their own folder under the data folder, each
open project one :class:`~..workspace.Workspace` confined to it, with its own sandbox: its uid from
its number, its disk quota, its network switch and its limits (:func:`.sandbox.project_policy`).

The doors ask :meth:`HostedProjects.for_context` for a request's workspace: the project the
hosted router (:mod:`.app`) found for the caller and put in the request's scope, so a tool never
sees another project. Deleting a project closes its workspace (jobs, terminals, language servers)
and removes its folder.

Idle projects are evicted: a workspace no request has used for ``idle_evict`` seconds, with no
request in flight, no running job, no terminal running a command and no live debug session, is
closed: its language servers, watchers, caches and idle terminals' shells are released. Past
``max_open`` open workspaces, the least recently used such one is closed at once. The next request
opens it again; what a project keeps (its files, journal, editor state) is on disk. A project
holding work stays open (its language servers still stop when idle, ``MCP_IDE_LSP_IDLE``).
"""

from __future__ import annotations

import logging
import os
import shutil
import tarfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

from ..engines.failures import ToolFailure
from ..workspace import Policy, Workspace
from .sandbox import SandboxSettings, project_policy
from .store import Project, Store

SCOPE_KEY = "mcp_ide.project"
"""Where the hosted router puts the request's :class:`~.store.Project` in the ASGI scope."""
REF_KEY = "mcp_ide.hosted.ref"
"""The workspace service key of its :class:`ProjectRef` (what the owner tools read)."""

NO_SUCH_PROJECT = "no such project"
DEFAULT_IDLE_EVICT_S = 600.0
DEFAULT_MAX_OPEN = 100

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ProjectRef:
    """Which project a workspace is, whose, and the service it belongs to."""

    project: Project
    projects: HostedProjects


def check_name(name: str) -> str:
    name = name.strip()
    if not name or len(name) > 128 or not name.isprintable():
        raise ToolFailure("invalid project name: 1-128 printable characters", kind="invalid")
    return name


class HostedProjects:
    def __init__(
        self, store: Store, data: Path, policy: Policy, sandbox: SandboxSettings | None = None
    ) -> None:
        self.store = store
        self.sandbox = sandbox or SandboxSettings()
        self.data = data
        self.root = data / "projects"
        self.state_home = data / "state"
        self.policy = policy
        self.root.mkdir(parents=True, exist_ok=True)
        self._open: dict[str, Workspace] = {}
        self._deleted: set[str] = set()
        """Projects deleted while this process runs: a request let in before is refused from then on."""
        self._lock = threading.Lock()
        self._used: dict[str, float] = {}
        """Open project -> when a request last used it (monotonic)."""
        self._in_flight: dict[str, int] = {}
        self.idle_evict = DEFAULT_IDLE_EVICT_S
        self.max_open = DEFAULT_MAX_OPEN
        self._stop = threading.Event()

    def folder(self, project_id: str) -> Path:
        return self.root / project_id

    def create(self, owner_id: str, name: str) -> Project:
        project = self.store.add_project(owner_id, check_name(name))
        self.folder(project.id).mkdir(mode=0o700)
        return project

    def find(self, owner_id: str, project_id: str) -> Project | None:
        return self.store.project(owner_id, project_id)

    def rename(self, owner_id: str, project_id: str, name: str) -> Project | None:
        project = self.store.rename_project(owner_id, project_id, check_name(name))
        if project is not None:
            with self._lock:
                ws = self._open.get(project_id)
            if ws is not None:
                ws.name = project.name
        return project

    def delete(self, owner_id: str, project_id: str) -> Project | None:
        project = self.store.delete_project(owner_id, project_id)
        if project is None:
            return None
        with self._lock:
            ws = self._open.pop(project_id, None)
            self._used.pop(project_id, None)
            self._deleted.add(project_id)
        if ws is not None:
            ws.close()
        folder = self.folder(project_id)
        if folder.is_dir():  # its state (the change journal holds old file contents) goes with it
            state = Workspace(roots=[folder], policy=self.policy, state_home=self.state_home).state_path
            shutil.rmtree(state, ignore_errors=True)
        shutil.rmtree(folder, ignore_errors=True)
        return project

    def workspace(self, project: Project) -> Workspace:
        """The project's workspace, opened on first use (refused once the project is deleted)."""
        with self._lock:
            if project.id in self._deleted:
                raise ToolFailure(NO_SUCH_PROJECT, kind="not_found")
            ws = self._open.get(project.id)
            if ws is None:
                folder = self.folder(project.id)
                if not folder.is_dir():
                    raise ToolFailure(NO_SUCH_PROJECT, kind="not_found")
                ws = Workspace.open(
                    folder, policy=self.policy_of(project), state_home=self.state_home, name=project.name
                )
                ref = ProjectRef(project, self)
                ws.service(lambda _ws: ref, key=REF_KEY)
                self._open[project.id] = ws
                _sweep_soon(folder)
            self._used[project.id] = time.monotonic()
            over = self._over_cap(project.id)
        if over:  # closing waits for processes to end: not on the caller's (maybe the event loop's) thread
            threading.Thread(target=_close_all, args=(over,), name="mcp-ide-evict", daemon=True).start()
        return ws

    @contextmanager
    def in_use(self, project_id: str) -> Iterator[None]:
        """Marks a request to the project in flight: its workspace is not evicted meanwhile."""
        with self._lock:
            self._in_flight[project_id] = self._in_flight.get(project_id, 0) + 1
        try:
            yield
        finally:
            with self._lock:
                left = self._in_flight[project_id] - 1
                if left:
                    self._in_flight[project_id] = left
                else:
                    del self._in_flight[project_id]
                if project_id in self._open:
                    self._used[project_id] = time.monotonic()

    def evict_idle(self, now: float | None = None) -> list[str]:
        """Close the workspaces idle for ``idle_evict`` seconds (none in flight, holding no work); their ids."""
        now = time.monotonic() if now is None else now
        with self._lock:
            idle = [
                pid
                for pid, used in self._used.items()
                if now - used >= self.idle_evict and self._evictable(pid)
            ]
            closing = [self._evict(pid) for pid in idle]
        _close_all(closing)
        return idle

    def start_eviction(self) -> None:
        """Evict idle workspaces from a thread of its own until :meth:`close` (``idle_evict`` > 0)."""
        if self.idle_evict <= 0:
            return
        every = min(30.0, max(0.2, self.idle_evict / 4))

        def run() -> None:
            while not self._stop.wait(every):
                try:
                    self.evict_idle()
                except Exception:  # housekeeping must never take the service down
                    log.warning("evicting idle projects failed", exc_info=True)

        threading.Thread(target=run, name="mcp-ide-evict-projects", daemon=True).start()

    def _evictable(self, project_id: str) -> bool:
        ws = self._open.get(project_id)
        return ws is not None and not self._in_flight.get(project_id) and not _holds_work(ws)

    def _evict(self, project_id: str) -> Workspace:
        log.info("closing idle project %s", project_id)
        self._used.pop(project_id, None)
        return self._open.pop(project_id)

    def _over_cap(self, opened: str) -> list[Workspace]:
        """Past ``max_open`` open workspaces, the least recently used evictable ones (lock held)."""
        if self.max_open <= 0 or len(self._open) <= self.max_open:
            return []
        oldest = sorted((used, pid) for pid, used in self._used.items() if pid != opened)
        closing = []
        for _used, pid in oldest:
            if len(self._open) <= self.max_open:
                break
            if self._evictable(pid):
                closing.append(self._evict(pid))
        return closing

    def policy_of(self, project: Project) -> Policy:
        """The project's workspace policy: the service's, with the project's own sandbox."""
        own = project_policy(project.number, self.sandbox)
        return replace(
            self.policy,
            sandbox_uid=own.sandbox_uid,
            disk_quota=own.disk_quota,
            network=own.network,
            limits=own.limits,
        )

    def for_context(self, ctx: object = None) -> Workspace:
        """The workspace of a request (an MCP ``Context`` or a Starlette request) the router let in."""
        request = getattr(getattr(ctx, "request_context", None), "request", None) or ctx
        scope = getattr(request, "scope", None)
        project = scope.get(SCOPE_KEY) if isinstance(scope, dict) else None
        if not isinstance(project, Project):
            raise ToolFailure(NO_SUCH_PROJECT, kind="not_found")
        return self.workspace(project)

    __call__ = for_context

    def export(self, project: Project, out: IO[bytes]) -> None:
        """The project's files as a gzipped tar (``workspace/...``): links stay links, owners are not kept,
        and anything that is not a file, folder or link (a FIFO, a socket) is left out."""

        def clean(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
            if not (info.isfile() or info.isdir() or info.issym()):
                return None
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            return info

        with tarfile.open(fileobj=out, mode="w:gz") as tar:
            tar.add(self.folder(project.id), arcname="workspace", recursive=True, filter=clean)

    def all(self) -> list[Workspace]:
        with self._lock:
            return list(self._open.values())

    def close(self) -> None:
        self._stop.set()
        with self._lock:
            open_now = list(self._open.values())
            self._open.clear()
            self._used.clear()
        for ws in open_now:
            ws.close()


def _holds_work(ws: Workspace) -> bool:
    """Whether a workspace has a running job, a terminal running a command or a live debug session
    (services with a ``list()`` of items that are ``running``, ``busy`` or ``live``)."""
    for svc in ws.services():
        listing = getattr(svc, "list", None)
        if not callable(listing):
            continue
        try:
            items = listing()
        except Exception:
            return True  # cannot tell: keep it
        if not isinstance(items, list):
            continue
        for item in items:
            if any(getattr(item, flag, False) is True for flag in ("running", "busy", "live")):
                return True
    return False


def _close_all(workspaces: list[Workspace]) -> None:
    for ws in workspaces:
        try:
            ws.close()
        except Exception:
            log.warning("closing an evicted project failed", exc_info=True)


def _sweep_soon(folder: Path) -> None:
    """Remove, on a thread of its own, the temp files killed writes left in a project just opened."""

    def run() -> None:
        from ..engines import textio

        try:
            textio.sweep_leftovers(folder)
        except Exception:  # housekeeping must never take the service down
            log.info("sweeping temp leftovers of a project failed", exc_info=True)

    threading.Thread(target=run, name="mcp-ide-sweep-project", daemon=True).start()


def tmp_dir(data: Path) -> Path:
    path = data / "tmp"
    path.mkdir(mode=0o700, exist_ok=True)
    os.chmod(path, 0o700)
    return path

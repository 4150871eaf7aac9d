"""Projects as workspaces: each project's files in their own folder under the data folder, each
open project one :class:`~..workspace.Workspace` confined to it, with its own sandbox: its uid from
its number, its disk quota, its network switch and its limits (:func:`.sandbox.project_policy`).

The doors ask :meth:`HostedProjects.for_context` for a request's workspace: the project the
hosted router (:mod:`.app`) found for the caller and put in the request's scope, so a tool never
sees another project. Deleting a project closes its workspace (jobs, terminals, language servers)
and removes its folder.
"""

from __future__ import annotations

import logging
import os
import shutil
import tarfile
import threading
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
            return ws

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
        with self._lock:
            open_now = list(self._open.values())
            self._open.clear()
        for ws in open_now:
            ws.close()


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

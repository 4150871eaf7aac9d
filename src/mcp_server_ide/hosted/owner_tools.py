"""The owner tools of hosted mode: a user's own projects (create, list, rename, delete, export).

Loaded only by the hosted service (as its plugin module), so local servers never list them. Each
acts on the caller's projects only: the owner is the one of the project the call came through, and
another user's project, a deleted one and an unknown id all answer ``no such project``.
"""

from __future__ import annotations

from typing import Any

from ..call import current
from ..registry import ToolFailure, tool
from .projects import NO_SUCH_PROJECT, REF_KEY, ProjectRef
from .store import Project


def _ref() -> ProjectRef:
    def missing(_ws: object) -> ProjectRef:
        raise ToolFailure("unavailable: project tools work only in the hosted service", kind="unavailable")

    return current().workspace.service(missing, key=REF_KEY)


def _shown(project: Project) -> dict[str, Any]:
    return {"id": project.id, "name": project.name, "url": f"/p/{project.id}/mcp"}


def _gone() -> ToolFailure:
    return ToolFailure(NO_SUCH_PROJECT, kind="not_found")


@tool("hosted", title="Create project", idempotent=False)
def create_project(name: str) -> dict[str, Any]:
    """Create an empty project; returns its id and URL."""
    ref = _ref()
    return _shown(ref.projects.create(ref.project.owner_id, name))


@tool("hosted", title="List projects", read_only=True)
def list_projects() -> list[dict[str, Any]]:
    """Your projects (id, name, URL)."""
    ref = _ref()
    return [_shown(p) for p in ref.projects.store.projects_of(ref.project.owner_id)]


@tool("hosted", title="Rename project", idempotent=True)
def rename_project(project: str, name: str) -> dict[str, Any]:
    """Rename a project of yours; id and URL stay."""
    ref = _ref()
    done = ref.projects.rename(ref.project.owner_id, project, name)
    if done is None:
        raise _gone()
    return _shown(done)


@tool("hosted", title="Delete project", destructive=True, idempotent=True)
def delete_project(project: str) -> str:
    """Delete a project of yours and its files."""
    ref = _ref()
    if ref.projects.delete(ref.project.owner_id, project) is None:
        raise _gone()
    return f"deleted {project}"


@tool("hosted", title="Export project", read_only=True)
def export_project(project: str = "") -> dict[str, Any]:
    """A link to GET a project (default: this one) as .tar.gz, with your token."""
    ref = _ref()
    wanted = project or ref.project.id
    if ref.projects.find(ref.project.owner_id, wanted) is None:
        raise _gone()
    return {"url": f"/p/{wanted}/export", "format": "tar.gz"}

"""Python refactorings with rope: extract function, extract variable, and rename as a fallback.

rope computes the new contents; it never writes: the results become plans for
:mod:`.multiedit` (previewed or applied through the sandbox and journal). The rope project keeps
no ``.ropeproject`` folder in the workspace (``ropefolder=None``) and ignores the usual
environment and build folders. One project per workspace, used under a lock.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ..workspace import Workspace
from .failures import ToolFailure

if TYPE_CHECKING:
    from rope.base.change import Change
    from rope.base.resources import File

IGNORED = [
    "*.pyc",
    "*~",
    ".git",
    ".hg",
    ".svn",
    "node_modules",
    ".venv",
    "venv",
    "env",
    ".tox",
    ".nox",
    "__pycache__",
    "build",
    "dist",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    "site-packages",
]


class RopeService:
    def __init__(self, ws: Workspace) -> None:
        from rope.base.project import Project

        self.lock = threading.Lock()
        self.root = ws.root
        self.project = Project(
            str(ws.root),
            ropefolder=None,  # pyright: ignore[reportArgumentType]  # rope's documented "no .ropeproject"
            ignored_resources=IGNORED,
            save_history=False,
        )

    def follow_roots(self, roots: list[Path]) -> bool:
        """Stays while the primary root, the rope project's folder, is still the first."""
        return roots[0] == self.root

    def close(self) -> None:
        self.project.close()


def _resource(svc: RopeService, path: Path) -> File:
    from rope.base import libutils

    svc.project.validate()
    return cast("File", libutils.path_to_resource(svc.project, str(path)))


def _contents(changes: Change) -> dict[Path, str]:
    from rope.base.change import ChangeContents, ChangeSet

    out: dict[Path, str] = {}

    def walk(change: Change) -> None:
        if isinstance(change, ChangeSet):
            for inner in change.changes:
                walk(inner)
        elif isinstance(change, ChangeContents):
            out[Path(change.resource.real_path)] = change.new_contents
        else:
            raise ToolFailure(
                f"refused: rope would {type(change).__name__} (rule: this tool only edits file contents)",
                kind="refused",
            )

    walk(changes)
    return out


def _rope_error(exc: Exception, what: str) -> ToolFailure:
    return ToolFailure(f"cannot {what} here: {exc}", kind="invalid")


def extract(ws: Workspace, path: Path, start: int, end: int, new_name: str, kind: str) -> dict[Path, str]:
    """Extract ``[start, end)`` (offsets in the file's text as rope reads it) into a function or variable."""
    from rope.base.exceptions import RefactoringError
    from rope.refactor.extract import ExtractMethod, ExtractVariable

    svc = ws.service(RopeService)
    with svc.lock:
        resource = _resource(svc, path)
        cls = ExtractMethod if kind == "function" else ExtractVariable
        try:
            refactoring = cls(svc.project, resource, start, end)
            changes = refactoring.get_changes(new_name, similar=False, global_=False)
        except (RefactoringError, ValueError) as exc:
            raise _rope_error(exc, f"extract a {kind}") from None
        return _contents(changes)


def rename(ws: Workspace, path: Path, offset: int, new_name: str) -> dict[Path, str]:
    from rope.base.exceptions import RefactoringError
    from rope.refactor.rename import Rename

    svc = ws.service(RopeService)
    with svc.lock:
        resource = _resource(svc, path)
        try:
            changes = Rename(svc.project, resource, offset).get_changes(new_name, docs=False)
        except (RefactoringError, ValueError) as exc:
            raise _rope_error(exc, "rename") from None
        return _contents(changes)


def read_text(ws: Workspace, path: Path) -> str:
    """The file's text exactly as rope sees it (offsets for rope are indices into this)."""
    svc = ws.service(RopeService)
    with svc.lock:
        return _resource(svc, path).read()

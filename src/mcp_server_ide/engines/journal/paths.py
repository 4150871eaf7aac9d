"""How the journal names a workspace's files, and reads them as they are now.

A journal path is relative to the primary root, or ``<root name>/...`` for a file in another root.
Every path a caller gives and every file read goes through the sandbox, as any tool's would.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ...workspace import Workspace
from ..changes import FileChange
from ..failures import ToolFailure
from ..textio import content_hash
from .records import ABSENT, UNREADABLE, UNREADABLE_FILE, Unreadable


def path_name(ws: Workspace, path: Path) -> str | None:
    """The path as a caller names it: relative to the primary root, or ``<root name>/...`` for another root."""
    for index, root in enumerate(ws.roots):
        try:
            rel = path.relative_to(root).as_posix()
        except ValueError:
            continue
        return rel if index == 0 else f"{root.name}/{rel}"
    return None


def change_path(ws: Workspace, change: FileChange) -> str:
    """The journal path of a changed file."""
    return path_name(ws, change.path) or change.rel


def made_folder_names(ws: Workspace, change: FileChange) -> tuple[str, ...]:
    """The change's made folders as journal paths (``<root name>/...`` in another root)."""
    if not change.made_folders:
        return ()
    rel_parts = len(Path(change.rel).parts)
    root = change.path.parents[rel_parts - 1] if rel_parts else change.path
    return tuple(path_name(ws, root / rel) or rel for rel in change.made_folders)


def user_path(ws: Workspace, path: str) -> str:
    """A caller's path in the journal's form (through the sandbox: outside paths are refused)."""
    from .. import sandbox

    resolved = sandbox.resolve(ws, path)
    return path_name(ws, resolved.path) or resolved.rel


def remove_made_folders(ws: Workspace, folders: list[str]) -> list[str]:
    """Remove the folders (journal paths) that are empty now, deepest first; returns those removed.

    Each is reached by its own name beneath its root, never through a symlink, and only an empty
    folder is removed: one that holds anything, even a file made by other hands, stays."""
    from .. import sandbox

    removed: list[str] = []
    for folder in sorted(set(folders), key=lambda f: (-f.count("/"), f)):
        try:
            resolved = sandbox.resolve(ws, folder)
        except ToolFailure:
            continue
        if resolved.lexical and sandbox.remove_empty_folder(resolved.root, resolved.lexical):
            removed.append(folder)
    return removed


def read_current(ws: Workspace, path: str) -> bytes | Unreadable | None:
    """The file's bytes now (its unsaved buffer's in VS Code, when it has one: what an undo acts on),
    None when it does not exist, ``UNREADABLE_FILE`` when it cannot be read."""
    from .. import sandbox, textio

    try:
        resolved = sandbox.resolve(ws, path)
    except ToolFailure:
        return UNREADABLE_FILE
    if not os.path.lexists(resolved.path):
        return None
    try:
        data, _ = textio.current_bytes(ws, resolved)
    except ToolFailure:
        return UNREADABLE_FILE
    return data


def hash_now(ws: Workspace, path: str) -> str:
    """The hash of the file's bytes now, "absent" or "unreadable"."""
    data = read_current(ws, path)
    if data is UNREADABLE_FILE:
        return UNREADABLE
    return ABSENT if data is None else content_hash(data)


def mode_of(path: Path) -> int | None:
    """The file's permission bits, None when it cannot be stat'ed."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return None

"""``project_fs_list``: a folder of the project's sandbox, or the tree below it, paged.

The walk never follows a symlink and never leaves the root; ``node_modules``, ``.git`` and ``dist``
are always skipped, and a recursive walk also drops what .gitignore excludes (by ripgrep's rules).
"""

from __future__ import annotations

import os
from typing import Annotated, Any, Literal, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from ...call import current
from ...engines import sandbox, search
from ...registry import ToolFailure, tool

ALWAYS_SKIPPED = frozenset({"node_modules", ".git", "dist"})
LIST_PAGE = 2000
MAX_WALK = 500_000

EntryKind = Literal["file", "directory", "symlink", "other"]
_Entry = tuple[str, EntryKind, int]


class ListEntry(TypedDict):
    path: str
    type: EntryKind
    size: int


class ListResult(TypedDict):
    dir: str
    entries: list[ListEntry]
    count: int
    total: NotRequired[int]
    truncated: NotRequired[bool]
    nextOffset: NotRequired[int | None]


def _flat_listing(arguments: dict[str, Any]) -> bool:
    """One folder's entries is bounded local I/O (as ``list_files_in_folder``); a recursive walk is not."""
    return not arguments.get("recursive")


@tool(
    "project_fs",
    title="List project folder",
    read_only=True,
    inline=_flat_listing,
    example={"dir": "src", "recursive": True},
    errors=("not found", "not a folder", "outside the workspace"),
)
def project_fs_list(
    dir: Annotated[str | None, Field(description="Default: the root.")] = None,
    recursive: bool = False,
    includeIgnored: Annotated[
        bool,
        Field(description="With recursive: also what .gitignore excludes."),
    ] = False,
    maxEntries: Annotated[int, Field(ge=1, le=20000)] = LIST_PAGE,
    offset: Annotated[int, Field(ge=0, description="The previous nextOffset.")] = 0,
) -> ListResult:
    """List a folder (default: the root), or with `recursive` the whole tree; skips .git, node_modules and
    dist (recursive: also what .gitignore excludes). Paged."""
    ws = current().workspace
    resolved = sandbox.resolve(ws, dir or "")
    if not resolved.path.is_dir():
        if not resolved.path.exists():
            raise ToolFailure(
                f"not found: {resolved.display_rel!r} does not exist in the workspace (list its parent with "
                "project_fs_list)",
                kind="not_found",
            )
        raise ToolFailure(f"{resolved.display_rel!r} is a file, not a folder (read it with project_fs_read)")
    entries, complete = _walk(resolved, recursive)
    if recursive and not includeIgnored:
        entries, filtered_complete = _without_ignored(resolved, entries)
        complete = complete and filtered_complete
    entries.sort(key=lambda e: e[0])
    page = entries[offset : offset + maxEntries]
    end = offset + len(page)
    more = end < len(entries)
    return ListResult(
        dir=resolved.display_rel,
        entries=[ListEntry(path=_host(rel), type=kind, size=size) for rel, kind, size in page],
        count=len(page),
        total=len(entries),
        truncated=more or not complete,
        nextOffset=end if more else None,
    )


def _walk(resolved: sandbox.Resolved, recursive: bool) -> tuple[list[_Entry], bool]:
    """Entries below the folder (paths relative to the root, POSIX), never following a symlink."""
    entries: list[_Entry] = []
    prefix = resolved.rel + "/" if resolved.rel else ""
    stack = [(resolved.rel, prefix)]
    seen: set[tuple[int, int]] = set()
    while stack:
        folder, base = stack.pop()
        try:
            # Beneath the root without following links: a folder swapped for a link out since
            # resolve() cannot make the walk list a folder outside.
            folder_fd = sandbox.open_listing(resolved.root, folder)
        except OSError:
            continue
        try:
            it = os.scandir(folder_fd)
        except OSError:
            os.close(folder_fd)
            continue
        with it:
            for entry in it:
                name = entry.name
                if sandbox.is_temp_name(name):
                    continue  # our in-flight temp files (a write or start-up sweeps stale ones)
                if name in ALWAYS_SKIPPED:
                    continue
                rel = base + name
                kind: EntryKind = "other"
                size = 0
                try:
                    if entry.is_symlink():
                        kind = "symlink"
                    elif entry.is_dir(follow_symlinks=False):
                        kind = "directory"
                        if recursive:
                            st = entry.stat(follow_symlinks=False)
                            key = (st.st_dev, st.st_ino)
                            if key not in seen:  # a bind mount looping back is walked once
                                seen.add(key)
                                stack.append((rel, rel + "/"))
                    elif entry.is_file(follow_symlinks=False):
                        kind = "file"
                        size = entry.stat(follow_symlinks=False).st_size
                except OSError:
                    pass
                entries.append((rel, kind, size))
                if len(entries) >= MAX_WALK:
                    os.close(folder_fd)
                    return entries, False
        os.close(folder_fd)
    return entries, True


def _without_ignored(resolved: sandbox.Resolved, entries: list[_Entry]) -> tuple[list[_Entry], bool]:
    """Drop what .gitignore excludes, by ripgrep's own rules (the same as the search tools').

    ripgrep names the files it keeps; a folder is kept when it holds a kept file, or no file at all
    (an empty folder cannot be told apart), and only inside a kept folder; a symlink or other entry is
    kept when its folder is.
    """
    prefix = resolved.rel + "/" if resolved.rel else ""
    listed = search.list_files(resolved.root, under=resolved.rel)
    kept_files = set(listed.paths)
    has_kept: set[str] = set()
    has_files: set[str] = set()
    for rel, kind, _ in entries:
        if kind != "file":
            continue
        marks = has_kept if rel in kept_files else None
        parent = rel.rpartition("/")[0]
        while parent and len(parent) >= len(prefix.rstrip("/")):
            if parent in has_files and (marks is None or parent in has_kept):
                break
            has_files.add(parent)
            if marks is not None:
                marks.add(parent)
            parent = parent.rpartition("/")[0]
    top = prefix.rstrip("/")
    kept_dirs = {top}
    out: list[_Entry] = []
    for rel, kind, size in sorted(entries, key=lambda e: e[0].count("/")):
        parent = rel.rpartition("/")[0]
        if parent not in kept_dirs:
            continue
        if kind == "file":
            if rel in kept_files:
                out.append((rel, kind, size))
        elif kind == "directory":
            if rel in has_kept or rel not in has_files:
                kept_dirs.add(rel)
                out.append((rel, kind, size))
        else:
            out.append((rel, kind, size))
    return out, listed.complete


def _host(rel: str) -> str:
    return rel.replace("/", os.sep) if os.sep != "/" else rel

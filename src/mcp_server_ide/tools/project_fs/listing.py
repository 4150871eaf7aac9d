"""``project_fs_list``: a folder of the project's sandbox, or the tree below it, paged.

The walk (:mod:`.walk`) never follows a symlink and never leaves the root; ``node_modules``, ``.git``
and ``dist`` are always skipped, and a recursive listing also drops what .gitignore excludes (by
ripgrep's rules: :mod:`.kept`).
"""

from __future__ import annotations

import heapq
import os
import stat
from pathlib import Path
from typing import Annotated, Any, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from ...call import current
from ...engines import memory, sandbox
from ...registry import ToolFailure, tool
from . import kept, since
from .kept import IgnoreFilter, RipgrepFiles
from .walk import EntryKind, walk
from .walkbounds import WalkBounds

LIST_PAGE = 2000


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
    note: NotRequired[str]
    """Why a recursive walk stopped short (too deep, out of time)."""


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
    ripgrep: RipgrepFiles | None = None
    since_last = False
    if recursive and not includeIgnored:
        # A folder listed before, its ignore files as they were: once the walk is done, the last
        # answer stands or is brought up to date (kept.remembered, since.update), ripgrep asked
        # only about the folders that changed. Otherwise ripgrep runs beside the whole walk.
        since_last = kept.remembers(resolved)
        ripgrep = RipgrepFiles(resolved.root, started=not since_last)
    bounds = WalkBounds()
    ignores: IgnoreFilter | None = None
    answer: kept.Kept | None = None
    started_ns = 0
    try:
        if ripgrep is None:
            found = walk(resolved, recursive, bounds)
        else:  # once refused (since.refused), ripgrep starts as soon as a folder is read anew
            fresh = ripgrep.start if since_last and since.refused(resolved) else None
            found = walk(resolved, recursive, bounds, ripgrep.poll, fresh)
        complete = found.complete
        if since_last and ripgrep is not None:
            stamps = kept.ignore_stamps(resolved, found)
            answer = kept.remembered(resolved, found, stamps)
            updated = (
                since.update(resolved, found, stamps) if answer is None and bounds.note is None else None
            )
            if updated is not None:
                ignores, started_ns = updated
                ripgrep.stop()  # (started only if refused before: not needed now)
        if ripgrep is not None and answer is None and ignores is None:
            # While ripgrep runs: what the filter needs of the walk.
            ignores = IgnoreFilter(resolved, found)
            ripgrep.into(ignores.excluded)
            complete = ripgrep.finish() and complete
            started_ns = ripgrep.started_ns
    except BaseException:
        if ripgrep is not None:
            ripgrep.stop()
        raise
    if ripgrep is None:
        names = found.files() + found.folders
        names += found.others
        total, page = len(names), _first(names, offset + maxEntries)[offset:]
        folders, others = set(found.folders), found.others
    else:
        if answer is None:
            assert ignores is not None
            answer = ignores.apply()
            if complete and bounds.note is None:
                kept.remember(resolved, ignores, answer, started_ns)
        total, page = answer.total, answer.page(offset, maxEntries)
        folders, others = answer.folders, answer.others
    end = offset + len(page)
    more = end < total
    sizes = _sizes(resolved.root, [rel for rel in page if rel not in others and rel not in folders])
    entries = []
    for rel in page:
        kind = others.get(rel) or ("directory" if rel in folders else "file")
        entries.append(ListEntry(path=_host(rel), type=kind, size=sizes.get(rel, 0)))
    result = ListResult(
        dir=resolved.display_rel,
        entries=entries,
        count=len(page),
        total=total,
        truncated=more or not complete or bounds.note is not None,
        nextOffset=end if more else None,
    )
    if bounds.note is not None:
        result["note"] = bounds.note
    if found.count > memory.BIG:
        del found, answer, ignores
        memory.give_back()
    return result


def _first(names: list[str], n: int) -> list[str]:
    """The ``n`` smallest names in order (a full sort only when they are a good part of the list)."""
    if n * 8 < len(names):
        return heapq.nsmallest(n, names)
    return sorted(names)[:n]


def _sizes(root: Path, files: list[str]) -> dict[str, int]:
    """The sizes of the page's files, each folder reached beneath the root without following links
    (0 for one that is gone or not a regular file any more)."""
    by_folder: dict[str, list[str]] = {}
    for rel in files:
        folder, _, name = rel.rpartition("/")
        by_folder.setdefault(folder, []).append(name)
    sizes: dict[str, int] = {}
    for folder, names in by_folder.items():
        try:
            fd = sandbox.open_folder_beneath(root, folder)
        except OSError:
            continue
        try:
            for name in names:
                try:
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode):
                    sizes[folder + "/" + name if folder else name] = st.st_size
        finally:
            os.close(fd)
    return sizes


def _host(rel: str) -> str:
    return rel.replace("/", os.sep) if os.sep != "/" else rel

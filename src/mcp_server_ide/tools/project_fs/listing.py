"""``project_fs_list``: a folder of the project's sandbox, or the tree below it, paged.

The walk (:mod:`.walk`) never follows a symlink and never leaves the root; ``node_modules``, ``.git``
and ``dist`` are always skipped, and a recursive listing also drops what .gitignore excludes (by
ripgrep's rules: its ``--files``, run while the walk runs, names the files kept).
"""

from __future__ import annotations

import contextvars
import heapq
import itertools
import os
import stat
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from ...call import current
from ...engines import sandbox, search
from ...registry import ToolFailure, tool
from .walk import EntryKind, Walk, walk
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
    kept = _KeptFiles(resolved.root) if recursive and not includeIgnored else None
    bounds = WalkBounds()
    ordered: list[str] = []
    walked: _Walked | None = None
    try:
        found = walk(resolved, recursive, bounds)
        if kept is not None:  # while ripgrep runs: every name in order, what the filter needs of the walk
            ordered = sorted(found.files() + found.folders + list(found.others))
            walked = _Walked.of(found)
    finally:
        listed = kept.result() if kept is not None else None
    if listed is None:
        names = found.files() + found.folders
        names += found.others
        total, page = len(names), _first(names, offset + maxEntries)[offset:]
        folders, others = set(found.folders), found.others
    else:
        assert walked is not None
        keep = _without_ignored(resolved, found, walked, listed.paths)
        total, page = len(keep.names), _slice(filter(keep.names.__contains__, ordered), offset, maxEntries)
        folders, others = keep.folders, keep.others
    complete = found.complete and (listed is None or listed.complete)
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
    return result


class _KeptFiles:
    """The files ripgrep keeps (the search tools' ignore rules), listed in a thread while the walk
    runs: ripgrep walks in its own process, so the two overlap."""

    def __init__(self, root: Path) -> None:
        self._result: search.FilesResult | None = None
        self._error: BaseException | None = None
        context = contextvars.copy_context()  # the call's, so a cancelled call stops ripgrep too
        self._thread = threading.Thread(target=context.run, args=(self._run, root), daemon=True)
        self._thread.start()

    def _run(self, root: Path) -> None:
        try:
            # No swapped-folder check: the names only filter the walk, which never follows a link,
            # so a name from beyond a folder swapped for a link matches nothing.
            self._result = search.list_files(root, check_swapped=False)
        except BaseException as exc:  # handed to the caller
            self._error = exc

    def result(self) -> search.FilesResult:
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return self._result


@dataclass
class _Kept:
    """What a recursive listing keeps: every name, the folders, the symlinks and others."""

    names: set[str]
    folders: set[str]
    others: dict[str, EntryKind]


@dataclass
class _Walked:
    """What the ignore filter needs of the walk alone, made while ripgrep still runs."""

    files: set[str]
    holding_files: set[str]
    """The folders ("a/b/", the root "") holding a file, and every folder above them."""

    @classmethod
    def of(cls, found: Walk) -> _Walked:
        return cls(set(found.files()), _with_ancestors({folder for folder, _ in found.batches}))


def _without_ignored(
    resolved: sandbox.Resolved, found: Walk, walked: _Walked, kept_by_rg: list[str]
) -> _Kept:
    """Drop what .gitignore excludes, by ripgrep's own rules (the same as the search tools').

    ripgrep names the files it keeps (only those the walk found count); a folder is kept when it
    holds a kept file, or no file at all (an empty folder cannot be told apart), and only inside a
    kept folder; a symlink or other entry is kept when its folder is.
    """
    kept_files = walked.files.intersection(kept_by_rg)
    if len(kept_files) == len(walked.files):  # nothing ignored: every folder holding files keeps one
        with_kept = walked.holding_files
        holding_kept = with_kept
    else:
        with_kept = {folder for folder, rels in found.batches if not kept_files.isdisjoint(rels)}
        holding_kept = _with_ancestors(with_kept)
    holding_files = walked.holding_files
    kept_folders = {resolved.rel + "/" if resolved.rel else ""}
    folders = set()
    for rel in found.folders:  # parents come first
        key = rel + "/"
        if rel[: rel.rfind("/") + 1] in kept_folders and (key in holding_kept or key not in holding_files):
            kept_folders.add(key)
            folders.add(rel)
    others: dict[str, EntryKind] = {
        rel: kind for rel, kind in found.others.items() if rel[: rel.rfind("/") + 1] in kept_folders
    }
    return _Kept(names=kept_files | folders | others.keys(), folders=folders, others=others)


def _with_ancestors(folders: set[str]) -> set[str]:
    """The folders (relative, "a/b/"; the root "") and every folder above them."""
    out = set(folders)
    for folder in folders:
        parent = folder[: folder.rfind("/", 0, len(folder) - 1) + 1]
        while parent not in out:
            out.add(parent)
            parent = parent[: parent.rfind("/", 0, len(parent) - 1) + 1]
    return out


def _slice(names: Iterator[str], offset: int, count: int) -> list[str]:
    return list(itertools.islice(names, offset, offset + count))


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

"""``project_fs_list``: a folder of the project's sandbox, or the tree below it, paged.

The walk never follows a symlink and never leaves the root; ``node_modules``, ``.git`` and ``dist``
are always skipped, and a recursive walk also drops what .gitignore excludes (by ripgrep's rules).
"""

from __future__ import annotations

import contextvars
import heapq
import os
import stat
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from ...call import current
from ...engines import sandbox, search
from ...registry import ToolFailure, tool
from .walkbounds import WalkBounds

ALWAYS_SKIPPED = frozenset({"node_modules", ".git", "dist"})
LIST_PAGE = 2000
MAX_WALK = 500_000

EntryKind = Literal["file", "directory", "symlink", "other"]


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
    try:
        walk = _walk(resolved, recursive, bounds)
    finally:
        listed = kept.result() if kept is not None else None
    complete = walk.complete
    if listed is not None:
        walk = _without_ignored(resolved, walk, set(listed.paths))
        complete = complete and listed.complete
    names = walk.files + walk.folders + list(walk.others)
    page = _first(names, offset + maxEntries)[offset:]
    end = offset + len(page)
    more = end < len(names)
    folders = set(walk.folders)
    sizes = _sizes(resolved.root, [rel for rel in page if rel not in walk.others and rel not in folders])
    entries = []
    for rel in page:
        kind = walk.others.get(rel) or ("directory" if rel in folders else "file")
        entries.append(ListEntry(path=_host(rel), type=kind, size=sizes.get(rel, 0)))
    result = ListResult(
        dir=resolved.display_rel,
        entries=entries,
        count=len(page),
        total=len(names),
        truncated=more or not complete or bounds.note is not None,
        nextOffset=end if more else None,
    )
    if bounds.note is not None:
        result["note"] = bounds.note
    return result


_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_HELD_DEPTH = 64
"""Folders deeper than this are reopened from the root (one name at a time) rather than kept open
while their subfolders are walked: the descriptors held stay few however deep the tree."""


@dataclass
class _Walk:
    """What a walk found, relative to the root (POSIX): files, folders (parents before their
    subfolders) and the rest (symlinks and others) with their kind; the folders holding a file."""

    files: list[str] = field(default_factory=list)
    folders: list[str] = field(default_factory=list)
    others: dict[str, EntryKind] = field(default_factory=dict)
    batches: list[tuple[str, int, int]] = field(default_factory=list)
    """Each folder ("a/b/", the root "") holding files of its own, with the slice of ``files`` they are."""
    complete: bool = True

    def count(self) -> int:
        return len(self.files) + len(self.folders) + len(self.others)


def _walk(resolved: sandbox.Resolved, recursive: bool, bounds: WalkBounds | None = None) -> _Walk:
    """Entries below the folder, never following a symlink (every folder is opened relative to its
    parent's descriptor with ``O_NOFOLLOW``: a folder swapped for a link out since :func:`resolve`
    cannot make the walk list a folder outside), each folder once (a bind mount looping back)."""
    walk = _Walk()
    try:
        top = sandbox.open_listing(resolved.root, resolved.rel)
    except OSError:
        return walk
    seen: set[tuple[int, int]] = set()
    prefix = resolved.rel + "/" if resolved.rel else ""
    # Frames: (descriptor or -1 once closed, the folder's relative path with "/", subfolders left).
    stack: list[tuple[int, str, list[str]]] = [(top, prefix, [])]
    try:
        st = os.fstat(top)
        seen.add((st.st_dev, st.st_ino))
        stack[0] = (top, prefix, _scan(top, prefix, walk, recursive))
        while stack and walk.complete:
            fd, base, subfolders = stack[-1]
            if bounds is not None and subfolders and bounds.stop_here(len(stack)):
                subfolders.clear()  # too deep, or out of time: its subfolders are not walked
                walk.complete = not bounds.timed_out
            if not subfolders:
                stack.pop()
                if fd >= 0:
                    os.close(fd)
                continue
            name = subfolders.pop()
            try:
                if fd >= 0:
                    child = os.open(name, _FOLDER_FLAGS, dir_fd=fd)
                else:
                    child = sandbox.open_listing(resolved.root, base + name)
            except OSError:
                continue
            st = os.fstat(child)
            key = (st.st_dev, st.st_ino)
            if key in seen:
                os.close(child)
                continue
            seen.add(key)
            rel = base + name + "/"
            try:
                found = _scan(child, rel, walk, True)
            except BaseException:
                os.close(child)
                raise
            if len(stack) >= _HELD_DEPTH:
                os.close(child)
                child = -1
            stack.append((child, rel, found))
    finally:
        for fd, _, _ in stack:
            if fd >= 0:
                os.close(fd)
    return walk


def _scan(fd: int, base: str, walk: _Walk, recursive: bool) -> list[str]:
    """Record one folder's entries (sizes are read later, for the page only); its subfolders to walk.
    The hot loop of a big tree's listing: bound methods are looked up once."""
    subfolders: list[str] = []
    try:
        it = os.scandir(fd)
    except OSError:
        return subfolders
    budget = MAX_WALK - walk.count()
    add_file, add_folder, others = walk.files.append, walk.folders.append, walk.others
    is_temp = sandbox.is_temp_name
    first_file = len(walk.files)
    with it:
        for entry in it:
            name = entry.name
            if name in ALWAYS_SKIPPED or is_temp(name):
                continue  # (temp names: our in-flight writes; a write or start-up sweeps stale ones)
            rel = base + name
            try:
                if entry.is_symlink():
                    others[rel] = "symlink"
                elif entry.is_dir(follow_symlinks=False):
                    add_folder(rel)
                    if recursive:
                        subfolders.append(name)
                elif entry.is_file(follow_symlinks=False):
                    add_file(rel)
                else:
                    others[rel] = "other"
            except OSError:
                others[rel] = "other"
            budget -= 1
            if budget <= 0:
                walk.complete = False
                break
    if len(walk.files) > first_file:
        walk.batches.append((base, first_file, len(walk.files)))
    subfolders.reverse()  # popped from the end: walked in the folder's order
    return subfolders


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


def _without_ignored(resolved: sandbox.Resolved, walk: _Walk, kept: set[str]) -> _Walk:
    """Drop what .gitignore excludes, by ripgrep's own rules (the same as the search tools').

    ripgrep names the files it keeps; a folder is kept when it holds a kept file, or no file at all
    (an empty folder cannot be told apart), and only inside a kept folder; a symlink or other entry is
    kept when its folder is.
    """
    files: list[str] = []
    with_kept: set[str] = set()
    for folder, start, end in walk.batches:  # a folder at a time: its kept files, and whether any
        here = [rel for rel in walk.files[start:end] if rel in kept]
        if here:
            files += here
            with_kept.add(folder)
    holding_kept = _with_ancestors(with_kept)
    holding_files = _with_ancestors({folder for folder, _, _ in walk.batches})
    kept_folders = {resolved.rel + "/" if resolved.rel else ""}
    folders = []
    for rel in walk.folders:  # parents come first
        key = rel + "/"
        if rel[: rel.rfind("/") + 1] in kept_folders and (key in holding_kept or key not in holding_files):
            kept_folders.add(key)
            folders.append(rel)
    others: dict[str, EntryKind] = {
        rel: kind for rel, kind in walk.others.items() if rel[: rel.rfind("/") + 1] in kept_folders
    }
    return _Walk(files=files, folders=folders, others=others, complete=walk.complete)


def _with_ancestors(folders: set[str]) -> set[str]:
    """The folders (relative, "a/b/"; the root "") and every folder above them."""
    out = set(folders)
    for folder in folders:
        parent = folder[: folder.rfind("/", 0, len(folder) - 1) + 1]
        while parent not in out:
            out.add(parent)
            parent = parent[: parent.rfind("/", 0, len(parent) - 1) + 1]
    return out


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

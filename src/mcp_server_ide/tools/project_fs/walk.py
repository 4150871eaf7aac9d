"""The walk behind ``project_fs_list``: a folder's tree, never following a symlink, never leaving it.

Every folder is opened relative to its parent's descriptor with ``O_NOFOLLOW`` (a folder swapped for
a link out since :func:`sandbox.resolve` cannot make the walk list a folder outside) and walked once
(a bind mount looping back). ``node_modules``, ``.git``, ``dist`` and our temp files are never listed.

A folder's entries come from reading it (types from ``d_type``: no ``stat`` an entry), or, when the
folder (same device and inode) has not changed since an earlier walk read it, from that read: a
folder's change and modification times move whenever an entry in it is added, removed or renamed,
and a read is kept only once the folder has been still for :data:`SETTLED_NS` (a change within the
same clock tick as the read cannot hide). Every folder is still opened and checked on every walk.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ...engines import sandbox
from .walkbounds import WalkBounds

ALWAYS_SKIPPED = frozenset({"node_modules", ".git", "dist"})
MAX_WALK = 500_000
"""Entries a walk records at most; it stops there, marked incomplete."""
MEANWHILE_EVERY = 32
"""Folders between two calls of a walk's ``meanwhile`` (~0.2 ms of walking on an idle machine)."""
SETTLED_NS = 2_000_000_000
"""How long a folder must have been unchanged before its read is kept (covers coarse timestamps)."""

EntryKind = Literal["file", "directory", "symlink", "other"]

IGNORE_CONTROLS = (".gitignore", ".ignore", ".rgignore", ".git")
"""Names whose presence in a folder bears on what ripgrep keeps there (``.git``: its ``info/exclude``);
a walk notes where they are (:attr:`Walk.controls`), though ``.git`` itself is never listed."""
_CONTROL_SET = frozenset(IGNORE_CONTROLS)

_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_HELD_DEPTH = 64
"""Folders deeper than this are reopened from the root (one name at a time) rather than kept open
while their subfolders are walked: the descriptors held stay few however deep the tree."""


@dataclass
class Walk:
    """What a walk found, relative to the root (POSIX): folders (parents before their subfolders),
    the rest (symlinks and others) with their kind, and the files a folder at a time."""

    folders: list[str] = field(default_factory=list)
    others: dict[str, EntryKind] = field(default_factory=dict)
    batches: list[tuple[str, list[str]]] = field(default_factory=list)
    """Each folder ("a/b/", the root "") holding files of its own, with their relative paths."""
    complete: bool = True
    count: int = 0
    """Entries recorded (files, folders and the rest)."""
    controls: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    """Each folder ("a/b/", the root "") holding any of :data:`IGNORE_CONTROLS`, with their names."""
    fresh: bool = False
    """Whether any folder was read anew (not an earlier walk's read of it, unchanged since)."""

    def files(self) -> list[str]:
        out: list[str] = []
        for _, rels in self.batches:
            out += rels
        return out


def walk(
    resolved: sandbox.Resolved,
    recursive: bool,
    bounds: WalkBounds | None = None,
    meanwhile: Callable[[], None] | None = None,
    on_fresh: Callable[[], None] | None = None,
) -> Walk:
    """The entries below the folder (with ``recursive``, the whole tree). The one place the walk
    descends; ``bounds`` stops it going too deep or on too long (the answer then says so);
    ``meanwhile`` is called every :data:`MEANWHILE_EVERY` folders (work that must go on while the
    walk runs, on its thread); ``on_fresh`` when a folder is read anew (it changed since an earlier
    walk read it, or none did: the walk will not find what the last one found)."""
    found = Walk()
    try:
        top = sandbox.open_listing(resolved.root, resolved.rel)
    except OSError:
        return found
    seen: set[tuple[int, int]] = set()
    prefix = resolved.rel + "/" if resolved.rel else ""
    # Frames: (descriptor or -1 once closed, the folder's relative path with "/", subfolders left).
    stack: list[tuple[int, str, list[str]]] = [(top, prefix, [])]
    try:
        st = os.fstat(top)
        seen.add((st.st_dev, st.st_ino))
        stack[0] = (top, prefix, _record(found, _reading(top, st, found, on_fresh), prefix, recursive))
        lstat, is_dir, reads = os.stat, stat.S_ISDIR, _READS.by_folder  # the loop's hot names
        steps = 0
        while stack and found.complete:
            steps += 1
            if meanwhile is not None and not steps % MEANWHILE_EVERY:
                meanwhile()
            fd, base, subfolders = stack[-1]
            if bounds is not None and subfolders and bounds.stop_here(len(stack)):
                subfolders.clear()  # too deep, or out of time: its subfolders are not walked
                found.complete = not bounds.timed_out
            if not subfolders:
                stack.pop()
                if fd >= 0:
                    os.close(fd)
                continue
            name = subfolders.pop()
            rel = base + name + "/"
            if fd >= 0:  # a folder unchanged since a walk read it, with no subfolders, is not opened
                try:
                    st = lstat(name, dir_fd=fd, follow_symlinks=False)
                except OSError:
                    continue
                key = (st.st_dev, st.st_ino)
                if not is_dir(st.st_mode) or key in seen:
                    continue  # swapped for a link (or else) since its folder was read; seen before
                read = reads.get(key)
                if (
                    read is not None
                    and not read.subfolders
                    and read.stamp == (st.st_ctime_ns, st.st_mtime_ns)
                    and found.count + read.size < MAX_WALK
                ):
                    seen.add(key)
                    _record(found, read, rel, True)
                    continue
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
            try:
                below = _record(found, _reading(child, st, found, on_fresh), rel, True)
            except BaseException:
                os.close(child)
                raise
            if len(stack) >= _HELD_DEPTH:
                os.close(child)
                child = -1
            stack.append((child, rel, below))
    finally:
        for fd, _, _ in stack:
            if fd >= 0:
                os.close(fd)
    return found


class _Read:
    """One folder's entries as a read found them (names only: the same wherever the folder is), and
    their relative paths under the last path the folder was walked at (built once, not each walk)."""

    __slots__ = ("_view", "controls", "files", "rest", "size", "stamp", "subfolders")

    def __init__(
        self,
        stamp: tuple[int, int],
        files: list[str],
        rest: list[tuple[str, EntryKind | None]],
        controls: tuple[str, ...] = (),
    ):
        self.stamp = stamp
        self.controls = controls
        """The folder's :data:`IGNORE_CONTROLS` names (read before the never-listed ones went)."""
        self.files: list[str] | None = files
        """The files' names until a view holds them (then None: :meth:`names`)."""
        self.subfolders = [name for name, kind in rest if kind is None]
        self.rest: Sequence[tuple[str, EntryKind]] = [(n, k) for n, k in rest if k is not None] or ()
        """Symlinks and others (not the folders: :attr:`subfolders`), in the folder's order; most
        folders have none, and then share one empty tuple (~1.5 MB less held for 13,000 folders)."""
        self.size = len(files) + len(rest)
        self._view: tuple[str, list[str], list[str], Sequence[tuple[str, EntryKind]]] | None = None

    def view(self, base: str) -> tuple[list[str], list[str], Sequence[tuple[str, EntryKind]]]:
        """Files, folders and the rest, relative, under ``base``."""
        view = self._view
        if view is None or view[0] != base:
            rest: Sequence[tuple[str, EntryKind]] = [(base + name, kind) for name, kind in self.rest] or ()
            view = (
                base,
                list(map(base.__add__, self.names())),
                list(map(base.__add__, self.subfolders)),
                rest,
            )
            self._view = view
            self.files = None  # the names are the paths' ends from now on: not held twice
        return view[1], view[2], view[3]

    def names(self) -> list[str]:
        """The files' names."""
        if self.files is not None:
            return self.files
        assert self._view is not None
        cut = len(self._view[0])
        return [path[cut:] for path in self._view[1]]


class _Reads:
    """The settled folders' reads by (device, inode); past :data:`MAX_WALK` entries, all let go."""

    def __init__(self) -> None:
        self.by_folder: dict[tuple[int, int], _Read] = {}
        self.held = 0

    def unchanged(self, st: os.stat_result, found: Walk) -> _Read | None:
        """The read of this folder if it has not changed since, and the walk has room for it."""
        read = self.by_folder.get((st.st_dev, st.st_ino))
        if (
            read is None
            or read.stamp != (st.st_ctime_ns, st.st_mtime_ns)
            or found.count + read.size >= MAX_WALK
        ):
            return None
        return read

    def keep(self, key: tuple[int, int], read: _Read) -> None:
        if self.held + read.size > MAX_WALK:
            self.by_folder.clear()
            self.held = 0
        self.by_folder[key] = read
        self.held += read.size


_READS = _Reads()


def _reading(fd: int, st: os.stat_result, found: Walk, on_fresh: Callable[[], None] | None = None) -> _Read:
    """The folder's entries: an earlier read while it has not changed, else a new read."""
    read = _READS.unchanged(st, found)
    if read is not None:
        return read
    found.fresh = True
    if on_fresh is not None:
        on_fresh()
    stamp = (st.st_ctime_ns, st.st_mtime_ns)
    read = _read(fd, stamp, MAX_WALK - found.count)
    if read is None:
        found.complete = False
        read = _read_cut(fd, stamp, MAX_WALK - found.count)
    return read


def _record(found: Walk, read: _Read, base: str, recursive: bool) -> list[str]:
    """Record one folder's entries (sizes are read later, for the page only); its subfolders to walk."""
    files, folders, others = read.view(base)
    found.count += read.size
    if files:
        found.batches.append((base, files))
    if read.controls:
        found.controls.append((base, read.controls))
    found.folders += folders
    found.others.update(others)
    return read.subfolders[::-1] if recursive else []  # popped from the end: walked in order


def _read(fd: int, stamp: tuple[int, int], budget: int) -> _Read | None:
    """Read a folder whole (kept for later walks once settled); None: it holds ``budget`` or more.

    The hot loop of a big tree's listing, so it does the least per entry: the type comes from the
    folder read itself, a file is only its name, and the names never listed are taken out after."""
    started = time.time_ns()
    files: list[str] = []
    rest: list[tuple[str, EntryKind | None]] = []
    add_file, add_rest = files.append, rest.append
    try:
        it = os.scandir(fd)
    except OSError:
        return _Read(stamp, files, rest)
    with it:
        for entry in it:
            try:
                if entry.is_file(follow_symlinks=False):
                    add_file(entry.name)
                elif entry.is_dir(follow_symlinks=False):
                    add_rest((entry.name, None))
                elif entry.is_symlink():
                    add_rest((entry.name, "symlink"))
                else:
                    add_rest((entry.name, "other"))
            except OSError:
                add_rest((entry.name, "other"))
    controls = _controls(files, rest)
    if not ALWAYS_SKIPPED.isdisjoint(files) or _TEMP_END in "\x00".join(files) + "\x00":
        files = [name for name in files if not _never_listed(name)]
    rest = [(name, kind) for name, kind in rest if not _never_listed(name)]
    if len(files) + len(rest) >= budget:
        return None  # the walk stops in this folder: reaching the bound is stopping there
    read = _Read(stamp, files, rest, controls)
    if max(stamp) < started - SETTLED_NS:
        st = os.fstat(fd)
        if (st.st_ctime_ns, st.st_mtime_ns) == stamp:  # not changed while it was read
            _READS.keep((st.st_dev, st.st_ino), read)
    return read


def _read_cut(fd: int, stamp: tuple[int, int], budget: int) -> _Read:
    """The first ``budget`` listed entries of a folder, in its order (the walk stops after them)."""
    files: list[str] = []
    rest: list[tuple[str, EntryKind | None]] = []
    controls: list[str] = []
    with os.scandir(fd) as it:
        for entry in it:
            name = entry.name
            if name in _CONTROL_SET:
                controls.append(name)
            if _never_listed(name):
                continue  # (temp names: our in-flight writes; a write or start-up sweeps stale ones)
            try:
                if entry.is_file(follow_symlinks=False):
                    files.append(name)
                elif entry.is_dir(follow_symlinks=False):
                    rest.append((name, None))
                elif entry.is_symlink():
                    rest.append((name, "symlink"))
                else:
                    rest.append((name, "other"))
            except OSError:
                rest.append((name, "other"))
            budget -= 1
            if budget <= 0:
                break
    return _Read(stamp, files, rest, tuple(controls))


def _controls(files: list[str], rest: list[tuple[str, EntryKind | None]]) -> tuple[str, ...]:
    """The :data:`IGNORE_CONTROLS` names among a folder's entries (a few C-speed scans of its files)."""
    found = [name for name in IGNORE_CONTROLS if name in files]
    found += [name for name, _ in rest if name in _CONTROL_SET]
    return tuple(found)


_TEMP_END = sandbox.TEMP_MARK + "\x00"


def _never_listed(name: str) -> bool:
    return name in ALWAYS_SKIPPED or sandbox.is_temp_name(name)

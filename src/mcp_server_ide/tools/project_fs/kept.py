"""What a recursive ``project_fs_list`` keeps of its walk: all but what .gitignore excludes, by
ripgrep's rules (the search tools' own).

ripgrep's ``--files`` runs while the walk runs (:class:`RipgrepFiles`: it walks in its own process,
so the two overlap; the walk reads its output between folders). Once the walk is done, the names
ripgrep printed are taken out of the set of the walk's files, a batch at a time as printed: what is
left are the files it did not name, and a pass over the folders (:meth:`IgnoreFilter.apply`) does
the rest. No set of ripgrep's names is built and nothing is filtered name by name in Python. What
the filter needs of the walk alone (its names sorted, the folders holding files) is kept for the
next listing and used again while its walk finds the same (an unchanged tree).

What a listing kept is remembered too (:func:`remember`), with the stamps of every ignore file that
bears on it. While none of them changed, the next listing of the same folder does not run ripgrep
beside its walk: it takes the remembered answer if its walk read no folder anew either
(:func:`remembered`), and otherwise brings it up to date, ripgrep asked only about the files of
the folders that changed (:mod:`.since`; :func:`prepared_since` for the sorted names). ripgrep's
answer depends only on the folders' entries and those files' contents.
"""

from __future__ import annotations

import itertools
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from ...engines import sandbox, search
from . import walk as _walk
from .walk import IGNORE_CONTROLS, EntryKind, Walk


class RipgrepFiles:
    """The files ripgrep keeps, taken out of the walk's files as ripgrep prints them. The walk calls
    :meth:`poll` between folders (on its own thread), which reads what ripgrep has printed so far;
    until :meth:`into` names the set to take them out of, the output waits as printed. Without
    ``started``, ripgrep starts at :meth:`start` (or :meth:`into`), not at once."""

    def __init__(self, root: Path, *, started: bool = True) -> None:
        self._root = root
        self._files: set[str] = set()
        self._rg: search.StreamedFiles | None = None
        self.started_ns = 0
        """When ripgrep started (``time.time_ns``; 0: not yet)."""
        if started:
            self.start()

    @property
    def started(self) -> bool:
        return self._rg is not None

    def start(self) -> None:
        """Start ripgrep, unless it runs already."""
        if self._rg is None:
            self.started_ns = time.time_ns()
            # No swapped-folder check: the names only filter the walk, which never follows a link,
            # so a name from beyond a folder swapped for a link matches nothing.
            self._rg = search.StreamedFiles(self._root, self._take, held=True)

    def poll(self) -> None:
        if self._rg is not None:
            self._rg.poll()

    def _take(self, names: list[str]) -> None:
        self._files.difference_update(names)

    def into(self, files: set[str]) -> None:
        """Take every name ripgrep prints, so far and from now on, out of ``files``."""
        self._files = files
        self.start()
        assert self._rg is not None
        self._rg.release()

    def finish(self) -> bool:
        """Read ripgrep to the end; whether it listed every file (it was not stopped early)."""
        self.start()
        assert self._rg is not None
        try:
            return self._rg.finish() is None
        finally:
            self._files = set()  # ripgrep's reader refers back here: the walk's files go now, not at a gc

    def stop(self) -> None:
        """Stop ripgrep (the listing failed)."""
        self._files = set()
        if self._rg is not None:
            self._rg.stop()


@dataclass
class Kept:
    """What a recursive listing keeps: every walked name but ``excluded``, in order."""

    ordered: list[str]
    """Every name the walk found (files, folders, the rest), sorted."""
    excluded: set[str]
    folders: set[str]
    others: dict[str, EntryKind]

    @property
    def total(self) -> int:
        return len(self.ordered) - len(self.excluded)

    def page(self, offset: int, count: int) -> list[str]:
        kept = itertools.filterfalse(self.excluded.__contains__, self.ordered)
        return list(itertools.islice(kept, offset, offset + count))


class IgnoreFilter:
    """The filter of one listing: what it needs of the walk alone is made while ripgrep still runs
    (the walk's names sorted, its files, the folders holding them), the rest once ripgrep is done."""

    def __init__(
        self,
        resolved: sandbox.Resolved,
        found: Walk,
        prepared: _Prepared | None = None,
        excluded: set[str] | None = None,
    ) -> None:
        global _last
        self._top = resolved.rel + "/" if resolved.rel else ""
        self.found = found
        if prepared is None:
            key = (str(resolved.root), resolved.rel)
            prepared = _last
            if prepared is None or prepared.key != key or not _same(prepared.found, found):
                prepared = _prepare(key, found)
        _last = prepared
        self.prepared = prepared
        self.excluded = set(found.files()) if excluded is None else excluded
        """The walk's files, until ripgrep's names are taken out of it (:meth:`RipgrepFiles.into`);
        or, given, only the files ripgrep did not name already (:func:`.since.update`)."""

    def apply(self) -> Kept:
        """Once :attr:`excluded` holds only the files ripgrep did not name: a folder is kept when it
        holds a kept file, or no file at all (an empty folder cannot be told apart), and only
        inside a kept folder; a symlink or other entry is kept when its folder is."""
        found, made = self.found, self.prepared
        # A set keeps its size as names are taken out (ripgrep's): a copy holds only what is left
        # (~0.5 MB, not 2 MB, for 100,000 files of which 10,000 are left), and it is kept.
        excluded = self.excluded = set(self.excluded)
        holding_files = made.holding_files
        if not excluded:  # nothing ignored: every folder holding files keeps one
            holding_kept = holding_files
        else:
            holding_kept = _with_ancestors(
                {folder for folder, rels in found.batches if not excluded.issuperset(rels)}
            )
        kept_folders = {self._top}
        folders = set()
        for rel in found.folders:  # parents come first
            key, parent = rel + "/", rel[: rel.rfind("/") + 1]
            if parent in kept_folders and (key in holding_kept or key not in holding_files):
                kept_folders.add(key)
                folders.add(rel)
            else:
                excluded.add(rel)
        others: dict[str, EntryKind] = {}
        for rel, kind in found.others.items():
            if rel[: rel.rfind("/") + 1] in kept_folders:
                others[rel] = kind
            else:
                excluded.add(rel)
        return Kept(ordered=made.ordered, excluded=excluded, folders=folders, others=others)


@dataclass(frozen=True)
class _Prepared:
    """What the filter needs of a walk alone (never changed once made: later listings share it)."""

    key: tuple[str, str]
    """The root and the listed folder."""
    found: Walk
    ordered: list[str]
    """Every name the walk found, sorted."""
    holding_files: set[str]
    """The folders ("a/b/", the top "") holding a file, and every folder above them."""


_last: _Prepared | None = None
"""The last walk's, used again while walks find the same (an unchanged tree)."""


def _prepare(key: tuple[str, str], found: Walk) -> _Prepared:
    return _Prepared(
        key=key,
        found=found,
        ordered=sorted(found.files() + found.folders + list(found.others)),
        holding_files=_with_ancestors({folder for folder, _ in found.batches}),
    )


def prepared_since(
    made: _Prepared,
    found: Walk,
    changed: list[tuple[str, list[str], list[str] | None]],
    gone: list[list[str]],
) -> _Prepared:
    """``made`` (of an earlier walk of the same folder) brought up to date for ``found``, rather than
    made anew: the names gone are taken out of the sorted names, the new ones sorted in (Timsort
    merges a few new names into a sorted list in about one pass). ``changed``: each folder holding
    files whose list is not the earlier walk's (its files now, and before: None, it held none);
    ``gone``: the files of each folder that held some and holds none now."""
    before = made.found
    removed: set[str] = set()
    added: list[str] = []
    for _, files, prev in changed:
        if prev is None:
            added += files
        else:
            now, then = set(files), set(prev)
            removed |= then - now
            added += now - then
    for prev in gone:
        removed.update(prev)
    if found.folders != before.folders:
        now, then = set(found.folders), set(before.folders)
        removed |= then - now
        added += now - then
    if found.others.keys() != before.others.keys():
        removed |= before.others.keys() - found.others.keys()
        added += found.others.keys() - before.others.keys()
    ordered = made.ordered
    if removed or added:
        ordered = list(itertools.filterfalse(removed.__contains__, ordered)) if removed else ordered.copy()
        ordered += added
        ordered.sort()
    if len(ordered) != found.count:  # not what the walk found (it cannot be): made anew
        return _prepare(made.key, found)
    holding_files = made.holding_files
    if gone or any(prev is None for _, _, prev in changed):
        holding_files = _with_ancestors({folder for folder, _ in found.batches})
    return _Prepared(key=made.key, found=found, ordered=ordered, holding_files=holding_files)


def _same(a: Walk, b: Walk) -> bool:
    """Whether two walks found the same (a folder read again unchanged gives the very same lists, so
    this is mostly comparing references: ~1 ms for 100,000 files)."""
    return (
        a.count == b.count
        and a.complete == b.complete
        and a.others == b.others
        and a.folders == b.folders
        and a.batches == b.batches
    )


def _with_ancestors(folders: set[str]) -> set[str]:
    """The folders (relative, "a/b/"; the root "") and every folder above them."""
    out = set(folders)
    for folder in folders:
        parent = folder[: folder.rfind("/", 0, len(folder) - 1) + 1]
        while parent not in out:
            out.add(parent)
            parent = parent[: parent.rfind("/", 0, len(parent) - 1) + 1]
    return out


Stamp = tuple[int, int, int, int, int] | None
"""An ignore file's device, inode, size, modification and change times (None: there is none)."""


@dataclass(frozen=True)
class Remembered:
    key: tuple[str, str]
    prepared: _Prepared
    stamps: dict[str, Stamp]
    kept: Kept


_remembered: Remembered | None = None
"""The last complete listing's answer, while its walk and its ignore files stay as they were."""


def remembers(resolved: sandbox.Resolved) -> bool:
    """Whether a listing of this folder is remembered and no ignore file bearing on it has changed
    since (looked at now): once the walk is done, its answer may then stand (:func:`remembered`) or
    be brought up to date (:func:`.since.update`), so ripgrep need not run beside the walk."""
    memo = remembered_listing(resolved)
    return memo is not None and ignore_stamps(resolved, memo.prepared.found) == memo.stamps


def remembered_listing(resolved: sandbox.Resolved) -> Remembered | None:
    """The remembered listing, if it is of this folder."""
    memo = _remembered
    return memo if memo is not None and memo.key == (str(resolved.root), resolved.rel) else None


def remembered(resolved: sandbox.Resolved, found: Walk, stamps: dict[str, Stamp] | None) -> Kept | None:
    """The remembered listing's answer, when ``found`` read no folder anew, found what its walk
    found, and no ignore file bearing on it has changed since (``stamps``: theirs now, of
    :func:`ignore_stamps`); else None (ripgrep must run)."""
    memo = remembered_listing(resolved)
    if memo is None or found.fresh or not _same(memo.prepared.found, found):
        return None
    return memo.kept if stamps is not None and stamps == memo.stamps else None


def remember(resolved: sandbox.Resolved, ignores: IgnoreFilter, kept: Kept, ripgrep_started_ns: int) -> None:
    """Remember a complete listing's answer (``kept``, of ``ignores`` once ripgrep ran to the end,
    started at ``ripgrep_started_ns``), unless an ignore file bearing on it changed too recently to
    tell a later change by its times (:data:`.walk.SETTLED_NS`, as the walk's own reads)."""
    global _remembered
    _remembered = None
    made = ignores.prepared
    stamps = ignore_stamps(resolved, ignores.found)
    if stamps is None:
        return
    settled = ripgrep_started_ns - _walk.SETTLED_NS
    if any(s is not None and max(s[3], s[4]) >= settled for s in stamps.values()):
        return
    _remembered = Remembered(key=made.key, prepared=made, stamps=stamps, kept=kept)


def ignore_stamps(resolved: sandbox.Resolved, found: Walk) -> dict[str, Stamp] | None:
    """The stamps of every ignore file ripgrep reads for the listed folder: those of the folders the
    walk found holding one, and of the folders above it up to the root (where there may be none).
    None: one cannot be told (a ``.git`` that is not a folder: a worktree's or a submodule's)."""
    root = str(resolved.root) + os.sep
    bases: list[tuple[str, tuple[str, ...]]] = []
    if resolved.rel:
        parts = resolved.rel.split("/")
        bases += [("".join(p + "/" for p in parts[:i]), IGNORE_CONTROLS) for i in range(len(parts))]
    bases += found.controls
    stamps: dict[str, Stamp] = {}
    for base, names in bases:
        for name in names:
            rel = base + name
            if name == ".git":
                try:
                    if not stat.S_ISDIR(os.lstat(root + rel).st_mode):
                        return None
                except FileNotFoundError:
                    continue
                except OSError:
                    return None
                rel += "/info/exclude"
            try:
                st = os.stat(root + rel)
            except FileNotFoundError:
                stamps[rel] = None
                continue
            except OSError:
                return None
            stamps[rel] = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    return stamps

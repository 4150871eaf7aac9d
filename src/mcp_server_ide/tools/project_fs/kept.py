"""What a recursive ``project_fs_list`` keeps of its walk: all but what .gitignore excludes, by
ripgrep's rules (the search tools' own).

ripgrep's ``--files`` runs while the walk runs (:class:`RipgrepFiles`: it walks in its own process,
so the two overlap; the walk reads its output between folders). Once the walk is done, the names
ripgrep printed are taken out of the set of the walk's files, a batch at a time as printed: what is
left are the files it did not name, and a pass over the folders (:meth:`IgnoreFilter.apply`) does
the rest. No set of ripgrep's names is built and nothing is filtered name by name in Python. What
the filter needs of the walk alone (its names sorted, the folders holding files) is kept for the
next listing and used again while its walk finds the same (an unchanged tree).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

from ...engines import sandbox, search
from .walk import EntryKind, Walk


class RipgrepFiles:
    """The files ripgrep keeps, taken out of the walk's files as ripgrep prints them. The walk calls
    :meth:`poll` between folders (on its own thread), which reads what ripgrep has printed so far;
    until :meth:`into` names the set to take them out of, the output waits as printed."""

    def __init__(self, root: Path) -> None:
        self._files: set[str] = set()
        # No swapped-folder check: the names only filter the walk, which never follows a link,
        # so a name from beyond a folder swapped for a link matches nothing.
        self._rg = search.StreamedFiles(root, self._take, held=True)
        self.poll = self._rg.poll

    def _take(self, names: list[str]) -> None:
        self._files.difference_update(names)

    def into(self, files: set[str]) -> None:
        """Take every name ripgrep prints, so far and from now on, out of ``files``."""
        self._files = files
        self._rg.release()

    def finish(self) -> bool:
        """Read ripgrep to the end; whether it listed every file (it was not stopped early)."""
        try:
            return self._rg.finish() is None
        finally:
            self._files = set()  # ripgrep's reader refers back here: the walk's files go now, not at a gc

    def stop(self) -> None:
        """Stop ripgrep (the listing failed)."""
        self._files = set()
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

    def __init__(self, resolved: sandbox.Resolved, found: Walk) -> None:
        global _last
        self._top = resolved.rel + "/" if resolved.rel else ""
        self._found = found
        key = (str(resolved.root), resolved.rel)
        made = _last
        if made is None or made.key != key or not _same(made.found, found):
            files = found.files()
            made = _Prepared(
                key=key,
                found=found,
                ordered=sorted(files + found.folders + list(found.others)),
                holding_files=_with_ancestors({folder for folder, _ in found.batches}),
                folder_keys=[(rel, rel + "/", rel[: rel.rfind("/") + 1]) for rel in found.folders],
            )
            _last = made
        self._made = made
        self.excluded = set(found.files())
        """The walk's files, until ripgrep's names are taken out of it (:meth:`RipgrepFiles.into`)."""

    def apply(self) -> Kept:
        """Once :attr:`excluded` holds only the files ripgrep did not name: a folder is kept when it
        holds a kept file, or no file at all (an empty folder cannot be told apart), and only
        inside a kept folder; a symlink or other entry is kept when its folder is."""
        found, made, excluded = self._found, self._made, self.excluded
        holding_files = made.holding_files
        if not excluded:  # nothing ignored: every folder holding files keeps one
            holding_kept = holding_files
        else:
            holding_kept = _with_ancestors(
                {folder for folder, rels in found.batches if not excluded.issuperset(rels)}
            )
        kept_folders = {self._top}
        folders = set()
        for rel, key, parent in made.folder_keys:  # parents come first
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
    folder_keys: list[tuple[str, str, str]]
    """Each folder ("a/b"), parents first, with its key ("a/b/") and its parent's ("a/")."""


_last: _Prepared | None = None
"""The last walk's, used again while walks find the same (an unchanged tree)."""


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

"""A recursive ``project_fs_list`` right after a change: the remembered listing (:func:`.kept.remember`)
brought up to date, ripgrep asked again only about the files of the folders that changed.

ripgrep's verdict on a file depends on its path and on the ignore files of the folders above it up
to the root, nothing else (``--no-ignore-parent``, ``--no-ignore-global``: none above the root, none
of the user's). So while no ignore file changed (their stamps as remembered), a file of a folder the
walk found as the remembered walk did (the very same read, at the same path: :mod:`.walk` keeps a
read only while its folder's times stay) keeps the verdict it had. The files of the other folders
(read anew, new, moved) go to ripgrep again: from the root, with the same flags, told not to enter
any folder that is neither one of them nor above one (:func:`.search.files_skipping`: overrides
that only take entries out), so it reads the same ignore files on the way and names of those files
what a whole run would. The folders and the rest are then decided from the files as after a whole
run (:meth:`.kept.IgnoreFilter.apply`), and the sorted names are brought up to date rather than
sorted anew (:func:`.kept.prepared_since`).

Anything else (an ignore file changed, the walk stopped short, a name ripgrep cannot take as a glob,
ripgrep failing) returns None: the listing then runs ripgrep over the whole tree as before.
"""

from __future__ import annotations

import itertools
import os
import time

from ...engines import sandbox, search
from . import kept
from .kept import IgnoreFilter, Stamp
from .walk import ALWAYS_SKIPPED, Walk

_refused: tuple[str, str] | None = None
"""The root and folder whose last listing could not be brought up to date for a reason that stays
(a folder name ripgrep cannot take as a glob, too many folders to skip, ripgrep failing)."""

MAX_SKIPPED_CHARS = 256 * 1024
"""The folders to skip take at most this many characters of ripgrep's command line (Linux allows
2 MB of arguments in all); past it (a folder of thousands of subfolders), a whole run."""


def update(
    resolved: sandbox.Resolved, found: Walk, stamps: dict[str, Stamp] | None
) -> tuple[IgnoreFilter, int] | None:
    """The filter of this listing, its :attr:`~.kept.IgnoreFilter.excluded` holding the walk's files
    ripgrep does not name (ready for :meth:`~.kept.IgnoreFilter.apply`), and when ripgrep started
    (``time.time_ns``); None when the remembered listing cannot be brought up to date. ``stamps``:
    the ignore files' now (:func:`.kept.ignore_stamps` of ``found``)."""
    global _refused
    memo = kept.remembered_listing(resolved)
    if memo is None or os.sep != "/" or not found.complete or stamps is None or stamps != memo.stamps:
        return None
    key = memo.key
    earlier = dict(memo.prepared.found.batches)
    same: list[list[str]] = []
    changed: list[tuple[str, list[str], list[str] | None]] = []
    for base, files in found.batches:
        prev = earlier.pop(base, None)
        if prev is files:
            same.append(files)
        else:
            changed.append((base, files, prev))
    started = time.time_ns()
    named: set[str] = set()
    if changed:
        skipped = _skipped(resolved, found, [base for base, _, _ in changed])
        answer = None if skipped is None else search.files_skipping(resolved.root, skipped)
        if answer is None:
            _refused = key
            return None
        named = answer
    _refused = None
    was = memo.kept.excluded
    excluded: set[str] = set()
    for files in same:
        if not was.isdisjoint(files):
            excluded.update(was.intersection(files))
    for _, files, _ in changed:
        excluded.update(itertools.filterfalse(named.__contains__, files))
    prepared = kept.prepared_since(memo.prepared, found, changed, list(earlier.values()))
    return IgnoreFilter(resolved, found, prepared, excluded), started


def refused(resolved: sandbox.Resolved) -> bool:
    """Whether the last listing of this folder could not be brought up to date for a reason that
    stays: the next one had better run ripgrep beside its walk, as soon as it reads a folder anew."""
    return _refused == (str(resolved.root), resolved.rel)


def _skipped(resolved: sandbox.Resolved, found: Walk, bases: list[str]) -> list[str] | None:
    """The folders ripgrep need not enter to name the files of ``bases`` ("a/b/", the root ""): each
    folder the walk found (and, listing a folder below the root, each folder beside the ones above
    it) that is neither one of them nor above one. None: too many to give ripgrep, or a folder above
    could not be read."""
    needed = {""}
    for base in bases:
        while base not in needed:
            needed.add(base)
            base = base[: base.rfind("/", 0, len(base) - 1) + 1]
    skipped = [
        rel for rel in found.folders if rel[: rel.rfind("/") + 1] in needed and rel + "/" not in needed
    ]
    if resolved.rel:
        beside = _beside_the_way(resolved)
        if beside is None:
            return None
        skipped += beside
    if sum(map(len, skipped)) > MAX_SKIPPED_CHARS:
        return None
    return skipped


def _beside_the_way(resolved: sandbox.Resolved) -> list[str] | None:
    """The folders in the folders above the listed one (from the root down) that are not on the way
    to it (ripgrep skips ``.git``, ``node_modules`` and ``dist`` itself); None: one could not be read."""
    parts = resolved.rel.split("/")
    out: list[str] = []
    for depth, next_part in enumerate(parts):
        above = "/".join(parts[:depth])
        prefix = above + "/" if above else ""
        try:
            fd = sandbox.open_listing(resolved.root, above)
        except OSError:
            return None
        try:
            with os.scandir(fd) as entries:
                for entry in entries:
                    name = entry.name
                    if (
                        name != next_part
                        and name not in ALWAYS_SKIPPED
                        and entry.is_dir(follow_symlinks=False)
                    ):
                        out.append(prefix + name)
        except OSError:
            return None
        finally:
            os.close(fd)
    return out

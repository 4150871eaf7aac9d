"""Writing old bytes back: undo entries, restore checkpoints.

- **undo** an entry: write back its ``before`` bytes, only when the file still holds its ``after``
  bytes (anything else means other hands changed it since; refused unless forced).
- **restore** a checkpoint: write every journaled file (or some) back to its state at the checkpoint,
  byte-identical; created files are deleted, deleted ones re-created.

Both check every file first and change nothing when one conflicts. The writes go through
:func:`.textio.write_file` / :func:`.textio.delete_file`, so they are journaled themselves
(``kind="undo"``, ``undoes=<id>``, or ``kind="restore"``, ``checkpoint=<name>``), and undoing an undo
is a redo. The folders a creation made go again with it when they are left empty.
"""

from __future__ import annotations

import os
from typing import Unpack

from ..failures import ToolFailure
from ..textio import content_hash
from .checkpoints import compare
from .core import JournalCore
from .log import Mark, capturing, marking
from .paths import hash_now, remove_made_folders
from .records import ABSENT, UNREADABLE, Checkpoint, Entry, FileState


def undone_ids_in(entries: list[Entry]) -> set[int]:
    """Entries currently reversed: undone by an undo that has not itself been undone."""
    undone: set[int] = set()
    for e in reversed(entries):
        if e.kind == "undo" and e.id not in undone and e.undoes is not None:
            undone.add(e.undoes)
    return undone


def undone_by_in(entries: list[Entry]) -> dict[int, int]:
    """Entry id -> the id of the undo that reverses it now."""
    by: dict[int, int] = {}
    undone = undone_ids_in(entries)
    for e in entries:
        if e.kind == "undo" and e.undoes in undone and e.id not in undone and e.undoes is not None:
            by[e.undoes] = e.id
    return by


def undo_entries(
    j: JournalCore, ids: list[int] | None = None, last: int | None = None, force: bool = False
) -> list[tuple[Entry, Entry | None]]:
    """Reverse the entries ``ids`` (newest first) or the last ``last`` live edits.

    Returns ``(undone entry, new undo entry)`` pairs (the new entry is None when the file
    already held the wanted bytes). Raises a conflict, changing nothing, when a file no longer
    holds what the journal wrote (unless ``force``).
    """
    with j.op:
        plan = _undo_plan(j, ids, last)
        sim: dict[str, str] = {}
        problems: list[str] = []
        for e in plan:
            if e.path not in sim:
                sim[e.path] = hash_now(j.ws, e.path)
                if sim[e.path] == UNREADABLE:
                    problems.append(f"{e.path!r} cannot be read now (not a regular file, or a folder)")
                    continue
            if sim[e.path] != e.after and not force:
                problems.append(_why_differs(j, e, sim[e.path]))
            sim[e.path] = e.before
        if problems:
            raise ToolFailure(
                "conflict: nothing was undone, because "
                + "; ".join(problems)
                + " (rule: undo never overwrites changes made by other hands; read the file and redo the edit "
                "yourself, or pass force: true to overwrite them)",
                kind="conflict",
            )
        done: list[tuple[Entry, Entry | None]] = []
        emptied: list[str] = []
        for e in plan:
            new = write_back(j, e.path, e.before, kind="undo", undoes=e.id, expect=None if force else e.after)
            done.append((e, new))
            if e.before == ABSENT:  # undoing a creation: the folders made for it go too, if empty
                emptied.extend(e.made_folders)
        _ = remove_made_folders(j.ws, emptied)
        return done


def _undo_plan(j: JournalCore, ids: list[int] | None, last: int | None) -> list[Entry]:
    entries = j.entries()
    if ids:
        plan: list[Entry] = []
        for entry_id in sorted(set(ids), reverse=True):
            e = j.entry(entry_id)
            if e is None:
                kept = f"#{entries[0].id}..#{entries[-1].id}" if entries else "none"
                raise ToolFailure(
                    f"not found: there is no change #{entry_id} in the journal (changes kept: {kept}; older "
                    "ones were pruned; list them with list_recent_changes)",
                    kind="not_found",
                )
            plan.append(e)
        return plan
    count = last or 1
    undone = undone_ids_in(j.entries())
    live = [e for e in reversed(entries) if e.kind != "undo" and e.id not in undone]
    if not live:
        raise ToolFailure(
            "not found: there is no change left to undo (rule: undo reverses the journal's own changes; "
            "list them with list_recent_changes)",
            kind="not_found",
        )
    return live[:count]


def _why_differs(j: JournalCore, e: Entry, now: str) -> str:
    by = undone_by_in(j.entries()).get(e.id)
    if by is not None and now == e.before:
        return f"change #{e.id} to {e.path!r} was already undone by #{by}"
    entries = j.entries()
    later = [x for x in entries if x.path == e.path and x.id > e.id]
    undone = undone_ids_in(entries)
    live_later = [x.id for x in later if x.id not in undone and x.kind != "undo"]
    what = "has been deleted" if now == ABSENT else "holds other bytes"
    if later and later[-1].after == now:
        ids = ", ".join(f"#{i}" for i in live_later) or ", ".join(f"#{x.id}" for x in later)
        return (
            f"{e.path!r} was changed again after #{e.id} by later changes ({ids}); undo those first, "
            "or restore a checkpoint"
        )
    return f"{e.path!r} {what} than change #{e.id} left (it was changed outside the server since)"


def restore_states(
    j: JournalCore, cp: Checkpoint, paths: list[str] | None = None, force: bool = False
) -> list[tuple[FileState, Entry | None]]:
    """Write every journaled file (or ``paths``) back to its state at ``cp``; all or nothing on conflicts."""
    with j.op:
        states = [s for s in compare(j, cp, paths) if s.changed]
        if paths:
            known = {s.path for s in compare(j, cp, None)}
            missing = [p for p in paths if j.user_path(p) not in known]
            if missing:
                raise ToolFailure(
                    f"not found: {', '.join(map(repr, missing))} never changed through this server "
                    "(rule: the journal restores only files it recorded)",
                    kind="not_found",
                )
        conflicts = [s for s in states if s.outside]
        if conflicts and not force:
            names = ", ".join(repr(s.path) for s in conflicts)
            raise ToolFailure(
                f"conflict: nothing was restored, because {names} changed outside the server since the journal "
                "last saw them (rule: restore never overwrites changes made by other hands; pass force: true "
                "to overwrite them, or keep_changes to make their current content part of the checkpoint)",
                kind="conflict",
            )
        done: list[tuple[FileState, Entry | None]] = []
        emptied: list[str] = []
        for s in states:
            new = write_back(
                j, s.path, s.target, kind="restore", checkpoint=cp.name, expect=None if force else s.current
            )
            done.append((s, new))
            if s.target == ABSENT:  # a file made since the checkpoint: and the folders made for it
                emptied.extend(_created_folders(j.entries(), s.path, cp.last_entry))
        _ = remove_made_folders(j.ws, emptied)
        return done


def write_back(
    j: JournalCore, path: str, target: str, *, expect: str | None, **mark: Unpack[Mark]
) -> Entry | None:
    """Put the bytes ``target`` (or no file) at ``path``, through textio, journaled with ``mark``.

    ``expect``: the hash the file must hold now (None: anything); the new entry, None when the file
    already held ``target``."""
    from .. import sandbox, textio

    resolved = sandbox.resolve_for_write(j.ws, path)
    data = j.blob(target)
    with textio.file_lock(resolved.path), marking(**mark):
        exists = os.path.lexists(resolved.path)
        current, mode = textio.current_bytes(j.ws, resolved) if exists else (None, None)
        now = ABSENT if current is None else content_hash(current)
        if expect is not None and now != expect:
            raise ToolFailure(
                f"conflict: {path!r} changed while the journal was writing it back; it was left as it is "
                "(files handled before it were already written: see list_recent_changes)",
                kind="conflict",
            )
        if now == target:
            return None
        with capturing() as recorded:
            if data is None:
                textio.delete_file(j.ws, resolved, before=current)
            elif current is None:
                textio.write_file(
                    j.ws,
                    resolved,
                    data,
                    before=None,
                    mode=_mode_for(j.entries(), path, target),
                    exclusive=True,
                    make_parents=True,
                )
            else:
                textio.write_file(j.ws, resolved, data, before=current, mode=mode)
        return recorded[-1] if recorded else None


def _mode_for(entries: list[Entry], path: str, digest: str) -> int | None:
    """The permission bits the file had when it last held ``digest``."""
    for e in reversed(entries):
        if e.path == path and e.after == digest and e.mode is not None:
            return e.mode
    return None


def _created_folders(entries: list[Entry], path: str, after_entry: int) -> list[str]:
    """The folders made by the creations of ``path`` after entry ``after_entry``."""
    return [
        folder
        for e in entries
        if e.path == path and e.id > after_entry and e.before == ABSENT
        for folder in e.made_folders
    ]

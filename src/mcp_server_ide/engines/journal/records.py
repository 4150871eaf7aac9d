"""What the journal's logs hold: entries, checkpoint records, and a file compared with a checkpoint.

A log line is a record's fields as one JSON object (:func:`row`); :func:`entry_from` and
:func:`checkpoint_from` read one back. A rewritten entries log starts with an id mark
(``{"last_id": N}``, :func:`id_mark`) so that ids go on after the largest one ever given.
"""

from __future__ import annotations

import datetime as _dt
import enum
import json
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import Literal

from .linelog import Row

ABSENT = "absent"
"""The hash of "no file": before a creation, after a deletion."""
START = "start"
"""The implicit checkpoint before the first journaled change."""
UNREADABLE = "unreadable"
"""The hash of a file that cannot be read now (not a regular file, or outside the sandbox)."""

Kind = Literal["edit", "undo", "restore"]
Action = Literal["created", "modified", "deleted"]


class Unreadable(enum.Enum):
    """The one value of :data:`UNREADABLE_FILE` (an enum, so a type checker can tell it from bytes)."""

    FILE = "unreadable"


UNREADABLE_FILE = Unreadable.FILE
"""What reading a journaled file gives when it cannot be read now (None: it does not exist)."""


@dataclass(frozen=True)
class Entry:
    id: int
    time: float
    tool: str
    door: str
    arguments: dict[str, object]
    path: str
    before: str
    """SHA-256 of the bytes before the change, or "absent" when the change created the file."""
    after: str
    """SHA-256 of the bytes after the change, or "absent" when the change deleted the file."""
    kind: Kind = "edit"
    """"edit" (a tool changed the file), "undo" (the journal reversed entry ``undoes``) or
    "restore" (the journal restored ``checkpoint``)."""
    undoes: int | None = None
    checkpoint: str | None = None
    mode: int | None = None
    """The file's permission bits after the change (None when it was deleted)."""
    made_folders: tuple[str, ...] = ()
    """Folders the change made to hold the file (journal paths, parents first): undoing the creation
    removes them again when they are empty."""

    @property
    def action(self) -> Action:
        if self.before == ABSENT:
            return "created"
        if self.after == ABSENT:
            return "deleted"
        return "modified"


@dataclass(frozen=True)
class Checkpoint:
    name: str
    time: float
    last_entry: int
    """Entries with a larger id happened after the checkpoint."""
    files: dict[str, str] = field(default_factory=dict)
    """Path -> hash (or "absent") of the files the journal knew, as they were at the checkpoint."""
    observed: int = 0
    """The last entry id when this record was written (``keep`` writes newer records of a checkpoint)."""
    description: str = ""
    seen: dict[str, str] = field(default_factory=dict)
    """Path -> hash of the files whose bytes were read when this record was written (what the journal
    last saw of them, for telling changes by other hands)."""


@dataclass(frozen=True)
class FileState:
    """One journaled file compared with a checkpoint."""

    path: str
    target: str
    """The hash the checkpoint holds for it ("absent": it did not exist)."""
    current: str
    """The hash of its bytes now ("absent": it does not exist)."""
    known: str
    """The hash the journal last saw (after its last change, or a checkpoint's snapshot)."""
    entries: tuple[int, ...]
    """Ids of the journal entries for this file after the checkpoint."""

    @property
    def changed(self) -> bool:
        return self.target != self.current

    @property
    def outside(self) -> bool:
        """True when the file changed by other hands since the journal last saw it."""
        return self.current != self.known


def iso_time(t: float) -> str:
    return _dt.datetime.fromtimestamp(t, tz=_dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def journaled_paths(entries: list[Entry]) -> list[str]:
    """The paths the entries changed, each once, in the order they were first changed."""
    seen: dict[str, None] = {}
    for e in entries:
        seen.setdefault(e.path, None)
    return list(seen)


def checkpoint_blobs(cp: Checkpoint) -> set[str]:
    """The stored contents a checkpoint record refers to."""
    return set(cp.files.values()) | set(cp.seen.values())


# ---------------------------------------------------------------------- log lines


def row(item: Entry | Checkpoint) -> Row:
    """A log line's object: the dataclass's fields, shallow (``asdict`` deep-copies, ten times slower)."""
    return {f.name: getattr(item, f.name) for f in fields(item)}


def line_size(item: Row) -> int:
    return len(json.dumps(item, ensure_ascii=True)) + 1


def entry_from(item: Row) -> Entry | None:
    """An entries log line's entry (None for the id mark); a line of another shape raises TypeError."""
    if id_mark_of(item) is not None:
        return None
    folders = item.get("made_folders") or ()
    if not isinstance(folders, Iterable):
        raise TypeError("made_folders is not a list")  # as tuple() would say: the line is skipped
    item["made_folders"] = tuple(folders)
    return Entry(**item)  # pyright: ignore[reportArgumentType]  # the log's JSON: a wrong key raises TypeError


def checkpoint_from(item: Row) -> Checkpoint:
    return Checkpoint(**item)  # pyright: ignore[reportArgumentType]  # the log's JSON: a wrong key raises TypeError


def id_mark(last_id: int) -> Row:
    """The first line of a rewritten log: the largest id given so far (ids are never given twice)."""
    return {"last_id": last_id}


def id_mark_of(item: Row) -> int | None:
    value = item.get("last_id") if len(item) == 1 else None
    return value if isinstance(value, int) else None


def last_id_of(item: Row) -> int:
    """The id a log line gives (an entry's, or the mark's), 0 for anything else."""
    value = id_mark_of(item)
    if value is None:
        value = item.get("id")
    return value if isinstance(value, int) else 0

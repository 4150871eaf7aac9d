"""The journal's two logs: entries (one line per change, and their ids) and checkpoint records.

Both are shared by every server on the workspace and read incrementally (:mod:`.linelog`).

Ids are allocated from what is on disk, under the journal's lock file (:meth:`EntryLog.load` then
``last_id + 1``), so two servers never give the same one; they are never reused, even after a pruning
or a ``journal clear``: a rewritten log starts with an id mark giving the largest id so far.

Also here: the marks an entry recorded inside :func:`marking` carries (the journal's own undo and
restore writes), and :func:`capturing`, which hands a block the entries it recorded.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import TypedDict, Unpack

from .linelog import LineLog, Row
from .records import Checkpoint, Entry, Kind, checkpoint_from, entry_from, id_mark, id_mark_of, row


class EntryLog:
    def __init__(self, path: Path) -> None:
        self.path: Path = path
        self.last_id: int = 0
        """The largest entry id this server knows was given (the log's, or the pruned-through mark)."""
        self.lines: LineLog[Entry] = LineLog(path, self._parse)

    def load(self) -> list[Entry]:
        """The entries as on disk now (the caller orders its threads): other servers' appends are read in.
        The list is the log's own: copy it to keep it."""
        _ = self.lines.refresh()
        entries = self.lines.items
        if entries and entries[-1].id > self.last_id:
            self.last_id = entries[-1].id
        return entries

    @property
    def sizes(self) -> list[int]:
        """The bytes of each entry's line, beside :meth:`load`'s list."""
        return self.lines.sizes

    def append(self, entry: Entry) -> int:
        """Append one entry (holding the lock file, just after :meth:`load`); returns its line's bytes."""
        return self.lines.append(row(entry))

    def rewrite(self, kept: list[Entry]) -> None:
        """Replace the log by ``kept``, after an id mark (holding the lock file)."""
        self.lines.rewrite([row(e) for e in kept], kept, header=id_mark(self.last_id))

    def close(self) -> None:
        self.lines.close()

    def _parse(self, item: Row) -> Entry | None:
        mark = id_mark_of(item)
        if mark is not None:  # the log was rewritten (pruned, cleared): ids continue after the mark
            self.last_id = max(self.last_id, mark)
            return None
        return entry_from(item)


class CheckpointLog:
    """The checkpoint records, as on disk (other servers' included), oldest first."""

    def __init__(self, path: Path) -> None:
        self.path: Path = path
        self.lines: LineLog[Checkpoint] = LineLog(path, checkpoint_from)

    def load(self) -> list[Checkpoint]:
        """Every record as on disk now (the caller orders its threads). The list is the log's own."""
        _ = self.lines.refresh()
        return self.lines.items

    @property
    def sizes(self) -> list[int]:
        return self.lines.sizes

    def append(self, cp: Checkpoint) -> int:
        """Write a record (holding the lock file); returns its line's bytes."""
        _ = self.lines.refresh()
        return self.lines.append(row(cp))

    def latest(self) -> list[Checkpoint]:
        """The checkpoints as on disk now, each in its latest form, oldest first."""
        by_name: dict[str, Checkpoint] = {}
        for cp in self.load():
            _ = by_name.pop(cp.name, None)
            if cp.last_entry >= 0:
                by_name[cp.name] = cp
        return sorted(by_name.values(), key=lambda c: (c.time, c.name))

    def rewrite(self, kept: list[Checkpoint]) -> None:
        self.lines.rewrite([row(cp) for cp in kept], kept)

    def close(self) -> None:
        self.lines.close()


class Mark(TypedDict, total=False):
    """What an entry recorded inside :func:`marking` carries besides the change."""

    kind: Kind
    undoes: int
    checkpoint: str


_MARK: ContextVar[Mark | None] = ContextVar("mcp_server_ide_journal_mark", default=None)


@contextlib.contextmanager
def marking(**fields: Unpack[Mark]) -> Iterator[None]:
    """Entries recorded inside this block carry ``fields`` (``kind``, ``undoes``, ``checkpoint``)."""
    token = _MARK.set(fields)
    try:
        yield
    finally:
        _MARK.reset(token)


def current_mark() -> Mark:
    return _MARK.get() or {}


_RECORDED: ContextVar[list[Entry] | None] = ContextVar("mcp_server_ide_journal_recorded", default=None)


@contextlib.contextmanager
def capturing() -> Iterator[list[Entry]]:
    """The entries recorded inside this block (by this thread of work; not other servers' or threads')."""
    recorded: list[Entry] = []
    token = _RECORDED.set(recorded)
    try:
        yield recorded
    finally:
        _RECORDED.reset(token)


def captured(entry: Entry) -> None:
    """Hand a just recorded entry to the :func:`capturing` block around it, if any."""
    sink = _RECORDED.get()
    if sink is not None:
        sink.append(entry)

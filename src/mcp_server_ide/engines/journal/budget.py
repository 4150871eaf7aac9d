"""The journal's limits (age, count, bytes) and the arithmetic that keeps it within them.

The journal keeps the newest ``MAX_ENTRIES`` entries of the last ``MAX_AGE``, within a byte budget
(``MCP_IDE_JOURNAL_BUDGET``, default 256 MiB: the logs plus the stored bytes they refer to). Past the
budget it prunes down to ``LOW_WATER`` of it (:func:`fit_budget`); :class:`SizeEstimate` tells when
it is past it without measuring the folder at every write. :mod:`.pruning` acts on what this decides.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Mapping

from .records import ABSENT, Checkpoint, Entry, checkpoint_blobs, line_size, row

log = logging.getLogger(__name__)

MAX_AGE = 30 * 24 * 3600.0
"""Entries older than this are forgotten (with their stored bytes), 30 days."""
MAX_ENTRIES = 10_000
"""At most this many entries are kept, the newest."""
PRUNE_EVERY = 500
"""Entries recorded between two looks at those limits (besides one when a server starts using the journal)."""
BUDGET_ENV = "MCP_IDE_JOURNAL_BUDGET"
"""The environment variable that sets the byte budget: bytes, or a number with K, M or G (powers of 1024)."""
DEFAULT_BUDGET = 256 * 1024 * 1024
"""The journal's bytes on disk (logs and stored contents) are kept within this, 256 MiB."""
LOW_WATER = 0.9
"""Past its budget the journal prunes down to this share of it, so that it does not prune at every write."""

BlobSize = Callable[[str], int]
"""The bytes on disk of a stored content, by hash."""

_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}


def parse_size(text: str) -> int:
    """``"256M"`` -> bytes: a whole number, optionally followed by K, M, G or T (powers of 1024, a
    trailing "B" or "iB" allowed)."""
    value = text.strip().upper().removesuffix("IB").removesuffix("B")
    unit = value[-1:] if value[-1:] in _UNITS else ""
    number = value[: len(value) - len(unit)].strip()
    if not number.isdigit():
        raise ValueError(
            f"{text!r} is not a size (rule: a whole number of bytes, or one followed by K, M or G, e.g. 256M)"
        )
    return int(number) * _UNITS[unit]


def budget_from_env(environ: Mapping[str, str] | None = None) -> int:
    """The journal's byte budget: ``MCP_IDE_JOURNAL_BUDGET``, else ``DEFAULT_BUDGET`` (a value that is not
    a size is logged and ignored)."""
    raw = (os.environ if environ is None else environ).get(BUDGET_ENV, "").strip()
    if not raw:
        return DEFAULT_BUDGET
    try:
        return parse_size(raw)
    except ValueError as exc:
        log.warning(
            "ignoring %s: %s; the journal keeps to its default budget of %d bytes",
            BUDGET_ENV,
            exc,
            DEFAULT_BUDGET,
        )
        return DEFAULT_BUDGET


class SizeEstimate:
    """The journal's bytes on disk as last measured by a pruning, plus what was stored since."""

    def __init__(self, measured: int | None) -> None:
        self.bytes: int | None = measured
        """None: not measured yet (a journal with a past, until its first pruning)."""
        self.counted: int = 0
        """Entries up to this id are in :attr:`bytes`."""

    def grow(self, size: int) -> None:
        if self.bytes is not None:
            self.bytes += size

    def reset(self, measured: int, last_id: int) -> None:
        """A pruning measured the folder: ``measured`` bytes, every entry up to ``last_id`` in them."""
        self.bytes, self.counted = measured, last_id

    def count_foreign(self, entries: list[Entry], blob_size: BlobSize) -> None:
        """Add the entries other servers appended since this one last counted."""
        for e in reversed(entries if self.bytes is not None else ()):
            if e.id <= self.counted:
                break
            self.grow(line_size(row(e)) + blob_size(e.after))
        if entries:
            self.counted = max(self.counted, entries[-1].id)

    def over(self, budget: int) -> bool:
        return self.bytes is not None and self.bytes > budget


class _Tally:
    """Bytes of a set of log lines and the distinct blobs they refer to."""

    def __init__(self, blob_size: BlobSize) -> None:
        self.total: int = 0
        self._refs: dict[str, int] = {}
        self._blob_size: BlobSize = blob_size
        self._sizes: dict[str, int] = {}

    def add(self, line: int, digests: Iterable[str]) -> None:
        self.total += line
        for digest in set(digests):
            if digest == ABSENT:
                continue
            if not self._refs.get(digest):
                if digest not in self._sizes:
                    self._sizes[digest] = self._blob_size(digest)
                self.total += self._sizes[digest]
            self._refs[digest] = self._refs.get(digest, 0) + 1

    def remove(self, line: int, digests: Iterable[str]) -> None:
        self.total -= line
        for digest in set(digests):
            if digest == ABSENT:
                continue
            self._refs[digest] -= 1
            if not self._refs[digest]:
                self.total -= self._sizes[digest]


def fit_budget(
    entries: list[Entry],
    entry_sizes: list[int],
    records: list[Checkpoint],
    record_sizes: list[int],
    cut: int,
    budget: int,
    blob_size: BlobSize,
) -> tuple[list[Checkpoint], int]:
    """The checkpoint records kept and the entries cut (at least ``cut``) for the journal to fit its
    budget (``*_sizes``: the bytes of each one's log line).

    Entries go oldest first, each checkpoint once the oldest entry kept is newer than it (it could not
    be restored exactly); if every entry is gone and the checkpoints left still do not fit, whole
    checkpoints go, oldest first. Past the budget the journal prunes down to ``LOW_WATER`` of it."""
    boundary = entries[cut - 1].id if cut else None
    alive = [boundary is None or cp.last_entry >= boundary for cp in records]
    tally = _Tally(blob_size)
    for index in range(cut, len(entries)):
        e = entries[index]
        tally.add(entry_sizes[index], (e.before, e.after))
    for index, cp in enumerate(records):
        if alive[index]:
            tally.add(record_sizes[index], checkpoint_blobs(cp))
    if tally.total > budget:
        target = int(budget * LOW_WATER)
        while tally.total > target and cut < len(entries):
            e = entries[cut]
            tally.remove(entry_sizes[cut], (e.before, e.after))
            cut += 1
            for index, cp in enumerate(records):
                if alive[index] and cp.last_entry < e.id:
                    alive[index] = False
                    tally.remove(record_sizes[index], checkpoint_blobs(cp))
        newest: dict[str, float] = {}
        for cp, keep in zip(records, alive, strict=True):
            if keep:
                newest[cp.name] = max(newest.get(cp.name, 0.0), cp.time)
        for name in sorted(newest, key=lambda n: (newest[n], n)):
            if tally.total <= target:
                break
            for index, cp in enumerate(records):
                if alive[index] and cp.name == name:
                    alive[index] = False
                    tally.remove(record_sizes[index], checkpoint_blobs(cp))
    if cut:
        boundary = entries[cut - 1].id
        alive = [keep and cp.last_entry >= boundary for cp, keep in zip(records, alive, strict=True)]
    return [cp for cp, keep in zip(records, alive, strict=True) if keep], cut

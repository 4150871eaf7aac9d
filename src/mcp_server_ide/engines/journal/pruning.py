"""Pruning: the journal forgets what its limits (:mod:`.budget`) leave out.

Past a limit the oldest entries are forgotten, with the checkpoints taken before the oldest entry
kept (they could no longer be restored exactly) and the stored bytes nothing kept refers to; when
the checkpoints left after every entry is gone are still too big, they go too, oldest first.
``start`` is then the state before the oldest change kept. A pruning holds the lock file, so no
other server loses an entry or a blob to it.

It runs when a server starts using a journal that has a past, every ``PRUNE_EVERY`` entries (both
on a thread of its own), and at once when a write takes the journal past its budget.
"""

from __future__ import annotations

import logging
import threading
import time

from .budget import fit_budget
from .core import JournalCore
from .folder import disk_usage
from .records import Checkpoint, Entry, checkpoint_blobs

log = logging.getLogger(__name__)


class Pruner:
    def __init__(self, journal: JournalCore) -> None:
        self.journal: JournalCore = journal
        self._thread: threading.Thread | None = None

    def prune(self, now: float | None = None) -> tuple[int, int, int]:
        """Forget what the limits leave out; returns (entries, checkpoint records, blobs) removed."""
        j = self.journal
        with j.op, j.lock, j.lock_file.held():
            return self._prune_locked(time.time() if now is None else now)

    def after_growth(self, periodic: bool = False) -> None:
        """Prune when the journal passed its budget (now, unless this thread is inside one of the
        journal's operations or another thread is: then on a thread of its own), or every
        ``PRUNE_EVERY`` entries (on a thread of its own)."""
        j = self.journal
        if not j.size.over(j.budget):
            if periodic:
                self.in_background()
            return
        # Never wait for the journal's op lock here: the caller may hold a file's write lock an
        # operation is waiting for.
        if not j.op.acquire(blocking=False):
            self.in_background()
            return
        try:
            with j.lock, j.lock_file.held():
                _ = self._prune_locked(time.time())
        except Exception:
            log.warning("pruning the change journal failed", exc_info=True)
        finally:
            j.op.release()

    def in_background(self) -> None:
        """Prune on a thread of its own: a record may happen inside the journal's own operations."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._thread = threading.Thread(target=self._prune_quietly, name="journal-prune", daemon=True)
        self._thread.start()

    def _prune_quietly(self) -> None:
        try:
            _ = self.prune()
        except Exception:
            log.warning("pruning the change journal failed", exc_info=True)

    def _prune_locked(self, now: float) -> tuple[int, int, int]:
        j = self.journal
        entries = j.entry_log.load()  # what is on disk, other servers' appends included
        records = j.checkpoint_log.load()
        cut = 0
        while cut < len(entries) and (
            len(entries) - cut > j.max_entries or now - entries[cut].time > j.max_age
        ):
            cut += 1
        used = self._measure()
        if cut == 0 and used <= j.budget:
            j.size.reset(used, j.entry_log.last_id)
            return 0, 0, 0
        kept_records, cut = fit_budget(
            entries, j.entry_log.sizes, records, j.checkpoint_log.sizes, cut, j.budget, j.blob_store.size
        )
        if cut == 0 and len(kept_records) == len(records):  # over only by bytes nothing refers to
            blobs = self._collect_blobs(entries, records)
            j.size.reset(self._measure(), j.entry_log.last_id)
            return 0, 0, blobs
        kept = entries[cut:]
        j.entry_log.rewrite(kept)
        j.checkpoint_log.rewrite(kept_records)
        blobs = self._collect_blobs(kept, kept_records)
        j.size.reset(self._measure(), j.entry_log.last_id)
        dropped = sorted({cp.name for cp in records} - {cp.name for cp in kept_records})
        if dropped:
            log.warning(
                "the change journal of %s dropped the checkpoints %s (older than its oldest change kept, "
                "or past its budget of %d bytes)",
                j.ws.root,
                ", ".join(map(repr, dropped)),
                j.budget,
            )
        log.info("pruned the change journal of %s: %d changes, %d stored contents", j.ws.root, cut, blobs)
        return cut, len(records) - len(kept_records), blobs

    def _measure(self) -> int:
        return disk_usage(self.journal.folder)[0]

    def _collect_blobs(self, entries: list[Entry], records: list[Checkpoint]) -> int:
        """Delete the stored bytes no kept entry or checkpoint refers to (holding the lock file)."""
        wanted = {e.before for e in entries} | {e.after for e in entries}
        for cp in records:
            wanted.update(checkpoint_blobs(cp))
        return self.journal.blob_store.collect(wanted)

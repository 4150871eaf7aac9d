"""The :class:`Journal`, a workspace's service: it records every change and answers the journal tools.

It is the journal's core (:mod:`.core`: parts, locks, shared reads) plus the one door to the
operations, each in the module of its idea (:mod:`.checkpoints`, :mod:`.undo`, :mod:`.pruning`,
:mod:`.diffs`). The rest of the server uses it as ``ws.service(Journal)``.
"""

from __future__ import annotations

import time
from pathlib import Path

from ...call import current_or_none
from ...workspace import Workspace
from ..changes import FileChange
from .budget import PRUNE_EVERY
from .checkpoints import compare, find, keep_current, snapshot
from .core import JournalCore
from .diffs import MAX_DIFF_CHARS, state_diff, stored_diff
from .log import captured, current_mark
from .paths import change_path, made_folder_names, mode_of
from .pruning import Pruner
from .records import Checkpoint, Entry, FileState
from .undo import restore_states, undo_entries, undone_by_in, undone_ids_in


class Journal(JournalCore):
    def __init__(self, ws: Workspace) -> None:
        super().__init__(ws)
        self.pruner: Pruner = Pruner(self)
        self._recorded: int = 0
        if self.log_path.exists():
            self.pruner.in_background()  # a server starting to use a journal that has a past

    def follow_roots(self, roots: list[Path]) -> bool:
        """Stays while the primary root is still the first: the journal is that root's (its folder
        is named after it), and a root added beside it changes nothing recorded."""
        return roots[0] == self.root

    def record(self, change: FileChange) -> Entry:
        """Write down a change just made (every write calls it, through :func:`.changes.publish`)."""
        call = current_or_none()
        mark = current_mark()
        # The lock file is held from reading the log (for the next id) and storing the bytes to
        # writing the line: another server can neither take the same id nor collect a blob this entry
        # is about to refer to.
        with self.lock, self.lock_file.held():
            entries = self.entry_log.load()
            self.size.count_foreign(entries, self.blob_store.size)
            entry = Entry(
                id=self.entry_log.last_id + 1,
                time=time.time(),
                tool=call.tool if call else "",
                door=call.door if call else "",
                arguments=_short_arguments(call.arguments if call else {}),
                path=change_path(self.ws, change),
                before=self.store(change.before),
                after=self.store(change.after),
                kind=mark.get("kind", "edit"),
                undoes=mark.get("undoes"),
                checkpoint=mark.get("checkpoint"),
                mode=mode_of(change.path) if change.after is not None else None,
                made_folders=made_folder_names(self.ws, change),
            )
            self.size.grow(self.entry_log.append(entry))
            self.size.counted = entry.id
            self._recorded += 1
        captured(entry)
        self.pruner.after_growth(periodic=self._recorded % PRUNE_EVERY == 0)
        return entry

    # ------------------------------------------------------------------ checkpoints

    def checkpoint(self, name: str | None) -> Checkpoint:
        """A checkpoint by name; None is the newest one, or the journal's start when there is none."""
        return find(self.checkpoints(), name)

    def create_checkpoint(self, name: str, description: str = "") -> Checkpoint:
        """Snapshot every journaled file's current bytes under ``name`` (replacing a checkpoint of that
        name); refused when the snapshot alone would not fit in the journal's byte budget."""
        cp = snapshot(self, name, description)
        self.pruner.after_growth()
        return cp

    def keep(self, name: str | None, paths: list[str] | None) -> tuple[Checkpoint, list[str]]:
        """Move the checkpoint's state of ``paths`` (every changed file when None) to their current bytes."""
        done = keep_current(self, name, paths)
        self.pruner.after_growth()
        return done

    def states(self, cp: Checkpoint, paths: list[str] | None = None) -> list[FileState]:
        """Every journaled file (or those in ``paths``) compared with checkpoint ``cp``."""
        return compare(self, cp, paths)

    # ------------------------------------------------------------------ undo / restore

    def undone_ids(self) -> set[int]:
        """Entries currently reversed: undone by an undo that has not itself been undone."""
        return undone_ids_in(self.entries())

    def undone_by(self) -> dict[int, int]:
        """Entry id -> the id of the undo that reverses it now."""
        return undone_by_in(self.entries())

    def undo(
        self, ids: list[int] | None = None, last: int | None = None, force: bool = False
    ) -> list[tuple[Entry, Entry | None]]:
        """Reverse the entries ``ids`` (newest first) or the last ``last`` live edits; all or nothing."""
        return undo_entries(self, ids, last, force)

    def restore(
        self, cp: Checkpoint, paths: list[str] | None = None, force: bool = False
    ) -> list[tuple[FileState, Entry | None]]:
        """Write every journaled file (or ``paths``) back to its state at ``cp``; all or nothing on conflicts."""
        return restore_states(self, cp, paths, force)

    # ------------------------------------------------------------------ diffs, pruning

    def diff(self, path: str, before: str, after: str, limit: int = MAX_DIFF_CHARS) -> tuple[str, bool]:
        """A unified diff between two stored states of ``path``; (text, truncated)."""
        return stored_diff(self.blob_store, path, before, after, limit)

    def diff_state(self, state: FileState, limit: int = MAX_DIFF_CHARS) -> tuple[str, bool]:
        """A unified diff from a file's checkpoint bytes to its current bytes; (text, truncated)."""
        return state_diff(self.ws, self.blob_store, state, limit)

    def prune(self, now: float | None = None) -> tuple[int, int, int]:
        """Forget what the limits leave out; returns (entries, checkpoint records, blobs) removed."""
        return self.pruner.prune(now)


def _short_arguments(arguments: dict[str, object], limit: int = 400) -> dict[str, object]:
    """Arguments as recorded: long strings are cut (the content itself is in the blob store)."""
    out: dict[str, object] = {}
    for key, value in arguments.items():
        if isinstance(value, str) and len(value) > limit:
            out[key] = value[:limit] + f"…[{len(value) - limit} more characters]"
        else:
            out[key] = value
    return out

"""The journal's parts and locks (:class:`JournalCore`), and the reads every operation shares.

Locks, taken in this order: ``op`` serialises the journal's own operations (checkpoint, keep, undo,
restore) and pruning; ``lock`` guards the in-memory logs and orders this process's users of the lock
file; the lock file (:class:`.folder.LockFile`) orders the processes sharing the journal. The operations
(:mod:`.checkpoints`, :mod:`.undo`, :mod:`.pruning`) take a core; :class:`.service.Journal` is one.
"""

from __future__ import annotations

import bisect
import threading
from pathlib import Path

from ...workspace import Workspace
from .blobs import BlobStore
from .budget import MAX_AGE, MAX_ENTRIES, SizeEstimate, budget_from_env
from .folder import BLOBS, CHECKPOINTS, ENTRIES, LOCK, LockFile, journal_folder
from .log import CheckpointLog, EntryLog
from .paths import remove_made_folders, user_path
from .records import Checkpoint, Entry


class JournalCore:
    def __init__(self, ws: Workspace) -> None:
        self.ws: Workspace = ws
        self.root: Path = ws.root
        """The primary root this journal is of (its folder is named after it)."""
        self.folder: Path = journal_folder(ws.state_dir)
        self.blobs: Path = self.folder / BLOBS
        self.blob_store: BlobStore = BlobStore(self.blobs)
        self.log_path: Path = self.folder / ENTRIES
        self.checkpoints_path: Path = self.folder / CHECKPOINTS
        self.lock: threading.RLock = threading.RLock()
        """Guards the in-memory logs and orders this process's users of the lock file (one descriptor,
        shared by its threads). Taken after ``op``, before the lock file."""
        self.op: threading.Lock = threading.Lock()
        """Serialises the journal's own operations (checkpoint, keep, undo, restore) and pruning."""
        self.entry_log: EntryLog = EntryLog(self.log_path)
        self.checkpoint_log: CheckpointLog = CheckpointLog(self.checkpoints_path)
        self.lock_path: Path = self.folder / LOCK
        self.lock_file: LockFile = LockFile(self.lock_path)
        self.max_age: float = MAX_AGE
        self.max_entries: int = MAX_ENTRIES
        self.budget: int = budget_from_env()
        self.size: SizeEstimate = SizeEstimate(None if self.log_path.exists() else 0)

    def entries(self) -> list[Entry]:
        """Every entry kept, oldest first, other servers' included (read from disk as they append)."""
        with self.lock:
            return list(self.entry_log.load())

    def entry(self, entry_id: int) -> Entry | None:
        entries = self.entries()
        index = bisect.bisect_left([e.id for e in entries], entry_id)  # ids only grow along the log
        return entries[index] if index < len(entries) and entries[index].id == entry_id else None

    def checkpoints(self) -> list[Checkpoint]:
        """The checkpoints, each in its latest form, oldest first."""
        with self.lock:
            return self.checkpoint_log.latest()

    def blob(self, digest: str) -> bytes | None:
        """Stored bytes by hash (None for "absent"); a missing or damaged blob is a ToolFailure."""
        return self.blob_store.get(digest)

    def store(self, data: bytes | None, written: list[Path] | None = None) -> str:
        """Keep ``data`` in the blob store; returns its hash. Call it holding the lock file, and write
        the line that refers to the blob before letting go (a pruning collects every blob no line
        refers to). ``written`` collects the blobs this call wrote."""
        digest, new = self.blob_store.put(data)
        if new is not None and data is not None:
            self.size.grow(len(data))
            if written is not None:
                written.append(new)
        return digest

    def user_path(self, path: str) -> str:
        """A caller's path in the journal's form (through the sandbox: outside paths are refused)."""
        return user_path(self.ws, path)

    def remove_made_folders(self, folders: list[str]) -> list[str]:
        """Remove the folders (journal paths) that are empty now, deepest first; returns those removed."""
        return remove_made_folders(self.ws, folders)

    def close(self) -> None:
        with self.lock:
            self.lock_file.close()
            self.entry_log.close()
            self.checkpoint_log.close()

"""The change journal: every change this server makes to a file, enough to restore it.

Kept per workspace in its state folder (never inside the workspace): a JSON-lines log of
entries (id, time, tool, arguments, path, hashes before and after) and a content-addressed
store of the bytes before and after each change. Checkpoints are a second JSON-lines log.

On top of the log this module answers the journal tools (``tools/journal.py``):

- **undo** an entry: write back its ``before`` bytes, only when the file still holds its
  ``after`` bytes (anything else means other hands changed it since; refused unless forced).
  Undo writes go through :func:`.textio.write_file` / :func:`.textio.delete_file`, so they are
  journaled themselves (``kind="undo"``, ``undoes=<id>``), and undoing an undo is a redo.
- **checkpoints**: a name for "the state of every journaled file now". A checkpoint stores the
  current bytes of every file the journal knows; a file first changed after the checkpoint is
  restored to the ``before`` of its first change after it. **restore** writes those states back
  (byte-identical; created files are deleted, deleted ones re-created); **diff** shows every
  file that differs from it; **keep** moves a file's checkpoint state to its current bytes.
- Every multi-file operation checks every file first and changes nothing when one conflicts.
- **pruning**: the journal keeps the newest ``MAX_ENTRIES`` entries of the last ``MAX_AGE``, within a
  byte budget (``MCP_IDE_JOURNAL_BUDGET``, default 256 MiB: the logs plus the stored bytes they refer
  to). Past a limit the oldest entries are forgotten, with the checkpoints taken before the oldest
  entry kept (they could no longer be restored exactly) and the stored bytes nothing kept refers to;
  past the budget it prunes down to 90% of it, and when the checkpoints left after every entry is gone
  are still too big, they go too, oldest first. ``start`` is then the state before the oldest change
  kept. A checkpoint that alone would not fit in the budget is refused.
- **several servers on one workspace** share the journal: ids are allocated under the journal's lock
  file from what is on disk (never reused, even after pruning or clearing), and every read catches up
  with the lines other servers appended. Everything that stores bytes and writes the line referring to
  them holds that lock, as pruning does, so no server loses an entry or a blob to another's pruning.
"""

from __future__ import annotations

import bisect
import contextlib
import datetime as _dt
import difflib
import json
import logging
import os
import threading
import time
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from ...call import current_or_none
from ...workspace import Workspace
from ..changes import FileChange
from ..failures import ToolFailure
from ..textio import atomic_write, content_hash
from .linelog import LineLog

log = logging.getLogger(__name__)

ABSENT = "absent"
START = "start"
"""The implicit checkpoint before the first journaled change."""

MAX_DIFF_CHARS = 40_000

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


@dataclass(frozen=True)
class Entry:
    id: int
    time: float
    tool: str
    door: str
    arguments: dict[str, Any]
    path: str
    before: str
    """SHA-256 of the bytes before the change, or "absent" when the change created the file."""
    after: str
    """SHA-256 of the bytes after the change, or "absent" when the change deleted the file."""
    kind: str = "edit"
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
    def action(self) -> str:
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


_MARK: ContextVar[dict[str, Any] | None] = ContextVar("mcp_server_ide_journal_mark", default=None)


@contextlib.contextmanager
def marking(**fields: Any) -> Iterator[None]:
    """Entries recorded inside this block carry ``fields`` (``kind``, ``undoes``, ``checkpoint``)."""
    token = _MARK.set(fields)
    try:
        yield
    finally:
        _MARK.reset(token)


_RECORDED: ContextVar[list[Entry] | None] = ContextVar("mcp_server_ide_journal_recorded", default=None)


@contextlib.contextmanager
def _capturing() -> Iterator[list[Entry]]:
    """The entries recorded inside this block (by this thread of work; not other servers' or threads')."""
    recorded: list[Entry] = []
    token = _RECORDED.set(recorded)
    try:
        yield recorded
    finally:
        _RECORDED.reset(token)


class Journal:
    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.folder = journal_folder(ws.state_dir)
        self.blobs = self.folder / BLOBS
        self.blobs.mkdir(parents=True, exist_ok=True)
        self.log_path = self.folder / ENTRIES
        self.checkpoints_path = self.folder / CHECKPOINTS
        self._lock = threading.RLock()
        """Guards the in-memory logs and orders this process's users of the lock file (one descriptor,
        shared by its threads). Taken after ``_op``, before the lock file."""
        self._op = threading.Lock()
        """Serialises the journal's own operations (checkpoint, keep, undo, restore) and pruning."""
        self._last_id = 0
        """The largest entry id this server knows was given (the log's, or the pruned-through mark)."""
        self._log: LineLog[Entry] = LineLog(self.log_path, self._parse_entry)
        self._checkpoint_log: LineLog[Checkpoint] = LineLog(self.checkpoints_path, _checkpoint_from)
        self.lock_path = self.folder / LOCK
        self._lock_fd: int | None = None
        self.max_age = MAX_AGE
        self.max_entries = MAX_ENTRIES
        self.budget = budget_from_env()
        self._size: int | None = None if self.log_path.exists() else 0
        """Bytes on disk as last measured by a pruning, plus what was stored since (None: not measured)."""
        self._counted = 0
        """Entries up to this id are in ``_size``."""
        self._recorded = 0
        self._pruning: threading.Thread | None = None
        if self.log_path.exists():
            self._prune_in_background()  # a server starting to use a journal that has a past

    # ------------------------------------------------------------------ the log

    def record(self, change: FileChange) -> Entry:
        call = current_or_none()
        mark = _MARK.get() or {}
        # The lock file is held from reading the log (for the next id) and storing the bytes to
        # writing the line: another server can neither take the same id nor collect a blob this entry
        # is about to refer to.
        with self._lock, self._file_lock():
            entries = self._load()
            self._count_foreign(entries)
            entry = Entry(
                id=self._last_id + 1,
                time=time.time(),
                tool=call.tool if call else "",
                door=call.door if call else "",
                arguments=_short_arguments(call.arguments if call else {}),
                path=self._journal_path(change),
                before=self._store(change.before),
                after=self._store(change.after),
                kind=mark.get("kind", "edit"),
                undoes=mark.get("undoes"),
                checkpoint=mark.get("checkpoint"),
                mode=_mode_of(change.path) if change.after is not None else None,
                made_folders=self._folder_names(change),
            )
            self._grow(self._log.append(_row(entry)))
            self._counted = entry.id
            self._recorded += 1
        sink = _RECORDED.get()
        if sink is not None:
            sink.append(entry)
        self._after_growth(periodic=self._recorded % PRUNE_EVERY == 0)
        return entry

    def entries(self) -> list[Entry]:
        """Every entry kept, oldest first, other servers' included (read from disk as they append)."""
        with self._lock:
            return list(self._load())

    def entry(self, entry_id: int) -> Entry | None:
        entries = self.entries()
        index = bisect.bisect_left([e.id for e in entries], entry_id)  # ids only grow along the log
        return entries[index] if index < len(entries) and entries[index].id == entry_id else None

    def _parse_entry(self, item: dict[str, Any]) -> Entry | None:
        mark = _id_mark_of(item)
        if mark is not None:  # the log was rewritten (pruned, cleared): ids continue after the mark
            self._last_id = max(self._last_id, mark)
            return None
        return _entry_from(item)

    def blob(self, digest: str) -> bytes | None:
        if digest == ABSENT:
            return None
        try:
            data = (self.blobs / digest[:2] / digest).read_bytes()
        except FileNotFoundError:
            data = None
        if data is None or content_hash(data) != digest:
            raise ToolFailure(
                f"unavailable: the journal's copy of content {digest[:12]}… is missing or damaged in its store "
                "(the state folder was cleaned, or the machine stopped while writing it); this change cannot "
                "be restored",
                kind="unavailable",
            )
        return data

    def _store(self, data: bytes | None, written: list[Path] | None = None) -> str:
        """Keep ``data`` in the content-addressed store; returns its hash. Call it holding the lock
        file, and write the line that refers to the blob before letting go (a pruning collects every
        blob no line refers to). ``written`` collects the blobs this call wrote.

        A blob is written once under its own hash (exclusive create, fsync): no temp file and rename
        are needed, since a name is never rewritten. A blob torn by a crash has the wrong size and is
        written again atomically; reads check the hash.
        """
        if data is None:
            return ABSENT
        digest = content_hash(data)
        path = self.blobs / digest[:2] / digest
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            size = None
        if size == len(data):
            return digest
        if size is not None:
            atomic_write(path, data, 0o600)
            return digest
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            return digest  # another writer is storing the same bytes
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            path.unlink(missing_ok=True)
            raise
        os.close(fd)
        self._grow(len(data))
        if written is not None:
            written.append(path)
        return digest

    def _folder_names(self, change: FileChange) -> tuple[str, ...]:
        """The change's made folders as journal paths (``<root name>/...`` in another root)."""
        if not change.made_folders:
            return ()
        rel_parts = len(Path(change.rel).parts)
        root = change.path.parents[rel_parts - 1] if rel_parts else change.path
        return tuple(self._path_name(root / rel) or rel for rel in change.made_folders)

    def remove_made_folders(self, folders: list[str]) -> list[str]:
        """Remove the folders (journal paths) that are empty now, deepest first; returns those removed.

        Each is reached by its own name beneath its root, never through a symlink, and only an empty
        folder is removed: one that holds anything, even a file made by other hands, stays."""
        from .. import sandbox

        removed: list[str] = []
        for folder in sorted(set(folders), key=lambda f: (-f.count("/"), f)):
            try:
                resolved = sandbox.resolve(self.ws, folder)
            except ToolFailure:
                continue
            if resolved.lexical and sandbox.remove_empty_folder(resolved.root, resolved.lexical):
                removed.append(folder)
        return removed

    def _created_folders(self, path: str, after_entry: int) -> list[str]:
        """The folders made by the creations of ``path`` after entry ``after_entry``."""
        return [
            folder
            for e in self.entries()
            if e.path == path and e.id > after_entry and e.before == ABSENT
            for folder in e.made_folders
        ]

    def _journal_path(self, change: FileChange) -> str:
        return self._path_name(change.path) or change.rel

    def _path_name(self, path: Path) -> str | None:
        """The path as a caller names it: relative to the primary root, or ``<root name>/...`` for another root."""
        for index, root in enumerate(self.ws.roots):
            try:
                rel = path.relative_to(root).as_posix()
            except ValueError:
                continue
            return rel if index == 0 else f"{root.name}/{rel}"
        return None

    def user_path(self, path: str) -> str:
        """A caller's path in the journal's form (through the sandbox: outside paths are refused)."""
        from .. import sandbox

        resolved = sandbox.resolve(self.ws, path)
        return self._path_name(resolved.path) or resolved.rel

    def _load(self) -> list[Entry]:
        """The entries as on disk now (call holding ``_lock``): what other servers appended is read in."""
        self._log.refresh()
        entries = self._log.items
        if entries and entries[-1].id > self._last_id:
            self._last_id = entries[-1].id
        return entries

    def _count_foreign(self, entries: list[Entry]) -> None:
        """Add the entries other servers appended since this one last counted to the size estimate."""
        for e in reversed(entries if self._size is not None else ()):
            if e.id <= self._counted:
                break
            self._grow(_line_size(_row(e)) + self._blob_size(e.after))
        if entries:
            self._counted = max(self._counted, entries[-1].id)

    def _blob_size(self, digest: str) -> int:
        if digest == ABSENT:
            return 0
        try:
            return (self.blobs / digest[:2] / digest).stat().st_size
        except OSError:
            return 0

    def _grow(self, size: int) -> None:
        if self._size is not None:
            self._size += size

    # ------------------------------------------------------------------ checkpoints

    def checkpoints(self) -> list[Checkpoint]:
        """The checkpoints, each in its latest form, oldest first."""
        with self._lock:
            latest: dict[str, Checkpoint] = {}
            for cp in self._load_checkpoints():
                latest.pop(cp.name, None)
                if cp.last_entry >= 0:
                    latest[cp.name] = cp
            return sorted(latest.values(), key=lambda c: (c.time, c.name))

    def checkpoint(self, name: str | None) -> Checkpoint:
        """A checkpoint by name; None is the newest one, or the journal's start when there is none."""
        cps = self.checkpoints()
        if name is None:
            return cps[-1] if cps else self._start()
        for cp in cps:
            if cp.name == name:
                return cp
        if name == START:
            return self._start()
        known = ", ".join(repr(c.name) for c in cps) or "none yet"
        raise ToolFailure(
            f"not found: no checkpoint named {name!r} (checkpoints: {known}; '{START}' is the state before the "
            "oldest journaled change kept; a checkpoint older than that change was dropped when the journal "
            "pruned itself; create one with create_checkpoint)",
            kind="not_found",
        )

    def _start(self) -> Checkpoint:
        return Checkpoint(name=START, time=0.0, last_entry=0, files={}, observed=0)

    def create_checkpoint(self, name: str, description: str = "") -> Checkpoint:
        """Snapshot every journaled file's current bytes under ``name`` (replacing a checkpoint of that name).

        Refused when the snapshot alone would not fit in the journal's byte budget."""
        with self._op, self._lock, self._file_lock():
            entries = self._load()
            files: dict[str, str] = {}
            sizes: dict[str, int] = {}
            written: list[Path] = []
            for path in _paths(entries):
                data = self._read_current(path)
                if data is not _UNREADABLE:
                    files[path] = self._store(data, written)  # type: ignore[arg-type]
                    sizes[files[path]] = len(data) if data is not None else 0  # type: ignore[arg-type]
            needed = sum(sizes.values())
            if needed > self.budget:
                for blob in written:
                    blob.unlink(missing_ok=True)
                self._grow(-sum(sizes.get(b.name, 0) for b in written))
                raise ToolFailure(
                    f"too large: the checkpoint would hold {needed} bytes of file contents, more than the "
                    f"journal's budget of {self.budget} bytes (rule: the journal never keeps more than its "
                    f"budget; start the server with a larger {BUDGET_ENV}, e.g. {BUDGET_ENV}=1G)",
                    kind="too_large",
                )
            cp = Checkpoint(
                name=name,
                time=time.time(),
                last_entry=self._last_id,
                files=files,
                observed=self._last_id,
                description=description,
            )
            self._append_checkpoint(cp)
        self._after_growth()
        return cp

    def keep(self, name: str | None, paths: list[str] | None) -> tuple[Checkpoint, list[str]]:
        """Move the checkpoint's state of ``paths`` (every changed file when None) to their current bytes."""
        with self._op:
            cp = self.checkpoint(name)
            states = self.states(cp, paths)
            kept = [s.path for s in states if s.changed]
            files = dict(cp.files)
            seen: dict[str, str] = {}
            with self._lock, self._file_lock():  # the bytes are stored and written down under the lock file
                self._load()
                for state in states:
                    if state.path in kept:
                        data = self._read_current(state.path)
                        if data is _UNREADABLE:
                            continue
                        files[state.path] = seen[state.path] = self._store(data)  # type: ignore[arg-type]
                updated = Checkpoint(
                    name=cp.name,
                    time=cp.time or time.time(),
                    last_entry=cp.last_entry,
                    files=files,
                    observed=self._last_id,
                    description=cp.description,
                    seen=seen,
                )
                self._append_checkpoint(updated)
        self._after_growth()
        return updated, kept

    def _append_checkpoint(self, cp: Checkpoint) -> None:
        """Write a checkpoint record (holding ``_lock`` and the lock file)."""
        self._checkpoint_log.refresh()
        self._grow(self._checkpoint_log.append(_row(cp)))

    # ------------------------------------------------------------------ pruning

    @contextlib.contextmanager
    def _file_lock(self) -> Iterator[None]:
        """The journal's lock file, held for an append or a pruning (against other processes; within
        this one ``_lock`` already orders them). Its descriptor stays open for the journal's life."""
        import fcntl

        if self._lock_fd is None:
            self._lock_fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)

    def close(self) -> None:
        with self._lock:
            if self._lock_fd is not None:
                os.close(self._lock_fd)
                self._lock_fd = None
            self._log.close()
            self._checkpoint_log.close()

    def prune(self, now: float | None = None) -> tuple[int, int, int]:
        """Forget what the limits leave out; returns (entries, checkpoint records, blobs) removed."""
        with self._op, self._lock, self._file_lock():
            return self._prune_locked(time.time() if now is None else now)

    def _prune_locked(self, now: float) -> tuple[int, int, int]:
        entries = self._load()  # what is on disk, other servers' appends included
        records = self._load_checkpoints()
        cut = 0
        while cut < len(entries) and (
            len(entries) - cut > self.max_entries or now - entries[cut].time > self.max_age
        ):
            cut += 1
        used = self._measure()
        if cut == 0 and used <= self.budget:
            self._size, self._counted = used, self._last_id
            return 0, 0, 0
        kept_records, cut = self._fit_budget(entries, records, cut)
        if cut == 0 and len(kept_records) == len(records):  # over only by bytes nothing refers to
            blobs = self._collect_blobs(entries, records)
            self._size, self._counted = self._measure(), self._last_id
            return 0, 0, blobs
        kept = entries[cut:]
        self._log.rewrite([_row(e) for e in kept], kept, header=_id_mark(self._last_id))
        self._checkpoint_log.rewrite([_row(cp) for cp in kept_records], kept_records)
        blobs = self._collect_blobs(kept, kept_records)
        self._size = self._measure()
        self._counted = self._last_id
        dropped = sorted({cp.name for cp in records} - {cp.name for cp in kept_records})
        if dropped:
            log.warning(
                "the change journal of %s dropped the checkpoints %s (older than its oldest change kept, "
                "or past its budget of %d bytes)",
                self.ws.root,
                ", ".join(map(repr, dropped)),
                self.budget,
            )
        log.info("pruned the change journal of %s: %d changes, %d stored contents", self.ws.root, cut, blobs)
        return cut, len(records) - len(kept_records), blobs

    def _fit_budget(
        self, entries: list[Entry], records: list[Checkpoint], cut: int
    ) -> tuple[list[Checkpoint], int]:
        """The checkpoint records kept and the entries cut (at least ``cut``) for the journal to fit its
        budget.

        Entries go oldest first, each checkpoint once the oldest entry kept is newer than it (it could not
        be restored exactly); if every entry is gone and the checkpoints left still do not fit, whole
        checkpoints go, oldest first. Past the budget the journal prunes down to ``LOW_WATER`` of it."""
        boundary = entries[cut - 1].id if cut else None
        alive = [boundary is None or cp.last_entry >= boundary for cp in records]
        entry_sizes, record_sizes = self._log.sizes, self._checkpoint_log.sizes
        tally = _Tally(self._blob_size)
        for index in range(cut, len(entries)):
            e = entries[index]
            tally.add(entry_sizes[index], (e.before, e.after))
        for index, cp in enumerate(records):
            if alive[index]:
                tally.add(record_sizes[index], _checkpoint_blobs(cp))
        if tally.total > self.budget:
            target = int(self.budget * LOW_WATER)
            while tally.total > target and cut < len(entries):
                e = entries[cut]
                tally.remove(entry_sizes[cut], (e.before, e.after))
                cut += 1
                for index, cp in enumerate(records):
                    if alive[index] and cp.last_entry < e.id:
                        alive[index] = False
                        tally.remove(record_sizes[index], _checkpoint_blobs(cp))
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
                        tally.remove(record_sizes[index], _checkpoint_blobs(cp))
        if cut:
            boundary = entries[cut - 1].id
            alive = [keep and cp.last_entry >= boundary for cp, keep in zip(records, alive, strict=True)]
        return [cp for cp, keep in zip(records, alive, strict=True) if keep], cut

    def _measure(self) -> int:
        return _disk_usage(self.folder)[0]

    def _collect_blobs(self, entries: list[Entry], records: list[Checkpoint]) -> int:
        """Delete the stored bytes no kept entry or checkpoint refers to (the caller holds the lock file:
        every blob stored is written down before it is let go)."""
        wanted = {e.before for e in entries} | {e.after for e in entries}
        for cp in records:
            wanted.update(_checkpoint_blobs(cp))
        removed = 0
        for shard in self.blobs.iterdir():
            if not shard.is_dir():
                continue
            for blob in shard.iterdir():
                if blob.name in wanted:
                    continue
                try:
                    blob.unlink()
                    removed += 1
                except OSError:
                    continue
        return removed

    def _after_growth(self, periodic: bool = False) -> None:
        """Prune when the journal passed its budget (now, unless this thread is inside one of the
        journal's operations or another thread is: then on a thread of its own), or every
        ``PRUNE_EVERY`` entries (on a thread of its own)."""
        over = self._size is not None and self._size > self.budget
        if not over:
            if periodic:
                self._prune_in_background()
            return
        # Never wait for _op here: the caller may hold a file's write lock an operation is waiting for.
        if not self._op.acquire(blocking=False):
            self._prune_in_background()
            return
        try:
            with self._lock, self._file_lock():
                self._prune_locked(time.time())
        except Exception:
            log.warning("pruning the change journal failed", exc_info=True)
        finally:
            self._op.release()

    def _prune_in_background(self) -> None:
        """Prune on a thread of its own: a record may happen inside the journal's own operations."""
        if self._pruning is not None and self._pruning.is_alive():
            return
        self._pruning = threading.Thread(target=self._prune_quietly, name="journal-prune", daemon=True)
        self._pruning.start()

    def _prune_quietly(self) -> None:
        try:
            self.prune()
        except Exception:
            log.warning("pruning the change journal failed", exc_info=True)

    def _load_checkpoints(self) -> list[Checkpoint]:
        """Every checkpoint record as on disk now (call holding ``_lock``)."""
        self._checkpoint_log.refresh()
        return self._checkpoint_log.items

    # ------------------------------------------------------------------ comparing

    def states(self, cp: Checkpoint, paths: list[str] | None = None) -> list[FileState]:
        """Every journaled file (or those in ``paths``) compared with checkpoint ``cp``."""
        with self._lock:
            entries = list(self._load())
            records = list(self._load_checkpoints())
        wanted = None if paths is None else {self.user_path(p) for p in paths}
        after_cp: dict[str, list[Entry]] = {}
        for e in entries:
            if e.id > cp.last_entry:
                after_cp.setdefault(e.path, []).append(e)
        names = list(cp.files) + [p for p in after_cp if p not in cp.files]
        observed = _observations(entries, records)
        out: list[FileState] = []
        for path in sorted(names):
            if wanted is not None and path not in wanted:
                continue
            target = cp.files[path] if path in cp.files else after_cp[path][0].before
            current = self._hash_now(path)
            out.append(
                FileState(
                    path=path,
                    target=target,
                    current=current,
                    known=observed.get(path, current),
                    entries=tuple(e.id for e in after_cp.get(path, [])),
                )
            )
        return out

    def undone_ids(self) -> set[int]:
        """Entries currently reversed: undone by an undo that has not itself been undone."""
        undone: set[int] = set()
        for e in reversed(self.entries()):
            if e.kind == "undo" and e.id not in undone and e.undoes is not None:
                undone.add(e.undoes)
        return undone

    def undone_by(self) -> dict[int, int]:
        by: dict[int, int] = {}
        undone = self.undone_ids()
        for e in self.entries():
            if e.kind == "undo" and e.undoes in undone and e.id not in undone and e.undoes is not None:
                by[e.undoes] = e.id
        return by

    def _hash_now(self, path: str) -> str:
        """The hash of the file's bytes now, "absent" or "unreadable"."""
        data = self._read_current(path)
        if data is _UNREADABLE:
            return UNREADABLE
        return ABSENT if data is None else content_hash(data)  # type: ignore[arg-type]

    def _read_current(self, path: str) -> bytes | object | None:
        """The file's bytes now, None when it does not exist, ``_UNREADABLE`` when it cannot be read."""
        from .. import sandbox, textio

        try:
            resolved = sandbox.resolve(self.ws, path)
        except ToolFailure:
            return _UNREADABLE
        if not os.path.lexists(resolved.path):
            return None
        try:
            data, _ = textio.read_bytes(resolved, limit=None)
        except ToolFailure:
            return _UNREADABLE
        return data

    # ------------------------------------------------------------------ undo / restore

    def undo(
        self, ids: list[int] | None = None, last: int | None = None, force: bool = False
    ) -> list[tuple[Entry, Entry | None]]:
        """Reverse the entries ``ids`` (newest first) or the last ``last`` live edits.

        Returns ``(undone entry, new undo entry)`` pairs (the new entry is None when the file
        already held the wanted bytes). Raises a conflict, changing nothing, when a file no longer
        holds what the journal wrote (unless ``force``).
        """
        with self._op:
            plan = self._undo_plan(ids, last)
            sim: dict[str, str] = {}
            problems: list[str] = []
            for e in plan:
                if e.path not in sim:
                    sim[e.path] = self._hash_now(e.path)
                    if sim[e.path] == UNREADABLE:
                        problems.append(f"{e.path!r} cannot be read now (not a regular file, or a folder)")
                        continue
                if sim[e.path] != e.after and not force:
                    problems.append(self._why_differs(e, sim[e.path]))
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
                new = self._write(
                    e.path, e.before, kind="undo", undoes=e.id, expect=None if force else e.after
                )
                done.append((e, new))
                if e.before == ABSENT:  # undoing a creation: the folders made for it go too, if empty
                    emptied.extend(e.made_folders)
            self.remove_made_folders(emptied)
            return done

    def _undo_plan(self, ids: list[int] | None, last: int | None) -> list[Entry]:
        entries = self.entries()
        if ids:
            plan: list[Entry] = []
            for entry_id in sorted(set(ids), reverse=True):
                e = self.entry(entry_id)
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
        undone = self.undone_ids()
        live = [e for e in reversed(entries) if e.kind != "undo" and e.id not in undone]
        if not live:
            raise ToolFailure(
                "not found: there is no change left to undo (rule: undo reverses the journal's own changes; "
                "list them with list_recent_changes)",
                kind="not_found",
            )
        return live[:count]

    def _why_differs(self, e: Entry, now: str) -> str:
        by = self.undone_by().get(e.id)
        if by is not None and now == e.before:
            return f"change #{e.id} to {e.path!r} was already undone by #{by}"
        later = [x for x in self.entries() if x.path == e.path and x.id > e.id]
        undone = self.undone_ids()
        live_later = [x.id for x in later if x.id not in undone and x.kind != "undo"]
        what = "has been deleted" if now == ABSENT else "holds other bytes"
        if later and later[-1].after == now:
            ids = ", ".join(f"#{i}" for i in live_later) or ", ".join(f"#{x.id}" for x in later)
            return (
                f"{e.path!r} was changed again after #{e.id} by later changes ({ids}); undo those first, "
                "or restore a checkpoint"
            )
        return f"{e.path!r} {what} than change #{e.id} left (it was changed outside the server since)"

    def restore(
        self, cp: Checkpoint, paths: list[str] | None = None, force: bool = False
    ) -> list[tuple[FileState, Entry | None]]:
        """Write every journaled file (or ``paths``) back to its state at ``cp``; all or nothing on conflicts."""
        with self._op:
            states = [s for s in self.states(cp, paths) if s.changed]
            if paths:
                known = {s.path for s in self.states(cp, None)}
                missing = [p for p in paths if self.user_path(p) not in known]
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
                new = self._write(
                    s.path, s.target, kind="restore", checkpoint=cp.name, expect=None if force else s.current
                )
                done.append((s, new))
                if s.target == ABSENT:  # a file made since the checkpoint: and the folders made for it
                    emptied.extend(self._created_folders(s.path, cp.last_entry))
            self.remove_made_folders(emptied)
            return done

    def _write(self, path: str, target: str, *, expect: str | None, **mark: Any) -> Entry | None:
        """Put the bytes ``target`` (or no file) at ``path``, through textio, journaled with ``mark``."""
        from .. import sandbox, textio

        resolved = sandbox.resolve_for_write(self.ws, path)
        data = self.blob(target)
        with textio.file_lock(resolved.path), marking(**mark):
            exists = os.path.lexists(resolved.path)
            current, mode = textio.read_bytes(resolved, limit=None) if exists else (None, None)
            now = ABSENT if current is None else content_hash(current)
            if expect is not None and now != expect:
                raise ToolFailure(
                    f"conflict: {path!r} changed while the journal was writing it back; it was left as it is "
                    "(files handled before it were already written: see list_recent_changes)",
                    kind="conflict",
                )
            if now == target:
                return None
            with _capturing() as recorded:
                if data is None:
                    textio.delete_file(self.ws, resolved, before=current)
                elif current is None:
                    textio.write_file(
                        self.ws,
                        resolved,
                        data,
                        before=None,
                        mode=self._mode_for(path, target),
                        exclusive=True,
                        make_parents=True,
                    )
                else:
                    textio.write_file(self.ws, resolved, data, before=current, mode=mode)
            return recorded[-1] if recorded else None

    def _mode_for(self, path: str, digest: str) -> int | None:
        for e in reversed(self.entries()):
            if e.path == path and e.after == digest and e.mode is not None:
                return e.mode
        return None

    # ------------------------------------------------------------------ diffs

    def diff(self, path: str, before: str, after: str, limit: int = MAX_DIFF_CHARS) -> tuple[str, bool]:
        """A unified diff between two stored states of ``path``; (text, truncated)."""
        return unified_diff(path, self.blob(before), self.blob(after), limit)

    def diff_state(self, state: FileState, limit: int = MAX_DIFF_CHARS) -> tuple[str, bool]:
        """A unified diff from a file's checkpoint bytes to its current bytes; (text, truncated)."""
        if state.current == UNREADABLE:
            return f"(no diff: {state.path} cannot be read now)\n", False
        try:
            old = self.blob(state.target)
        except ToolFailure as exc:
            return f"(no diff: {exc})\n", False
        now = self._read_current(state.path)
        if now is _UNREADABLE:
            return f"(no diff: {state.path} cannot be read now)\n", False
        return unified_diff(state.path, old, now, limit)  # type: ignore[arg-type]


_UNREADABLE = object()
UNREADABLE = "unreadable"


def unified_diff(
    path: str, old: bytes | None, new: bytes | None, limit: int = MAX_DIFF_CHARS
) -> tuple[str, bool]:
    """A git-style unified diff of two byte strings (None = no file); binary files get one line."""
    from ..textio import decode

    a = f"a/{path}" if old is not None else "/dev/null"
    b = f"b/{path}" if new is not None else "/dev/null"
    texts: list[str] = []
    for data in (old, new):
        if data is None:
            texts.append("")
            continue
        try:
            texts.append(decode(data, name=path).text)
        except ToolFailure:
            size_a = len(old) if old is not None else 0
            size_b = len(new) if new is not None else 0
            return f"Binary file {path} changed ({size_a} -> {size_b} bytes)\n", False
    if old is not None and new is not None and texts[0] == texts[1]:
        return f"File {path}: only the encoding, byte order mark or line endings changed\n", False
    lines = difflib.unified_diff(
        texts[0].splitlines(keepends=True), texts[1].splitlines(keepends=True), fromfile=a, tofile=b, n=3
    )
    out: list[str] = []
    size = 0
    for line in lines:
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        size += len(line)
        if size > limit:
            out.append(f"…[diff truncated at {limit} characters]…\n")
            return "".join(out), True
        out.append(line)
    return "".join(out), False


def iso_time(t: float) -> str:
    return _dt.datetime.fromtimestamp(t, tz=_dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _observations(entries: list[Entry], records: list[Checkpoint]) -> dict[str, str]:
    """For every path, the newest state the journal observed: an entry's ``after`` or a checkpoint snapshot."""
    best: dict[str, tuple[int, int, str]] = {}
    for e in entries:
        seen = best.get(e.path)
        if seen is None or (e.id, 0) >= seen[:2]:
            best[e.path] = (e.id, 0, e.after)
    for cp in records:
        for path, digest in cp.seen.items():
            seen = best.get(path)
            if seen is None or (cp.observed, 1) >= seen[:2]:
                best[path] = (cp.observed, 1, digest)
    return {path: item[2] for path, item in best.items()}


def _paths(entries: list[Entry]) -> list[str]:
    seen: dict[str, None] = {}
    for e in entries:
        seen.setdefault(e.path, None)
    return list(seen)


def _mode_of(path: Path) -> int | None:
    import stat

    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return None


def _short_arguments(arguments: dict[str, Any], limit: int = 400) -> dict[str, Any]:
    """Arguments as recorded: long strings are cut (the content itself is in the blob store)."""
    out: dict[str, Any] = {}
    for key, value in arguments.items():
        if isinstance(value, str) and len(value) > limit:
            out[key] = value[:limit] + f"…[{len(value) - limit} more characters]"
        else:
            out[key] = value
    return out


def journal_path(ws: Workspace) -> Path:
    return ws.service(Journal).folder


# ---------------------------------------------------------------------- the store on disk

ENTRIES = "entries.jsonl"
CHECKPOINTS = "checkpoints.jsonl"
BLOBS = "blobs"
LOCK = "lock"


def journal_folder(state_dir: Path) -> Path:
    """Where a workspace's journal lives, given the workspace's state folder."""
    return state_dir / "journal"


def _entry_from(item: dict[str, Any]) -> Entry | None:
    if _id_mark_of(item) is not None:
        return None
    item["made_folders"] = tuple(item.get("made_folders") or ())
    return Entry(**item)


def _checkpoint_from(item: dict[str, Any]) -> Checkpoint:
    return Checkpoint(**item)


def _id_mark(last_id: int) -> dict[str, Any]:
    """The first line of a rewritten log: the largest id given so far (ids are never given twice)."""
    return {"last_id": last_id}


def _id_mark_of(item: dict[str, Any]) -> int | None:
    value = item.get("last_id") if len(item) == 1 else None
    return value if isinstance(value, int) else None


def _last_id_of(item: dict[str, Any]) -> int:
    """The id a log line gives (an entry's, or the mark's), 0 for anything else."""
    value = _id_mark_of(item)
    if value is None:
        value = item.get("id")
    return value if isinstance(value, int) else 0


def _row(item: Entry | Checkpoint) -> dict[str, Any]:
    """A log line's object: the dataclass's fields, shallow (``asdict`` deep-copies, ten times slower)."""
    return {f.name: getattr(item, f.name) for f in fields(item)}


def _line_size(item: dict[str, Any]) -> int:
    return len(json.dumps(item, ensure_ascii=True)) + 1


def _checkpoint_blobs(cp: Checkpoint) -> set[str]:
    return set(cp.files.values()) | set(cp.seen.values())


class _Tally:
    """Bytes of a set of log lines and the distinct blobs they refer to."""

    def __init__(self, blob_size: Any) -> None:
        self.total = 0
        self._refs: dict[str, int] = {}
        self._blob_size = blob_size
        self._sizes: dict[str, int] = {}

    def add(self, line: int, digests: Any) -> None:
        self.total += line
        for digest in set(digests):
            if digest == ABSENT:
                continue
            if not self._refs.get(digest):
                if digest not in self._sizes:
                    self._sizes[digest] = self._blob_size(digest)
                self.total += self._sizes[digest]
            self._refs[digest] = self._refs.get(digest, 0) + 1

    def remove(self, line: int, digests: Any) -> None:
        self.total -= line
        for digest in set(digests):
            if digest == ABSENT:
                continue
            self._refs[digest] -= 1
            if not self._refs[digest]:
                self.total -= self._sizes[digest]


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


def budget_from_env(environ: Any = None) -> int:
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


@dataclass(frozen=True)
class StoreUsage:
    """What a journal folder holds (or held, for :func:`clear`)."""

    folder: Path
    bytes: int = 0
    """The logs and the stored contents, as files on disk (their sizes)."""
    entries: int = 0
    first_id: int | None = None
    last_id: int | None = None
    checkpoints: int = 0
    """Named checkpoints (each in its latest form)."""
    blobs: int = 0


def _disk_usage(folder: Path) -> tuple[int, int]:
    """(bytes of the logs and stored contents, number of stored contents) of a journal folder."""
    size = blobs = 0
    for name in (ENTRIES, CHECKPOINTS):
        with contextlib.suppress(OSError):
            size += (folder / name).stat().st_size
    with contextlib.suppress(OSError):
        for shard in (folder / BLOBS).iterdir():
            with contextlib.suppress(OSError):
                for blob in shard.iterdir():
                    with contextlib.suppress(OSError):
                        size += blob.stat().st_size
                        blobs += 1
    return size, blobs


def measure(folder: Path) -> StoreUsage:
    """The journal folder's size and counts, read without a lock and without changing anything."""
    size, blobs = _disk_usage(folder)
    entries = LineLog(folder / ENTRIES, _entry_from)
    names = LineLog(folder / CHECKPOINTS, _checkpoint_from)
    try:
        entries.refresh()
        names.refresh()
    finally:
        entries.close()
        names.close()
    ids = [e.id for e in entries.items]
    return StoreUsage(
        folder=folder,
        bytes=size,
        entries=len(ids),
        first_id=ids[0] if ids else None,
        last_id=ids[-1] if ids else None,
        checkpoints=len({cp.name for cp in names.items}),
        blobs=blobs,
    )


def clear(folder: Path) -> StoreUsage:
    """Forget every change and checkpoint of a journal folder; returns what it held.

    Holds the journal's lock file, as a server's appends do, and leaves the folder, its lock file and
    a one-line log giving the last id (so a running server goes on numbering after it). A server that
    has the journal open sees it empty at its next look."""
    import fcntl
    import shutil

    if not folder.is_dir():
        return StoreUsage(folder=folder)
    fd = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        held = measure(folder)
        lines: LineLog[dict[str, Any]] = LineLog(folder / ENTRIES, lambda item: item)
        lines.refresh()
        last_id = max((_last_id_of(item) for item in lines.items), default=0)
        if last_id:
            lines.rewrite([_id_mark(last_id)], [])
        else:
            (folder / ENTRIES).unlink(missing_ok=True)
        lines.close()
        (folder / CHECKPOINTS).unlink(missing_ok=True)
        with contextlib.suppress(FileNotFoundError):
            for shard in (folder / BLOBS).iterdir():
                if shard.is_dir() and not shard.is_symlink():
                    shutil.rmtree(shard, ignore_errors=True)
                else:
                    shard.unlink(missing_ok=True)
    finally:
        os.close(fd)  # closing the descriptor lets go of the lock
    return held

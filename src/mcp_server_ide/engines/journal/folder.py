"""A journal's folder on disk, its lock file, and what ``mcp-server-ide journal show|clear`` does to it.

The folder (in the workspace's state folder, never inside the workspace) holds ``entries.jsonl``,
``checkpoints.jsonl``, the blob store ``blobs/`` and the ``lock`` file. The servers sharing a journal
take turns through the lock file (:class:`LockFile`): everything that stores bytes and writes the line
referring to them holds it, as a pruning and a ``journal clear`` do, so that no process loses an id,
an entry or a blob to another's pruning. :func:`measure` and :func:`clear` work on the folder without
a server (a running one sees the result at its next look).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .linelog import LineLog, Row
from .records import checkpoint_from, entry_from, id_mark, last_id_of

ENTRIES = "entries.jsonl"
CHECKPOINTS = "checkpoints.jsonl"
BLOBS = "blobs"
LOCK = "lock"


class LockFile:
    """An exclusive ``flock`` on ``path`` (made when missing). Its descriptor stays open until
    :meth:`close`; within one process the caller orders its threads (the lock is per descriptor)."""

    def __init__(self, path: Path) -> None:
        self.path: Path = path
        self._fd: int | None = None

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        import fcntl

        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def journal_folder(state_dir: Path) -> Path:
    """Where a workspace's journal lives, given the workspace's state folder."""
    return state_dir / "journal"


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


def disk_usage(folder: Path) -> tuple[int, int]:
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
    size, blobs = disk_usage(folder)
    entries = LineLog(folder / ENTRIES, entry_from)
    names = LineLog(folder / CHECKPOINTS, checkpoint_from)
    try:
        _ = entries.refresh()
        _ = names.refresh()
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
    import shutil

    if not folder.is_dir():
        return StoreUsage(folder=folder)
    lock = LockFile(folder / LOCK)
    try:
        with lock.held():
            held = measure(folder)
            lines: LineLog[Row] = LineLog(folder / ENTRIES, lambda item: item)
            _ = lines.refresh()
            last_id = max((last_id_of(item) for item in lines.items), default=0)
            if last_id:
                lines.rewrite([id_mark(last_id)], [])
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
        lock.close()  # closing the descriptor lets go of the lock
    return held

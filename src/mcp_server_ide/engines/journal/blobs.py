"""The journal's content-addressed store: the bytes before and after each change, by SHA-256.

A blob lives at ``blobs/<first two hex digits>/<hash>``. It is written once under its own hash
(exclusive create, fsync): no temp file and rename are needed, since a name is never rewritten. A
blob torn by a crash has the wrong size and is written again atomically; reads check the hash.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..failures import ToolFailure
from ..textio import atomic_write, content_hash
from .records import ABSENT


class BlobStore:
    def __init__(self, folder: Path) -> None:
        self.folder: Path = folder
        self.folder.mkdir(parents=True, exist_ok=True)

    def path(self, digest: str) -> Path:
        return self.folder / digest[:2] / digest

    def get(self, digest: str) -> bytes | None:
        """The stored bytes (None for "absent"); a missing or damaged blob is a ToolFailure."""
        if digest == ABSENT:
            return None
        try:
            data = self.path(digest).read_bytes()
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

    def put(self, data: bytes | None) -> tuple[str, Path | None]:
        """Keep ``data``; returns its hash ("absent" for None) and, when this call wrote a new blob, its
        path. Call it holding the lock file, and write the line that refers to the blob before letting
        go (a pruning collects every blob no line refers to)."""
        if data is None:
            return ABSENT, None
        digest = content_hash(data)
        path = self.path(digest)
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            size = None
        if size == len(data):
            return digest, None
        if size is not None:
            atomic_write(path, data, 0o600)
            return digest, None
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            return digest, None  # another writer is storing the same bytes
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
        return digest, path

    def size(self, digest: str) -> int:
        """The stored blob's bytes on disk (0 for "absent" or a missing blob)."""
        if digest == ABSENT:
            return 0
        try:
            return self.path(digest).stat().st_size
        except OSError:
            return 0

    def collect(self, wanted: set[str]) -> int:
        """Delete every blob not in ``wanted``; returns how many went. The caller holds the lock file
        (every blob stored is written down before it is let go)."""
        removed = 0
        for shard in self.folder.iterdir():
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

"""The change journal: every change this server makes to a file, enough to restore it.

Kept per workspace in its state folder (never inside the workspace): a JSON-lines log of
entries (id, time, tool, arguments, path, hashes before and after) and a content-addressed
store of the bytes before and after each change.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..call import current_or_none
from ..workspace import Workspace
from .changes import FileChange
from .textio import atomic_write, content_hash

ABSENT = "absent"


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


class Journal:
    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.folder = ws.state_dir / "journal"
        self.blobs = self.folder / "blobs"
        self.blobs.mkdir(parents=True, exist_ok=True)
        self.log_path = self.folder / "entries.jsonl"
        self._lock = threading.Lock()
        self._entries: list[Entry] | None = None

    def record(self, change: FileChange) -> Entry:
        call = current_or_none()
        with self._lock:
            entries = self._load()
            entry = Entry(
                id=(entries[-1].id + 1) if entries else 1,
                time=time.time(),
                tool=call.tool if call else "",
                door=call.door if call else "",
                arguments=_short_arguments(call.arguments if call else {}),
                path=change.rel,
                before=self._store(change.before),
                after=self._store(change.after),
            )
            with open(self.log_path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(asdict(entry), ensure_ascii=False) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            entries.append(entry)
            return entry

    def entries(self) -> list[Entry]:
        with self._lock:
            return list(self._load())

    def blob(self, digest: str) -> bytes | None:
        if digest == ABSENT:
            return None
        return (self.blobs / digest[:2] / digest).read_bytes()

    def _store(self, data: bytes | None) -> str:
        if data is None:
            return ABSENT
        digest = content_hash(data)
        path = self.blobs / digest[:2] / digest
        if not path.exists():
            path.parent.mkdir(exist_ok=True)
            atomic_write(path, data, 0o600)
        return digest

    def _load(self) -> list[Entry]:
        if self._entries is None:
            self._entries = []
            if self.log_path.exists():
                for line in self.log_path.read_text(encoding="utf-8").splitlines():
                    try:
                        self._entries.append(Entry(**json.loads(line)))
                    except (ValueError, TypeError):
                        continue  # a torn last line after a crash
        return self._entries


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

"""The headless editor's saved state: ``editor.json`` in the workspace's state folder.

:class:`EditorData` is what the model keeps (open files, the active file, each file's tracked
selection, the breakpoints, how far it has read the change journal) and its JSON form;
:class:`StateFile` is the file. Several server processes on one workspace (stdio for VS Code,
HTTP for a script) share it: it is replaced atomically, so a reader sees the old state or the new
one, and every update happens while holding an exclusive ``flock`` on ``editor.json.lock``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .breakpoints import Breakpoints
from .positions import Position, Selection
from .tracking import FileState

log = logging.getLogger(__name__)

STATE_FILE = "editor.json"
STATE_VERSION = 1

Snapshot = tuple[
    list[str],
    str | None,
    dict[str, tuple[Selection, str, str]],
    dict[str, frozenset[int]],
    int | None,
]
"""A comparable copy of :class:`EditorData`: equal snapshots need no save."""


@dataclass
class EditorData:
    """Everything the headless model keeps about a workspace's editor (paths are absolute strings)."""

    open: list[str] = field(default_factory=list)
    """The open files, in the order they were opened (the active one last)."""
    active: str | None = None
    files: dict[str, FileState] = field(default_factory=dict)
    breakpoints: Breakpoints = field(default_factory=Breakpoints)
    journal_seen: int | None = None
    """The last change-journal entry followed (None: not read yet)."""

    def tracked(self, key: str) -> bool:
        """True when the model keeps anything about the file ``key``."""
        return key in self.breakpoints or key in self.files or key in self.open

    def tracked_files(self) -> set[str]:
        return set(self.breakpoints.files()) | set(self.files) | set(self.open)

    def forget(self, key: str) -> None:
        """Close ``key``: the previously opened file becomes active."""
        if key in self.open:
            self.open.remove(key)
        self.files.pop(key, None)
        if self.active == key:
            self.active = self.open[-1] if self.open else None

    def prune_missing(self) -> None:
        """Close the files and drop the breakpoints of files no longer on disk."""
        for key in list(self.open):
            if not os.path.isfile(key):
                self.forget(key)
        self.breakpoints.prune_missing()

    def snapshot(self) -> Snapshot:
        return (
            list(self.open),
            self.active,
            {k: (v.selection, v.sync_hash, v.lines_hash) for k, v in self.files.items()},
            self.breakpoints.snapshot(),
            self.journal_seen,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "version": STATE_VERSION,
            "open": self.open,
            "active": self.active,
            "files": {
                path: {
                    "selection": [
                        fs.selection.anchor.line,
                        fs.selection.anchor.character,
                        fs.selection.active.line,
                        fs.selection.active.character,
                    ],
                    "sync": fs.sync_hash,
                    "lines": fs.lines_hash,
                }
                for path, fs in self.files.items()
                if path in self.open
            },
            "breakpoints": self.breakpoints.to_json(),
            "journal": self.journal_seen,
        }

    @classmethod
    def from_json(cls, data: object) -> EditorData:
        """Read back :meth:`to_json`'s form; another version, a value of the wrong shape, or entries
        that do not parse are left out (a damaged state file is an empty editor, never a crash)."""
        if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
            data = {}
        listed = data.get("open")
        open_files = [p for p in listed if isinstance(p, str)] if isinstance(listed, list) else []
        active = data.get("active")
        files: dict[str, FileState] = {}
        stored = data.get("files")
        for path, item in stored.items() if isinstance(stored, dict) else ():
            try:
                al, ac, cl, cc = (int(v) for v in item["selection"])
                files[path] = FileState(
                    Selection(Position(al, ac), Position(cl, cc)),
                    str(item.get("sync", "")),
                    str(item.get("lines", "")),
                )
            except (KeyError, TypeError, ValueError, AttributeError):
                continue
        seen = data.get("journal")
        return cls(
            open=open_files,
            active=active if isinstance(active, str) and active in open_files else None,
            files=files,
            breakpoints=Breakpoints.from_json(data.get("breakpoints")),
            journal_seen=seen if isinstance(seen, int) and not isinstance(seen, bool) else None,
        )


class StateFile:
    """The state file of one workspace: read whole, replaced atomically, updated under a file lock."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / STATE_FILE
        self.lock_path = state_dir / (STATE_FILE + ".lock")

    def read(self) -> bytes | None:
        """The saved state's bytes (None when there is none yet). Callers compare them whole to see
        whether another process saved, since its save may reuse the inode, size and (coarse) mtime
        of ours; the file is small, so this costs a few microseconds."""
        try:
            with open(self.path, "rb") as fh:
                return fh.read()
        except FileNotFoundError:
            return None

    def parse(self, stamp: bytes | None) -> EditorData:
        """The state in ``stamp`` (bytes :meth:`read` gave); an unreadable file is an empty editor."""
        data: object = {}
        if stamp is not None:
            try:
                data = json.loads(stamp.decode("utf-8"))
            except ValueError:
                log.warning("editor state %s is unreadable; starting with an empty editor", self.path)
                data = {}
        return EditorData.from_json(data)

    def write(self, data: EditorData) -> None:
        payload = json.dumps(data.to_json(), ensure_ascii=False, indent=1).encode("utf-8")
        # Replaced atomically (a reader sees the old state or the new), without fsync: the state
        # changes on every cursor move, and losing the last move in a power cut costs nothing.
        fd, tmp = tempfile.mkstemp(prefix=".editor.", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(payload)
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the cross-process lock (other server processes on this workspace wait for it)."""
        with open(self.lock_path, "a") as lock_file:
            fcntl.flock(lock_file, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock_file, fcntl.LOCK_UN)

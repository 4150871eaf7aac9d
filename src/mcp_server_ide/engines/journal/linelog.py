"""A JSON-lines file that several processes append to, read incrementally.

:class:`LineLog` keeps the items parsed so far and, on :meth:`LineLog.refresh`, reads only what was
appended since (other processes' lines included). A file replaced whole (an atomic rewrite, a removal)
is read again from its start. The log keeps its file open, so the inode it compares with cannot be
reused by a later file.

Writers append under a lock file of their own (the caller's); readers need no lock: they consume
complete lines only, and a line torn by a crash is skipped (the next append starts on a new line).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

from ..textio import atomic_write

T = TypeVar("T")
Row = dict[str, object]
"""One line's JSON object."""


class LineLog(Generic[T]):
    def __init__(self, path: Path, parse: Callable[[Row], T | None]) -> None:
        self.path = path
        self.parse = parse
        """Turns one line's object into an item; None skips the line."""
        self.items: list[T] = []
        self.sizes: list[int] = []
        """The bytes of each item's line, beside :attr:`items`."""
        self._fd: int | None = None
        self._offset = 0
        """Bytes of the file consumed: complete lines only."""
        self._torn = False
        """True when the file holds bytes after the last complete line."""

    def refresh(self) -> list[T]:
        """Read the lines appended since the last look; returns the new items (all of them, from the
        start, when the file was replaced: compare ``len`` with :attr:`items` to tell)."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            self._reset(None)
            return []
        if self._fd is None or os.fstat(self._fd).st_ino != st.st_ino:
            try:
                fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
            except FileNotFoundError:
                self._reset(None)
                return []
            self._reset(fd)
        assert self._fd is not None
        size = os.fstat(self._fd).st_size
        if size <= self._offset:
            return []
        data = os.pread(self._fd, size - self._offset, self._offset)
        end = data.rfind(b"\n") + 1
        self._torn = end < len(data)
        self._offset += end
        new: list[T] = []
        for line in data[: end - 1].split(b"\n") if end else ():
            item = _parse_line(line, self.parse)
            if item is not None:
                new.append(item)
                self.sizes.append(len(line) + 1)
        self.items.extend(new)
        return new

    def append(self, obj: Row) -> int:
        """Append one line (the caller holds the writers' lock and has just refreshed); returns its size."""
        # ASCII escapes keep names that are not valid UTF-8 (surrogate-escaped bytes) round-tripping.
        line = (json.dumps(obj, ensure_ascii=True) + "\n").encode("ascii")
        if self._torn:
            line = b"\n" + line  # a crash left half a line: it stays a line of its own, skipped
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        _ = self.refresh()  # our own line, the file's last
        return len(line)

    def rewrite(self, objs: list[Row], items: list[T], header: Row | None = None) -> None:
        """Replace the file atomically: an optional ``header`` line (that parses to no item), then one
        line per object of ``objs``; ``items`` are what those parse to."""
        lines = [(json.dumps(obj, ensure_ascii=True) + "\n").encode("ascii") for obj in objs]
        first = b"" if header is None else (json.dumps(header, ensure_ascii=True) + "\n").encode("ascii")
        data = first + b"".join(lines)
        atomic_write(self.path, data, 0o600)
        self._reset(os.open(self.path, os.O_RDONLY | os.O_CLOEXEC))
        self._offset = len(data)
        self.items, self.sizes = list(items), [len(line) for line in lines]

    def close(self) -> None:
        """Let go of the file; :attr:`items` stay (a later refresh reads the file again from its start)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _reset(self, fd: int | None) -> None:
        if self._fd is not None:
            os.close(self._fd)
        self._fd = fd
        self._offset = 0
        self._torn = False
        self.items = []
        self.sizes = []


def _parse_line(line: bytes, parse: Callable[[Row], T | None]) -> T | None:
    try:
        obj = json.loads(line)
    except ValueError:
        return None  # a torn line after a crash
    if not isinstance(obj, dict):
        return None
    try:
        return parse(obj)
    except (TypeError, ValueError):
        return None

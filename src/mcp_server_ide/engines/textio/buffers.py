"""Unsaved editor buffers: reads that see them, writes that edit them instead of the file.

When a live editor is attached (the VS Code bridge registers a :class:`BufferSource` with
:meth:`Buffers.attach`), a file open there with unsaved changes is, for the tools that ask through
:func:`read_current`, the buffer's text: its ``TextFile`` has ``unsaved=True`` and its ``raw``/``hash``
are the bytes saving the buffer would write. A write computed from that text (its ``before`` is
those bytes) goes into the buffer (:func:`into_buffer`): an edit VS Code can undo, nothing saved, the
journal recording it like any change. A write computed from the disk's text under a dirty buffer
is refused: it would go under the person's unsaved text. Without a live editor nothing changes.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from ...workspace import Workspace
from ..failures import ToolFailure
from ..sandbox import Resolved
from .reading import read_bytes, read_text
from .textfile import TextFile, encode

EDITED = "edited in VS Code, unsaved"
"""A write result's ``buffer`` field when the change went into the editor's unsaved buffer."""
UNSAVED = "unsaved"
"""A read result's ``buffer`` field when the text is the editor's unsaved buffer, not the file."""


@dataclass(frozen=True)
class Unsaved:
    """An open document with unsaved changes: its text (``\\n`` line breaks), line ending, version."""

    text: str
    crlf: bool
    version: int | None


class BufferSource(Protocol):
    def unsaved(self, path: Path) -> Unsaved | None:
        """The unsaved buffer of ``path``; None when it is not open, is clean, or the editor is gone."""
        ...

    def edit(self, path: Path, old: Unsaved, new_text: str) -> None:
        """Make the buffer ``new_text`` (``\\n`` form), refusing (``ToolFailure``) if it is no longer ``old``."""
        ...


class Buffers:
    """The workspace's live editor buffers (none until a live editor attaches)."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._source: BufferSource | None = None
        self._lock = threading.Lock()

    def attach(self, source: BufferSource | None) -> None:
        with self._lock:
            self._source = source

    @property
    def source(self) -> BufferSource | None:
        with self._lock:
            return self._source

    def follow_roots(self, roots: list[Path]) -> bool:
        """Stays when the roots change: the editor is the person's, whatever its folders."""
        return True


def _source(ws: Workspace) -> BufferSource | None:
    from .. import changes

    changes.attach_editor(ws)
    return ws.service(Buffers).source


def _as_file(buffer: Unsaved, disk: TextFile, name: str) -> TextFile:
    like = replace(disk, newline="\r\n" if buffer.crlf else "\n")
    try:
        raw = encode(buffer.text, like, name)
    except ToolFailure:  # the person typed what the file's encoding cannot hold: the buffer is UTF-8 here
        like = replace(like, encoding="utf-8", bom=b"")
        raw = encode(buffer.text, like, name)
    return replace(like, text=buffer.text, raw=raw, unsaved=True)


def read_current(ws: Workspace, resolved: Resolved) -> TextFile:
    """The file's text as the person sees it: its unsaved buffer when the live editor has one (then
    ``unsaved`` is True), else the file on disk (:func:`.reading.read_text`)."""
    return with_buffer(ws, resolved, read_text(resolved))


def with_buffer(ws: Workspace, resolved: Resolved, disk: TextFile) -> TextFile:
    """``disk`` (the file as read), or its unsaved buffer in the live editor when it has one."""
    source = _source(ws)
    buffer = source.unsaved(resolved.path) if source is not None else None
    return disk if buffer is None else _as_file(buffer, disk, resolved.display_rel)


def current_bytes(ws: Workspace, resolved: Resolved) -> tuple[bytes, int]:
    """The bytes and mode :func:`read_current` stands for (any size; the unsaved buffer's bytes when one)."""
    raw, mode = read_bytes(resolved, limit=None)
    source = _source(ws)
    buffer = source.unsaved(resolved.path) if source is not None else None
    if buffer is None:
        return raw, mode
    from .textfile import decode

    return _as_file(buffer, decode(raw, mode, resolved.display_rel), resolved.display_rel).raw, mode


def into_buffer(ws: Workspace, resolved: Resolved, data: bytes, before: bytes | None) -> bool:
    """Put a write of ``data`` into the file's unsaved buffer when it has one and the write was made
    from that buffer's text (``before``); True when it did. A write made from other text (the disk's)
    is refused; no buffer: False, the caller writes the file."""
    source = _source(ws)
    if source is None:
        return False
    buffer = source.unsaved(resolved.path)
    if buffer is None:
        if before is not None and _disk_bytes(resolved) not in (before, None):
            # Read from a buffer that was discarded (or saved otherwise) since: the file is not that text.
            raise ToolFailure(
                f"conflict: {resolved.display_rel!r} changed since it was read (its unsaved text in VS Code was "
                "saved or discarded meanwhile); nothing was written. Read it again and redo the change",
                kind="conflict",
            )
        return False
    disk = read_text(resolved) if before is not None else None
    shown = _as_file(buffer, disk, resolved.display_rel) if disk is not None else None
    if shown is None or shown.raw != before:
        raise ToolFailure(
            f"refused: {resolved.display_rel!r} has unsaved changes in VS Code that this write was not made from; "
            "nothing was written. Read the file again (reads show the unsaved text) and redo the change: it then "
            "goes into the buffer, undoable there",
            kind="conflict",
        )
    body = data[len(shown.bom) :] if data.startswith(shown.bom) else data
    new_text = body.decode(shown.encoding).replace("\r\n", "\n").replace("\r", "\n")
    source.edit(resolved.path, buffer, new_text)
    return True


def _disk_bytes(resolved: Resolved) -> bytes | None:
    try:
        return read_bytes(resolved, limit=None)[0]
    except ToolFailure:
        return None

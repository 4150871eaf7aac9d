"""The documents a language server has open, kept equal to the disk (or to what our tools wrote).

Every file a query touches is opened (``didOpen``) with its disk text and version 1; a change
becomes ``didChange`` (the whole text) with the next version, then ``didSave``. Before a query,
open documents are compared with the disk by size and mtime (:func:`stamp`), so edits made by
other programs are sent too. Files written by this server's tools arrive from :mod:`...changes`
(through the manager) as :meth:`Documents.file_changed`; ``didChangeWatchedFiles`` announces
their creation and deletion.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types as lsp

Notify = Callable[[str, object], None]
"""Sends one notification to the server (dropped when it is not running)."""


def uri_of(path: Path) -> str:
    return path.as_uri()


def path_of(uri: str) -> Path | None:
    """The path of a ``file:`` URI; None for any other scheme."""
    from urllib.parse import unquote, urlparse

    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


@dataclass
class Document:
    uri: str
    version: int
    text: str
    stamp: tuple[int, int]
    synced_at: float = 0.0
    """When the server was last sent this text (diagnostics published after it are current)."""


def stamp(path: Path) -> tuple[int, int]:
    """(size, mtime in ns) of a file; (-1, -1) when it cannot be read."""
    try:
        st = path.stat()
    except OSError:
        return (-1, -1)
    return (st.st_size, st.st_mtime_ns)


def _read(path: Path) -> str:
    from ..textio import decode

    return decode(path.read_bytes(), name=path.name).text


class Documents:
    """One server's open documents by URI; every change is sent through ``notify``.

    ``lock`` is the server's own lock, so that syncing never interleaves with a (re)start.
    """

    def __init__(self, notify: Notify, language_id: Callable[[Path], str], lock: threading.RLock) -> None:
        self._notify = notify
        self._language_id = language_id
        self._lock = lock
        self._open: dict[str, Document] = {}

    def get(self, uri: str) -> Document | None:
        return self._open.get(uri)

    def uris(self) -> list[str]:
        """The URIs of every open document."""
        with self._lock:
            return list(self._open)

    def language_of(self, uri: str) -> str:
        """The language id the document is (or would be) opened with."""
        path = path_of(uri)
        return self._language_id(path) if path is not None else ""

    def clear(self) -> None:
        """Forget every document (a new server process has none open)."""
        self._open.clear()

    def sync(self, path: Path, text: str | None = None) -> Document:
        """Make the server's copy of ``path`` equal to the disk (or ``text``): didOpen or didChange."""
        uri = uri_of(path)
        with self._lock:
            doc = self._open.get(uri)
            now = stamp(path)
            if text is None:
                if doc is not None and doc.stamp == now:
                    return doc
                text = _read(path)
            if doc is None:
                doc = Document(uri=uri, version=1, text=text, stamp=now, synced_at=time.monotonic())
                self._open[uri] = doc
                self._notify(
                    "textDocument/didOpen",
                    lsp.DidOpenTextDocumentParams(
                        text_document=lsp.TextDocumentItem(
                            uri=uri, language_id=self._language_id(path), version=1, text=text
                        )
                    ),
                )
                return doc
            doc.stamp = now
            if doc.text == text:
                return doc
            doc.version += 1
            doc.text = text
            doc.synced_at = time.monotonic()
            self._notify(
                "textDocument/didChange",
                lsp.DidChangeTextDocumentParams(
                    text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=doc.version),
                    content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
                ),
            )
            self._notify(
                "textDocument/didSave",
                lsp.DidSaveTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri)),
            )
            return doc

    def refresh(self) -> None:
        """Send whatever changed on disk in the open documents (edits by other programs)."""
        with self._lock:
            for uri, doc in list(self._open.items()):
                path = path_of(uri)
                if path is None:
                    continue
                if not path.exists():
                    self.close(path)
                elif stamp(path) != doc.stamp:
                    self.sync(path)

    def close(self, path: Path) -> None:
        uri = uri_of(path)
        with self._lock:
            if self._open.pop(uri, None) is not None:
                self._notify(
                    "textDocument/didClose",
                    lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri)),
                )

    def file_changed(self, path: Path, after: bytes | None, created: bool) -> None:
        """A file written by our tools: the server gets its new text at once (didOpen/didChange).

        Files the server had not opened are opened now rather than left to its own file watcher, whose
        events come late: the next answer must already see the write. Deleted files are closed and
        announced as a watched-file deletion.
        """
        with self._lock:
            if after is None:
                self.close(path)
                self._notify(
                    "workspace/didChangeWatchedFiles",
                    lsp.DidChangeWatchedFilesParams(
                        changes=[lsp.FileEvent(uri=uri_of(path), type=lsp.FileChangeType.Deleted)]
                    ),
                )
                return
            from ..textio import decode

            try:
                text = decode(after, name=path.name).text
            except Exception:
                return
            if created:
                self._notify(
                    "workspace/didChangeWatchedFiles",
                    lsp.DidChangeWatchedFilesParams(
                        changes=[lsp.FileEvent(uri=uri_of(path), type=lsp.FileChangeType.Created)]
                    ),
                )
            self.sync(path, text)
            self._open[uri_of(path)].stamp = stamp(path)

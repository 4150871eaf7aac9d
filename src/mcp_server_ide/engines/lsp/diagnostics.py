"""A language server's diagnostics per document, published or pulled, and waiting for the current text's.

Two kinds of answer are kept per URI, each with the document version it describes and its arrival time:
the last ``textDocument/publishDiagnostics`` (:meth:`Diagnostics.on_publish`), and the last
``textDocument/diagnostic`` pull (:meth:`Diagnostics.on_pull`, fed by :mod:`.pull`, with the ticket
of the request it answers). :meth:`Diagnostics.wait` returns the diagnostics of a document's current
text: for a server that publishes, the first publication of that version or later (for servers that
publish no version, an arrival after the last sync); for a server that is pulled, a pull of that
version asked for after the caller's ticket, a complete answer. :meth:`Diagnostics.snapshot` gives the
newest of either per URI (the workspace's problems view), and each ``listeners`` callable hears the
URI of every change.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from lsprotocol import types as lsp

from .documents import Document

log = logging.getLogger(__name__)


class Diagnostics:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._published: dict[str, tuple[int | None, float, list[lsp.Diagnostic]]] = {}
        self._pulled: dict[str, tuple[int, int, float, list[lsp.Diagnostic]]] = {}
        """URI -> (version, ticket, arrival, items) of its last pull."""
        self.listeners: list[Callable[[str], None]] = []
        """Called with the URI after each publication or pull (outside the lock; they must be quick)."""

    def clear(self) -> None:
        with self._cond:
            self._published.clear()
            self._pulled.clear()

    def wake(self) -> None:
        """Something a waiter's ``until`` looks at changed (a pull provider registered)."""
        with self._cond:
            self._cond.notify_all()

    def on_publish(self, params: lsp.PublishDiagnosticsParams) -> None:
        with self._cond:
            self._published[params.uri] = (params.version, time.monotonic(), list(params.diagnostics))
            self._cond.notify_all()
        self._tell(params.uri)

    def on_pull(self, uri: str, version: int, ticket: int, items: list[lsp.Diagnostic]) -> None:
        """A pull's complete diagnostics of ``uri`` at ``version`` (an older pull never replaces a newer)."""
        with self._cond:
            old = self._pulled.get(uri)
            if old is not None and (old[0], old[1]) > (version, ticket):
                return
            changed = old is None or old[3] != items
            self._pulled[uri] = (version, ticket, time.monotonic(), list(items))
            self._cond.notify_all()
        if changed:
            self._tell(uri)

    def drop_pulled(self, uri: str) -> None:
        """The document was closed: its pulled diagnostics no longer describe anything."""
        with self._cond:
            gone = self._pulled.pop(uri, None) is not None
        if gone:
            self._tell(uri)

    def _tell(self, uri: str) -> None:
        for listener in list(self.listeners):
            try:
                listener(uri)
            except Exception:
                log.exception("a diagnostics listener failed")

    def snapshot(self) -> dict[str, tuple[float, list[lsp.Diagnostic]]]:
        """Every URI's newest diagnostics (published or pulled) with their arrival time (``time.monotonic()``)."""
        with self._cond:
            out = {uri: (at, list(diags)) for uri, (_v, at, diags) in self._published.items()}
            for uri, (_v, _t, at, items) in self._pulled.items():
                if uri not in out or at >= out[uri][0]:
                    out[uri] = (at, list(items))
            return out

    def wait(
        self,
        doc: Document,
        timeout: float,
        closed: Callable[[], bool],
        *,
        pulled_since: int | None = None,
        until: Callable[[], bool] | None = None,
    ) -> list[lsp.Diagnostic] | None:
        """The diagnostics of ``doc``'s current text; None if none came in time (or once ``until()``).

        With ``pulled_since`` only a pull of ticket ``pulled_since`` or later counts, else only a publication.
        """
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                found = self._current(doc, pulled_since)
                if found is not None:
                    return found
                left = deadline - time.monotonic()
                if left <= 0 or closed() or (until is not None and until()):
                    return None
                self._cond.wait(min(left, 0.5))

    def _current(self, doc: Document, pulled_since: int | None) -> list[lsp.Diagnostic] | None:
        if pulled_since is not None:
            pulled = self._pulled.get(doc.uri)
            if pulled is not None and pulled[0] >= doc.version and pulled[1] >= pulled_since:
                return list(pulled[3])
            return None
        entry = self._published.get(doc.uri)
        if entry is None:
            return None
        version, at, diags = entry
        if (version is not None and version >= doc.version) or (version is None and at >= doc.synced_at):
            return diags
        return None

"""The diagnostics a language server publishes, and waiting for those of a document's current text.

The last ``textDocument/publishDiagnostics`` per URI is kept with its version and arrival time;
:meth:`Diagnostics.wait` returns them once they describe the text the server was last sent
(a later version, or for servers that publish no version, an arrival after the last sync).
:meth:`Diagnostics.snapshot` gives them all (for the workspace's problems view), and each
``listeners`` callable hears the URI of every publication.
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
        self.listeners: list[Callable[[str], None]] = []
        """Called with the URI after each publication (outside the lock; they must be quick)."""

    def clear(self) -> None:
        with self._cond:
            self._published.clear()

    def on_publish(self, params: lsp.PublishDiagnosticsParams) -> None:
        with self._cond:
            self._published[params.uri] = (params.version, time.monotonic(), list(params.diagnostics))
            self._cond.notify_all()
        for listener in list(self.listeners):
            try:
                listener(params.uri)
            except Exception:
                log.exception("a diagnostics listener failed")

    def snapshot(self) -> dict[str, tuple[float, list[lsp.Diagnostic]]]:
        """Every URI's last published diagnostics with their arrival time (``time.monotonic()``)."""
        with self._cond:
            return {uri: (at, list(diags)) for uri, (_v, at, diags) in self._published.items()}

    def wait(self, doc: Document, timeout: float, closed: Callable[[], bool]) -> list[lsp.Diagnostic] | None:
        """The diagnostics the server published for ``doc``'s current text; None if none came in time."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                entry = self._published.get(doc.uri)
                if entry is not None:
                    version, at, diags = entry
                    if (version is not None and version >= doc.version) or (
                        version is None and at >= doc.synced_at
                    ):
                        return diags
                left = deadline - time.monotonic()
                if left <= 0 or closed():
                    return None
                self._cond.wait(min(left, 0.5))

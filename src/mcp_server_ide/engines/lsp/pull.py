"""Pull diagnostics (``textDocument/diagnostic``): the server's complete diagnostics of a text.

A server offers pulls statically (``diagnosticProvider`` in its ``initialize`` result) or dynamically
(``client/registerCapability`` for ``textDocument/diagnostic``; basedpyright does this, and once the
client can take it, it stops publishing diagnostics for open files). A pull is answered after the
server has analysed the text, so unlike a publication (basedpyright publishes an empty list for a
file it has only bound, then the checker's findings) it is never an early, incomplete answer.

:class:`Pulls` records the registrations and runs the pulls on its own thread (never on the
connection's reader thread): :meth:`Pulls.want` asks for a fresh pull of an open document, and the
result goes into the server's :class:`~.diagnostics.Diagnostics` with the document version it was
asked for and the ticket of the want, so :meth:`~.diagnostics.Diagnostics.wait` can tell a pull made
after the question from an older one. ``kind: "unchanged"`` answers reuse the items of the result
whose ``resultId`` was sent as ``previousResultId``. The server's own ``didOpen``/``didChange`` and
``workspace/diagnostic/refresh`` trigger pulls of the open documents, so the live problems view
stays current without anyone asking.

One provider serves a document: the first registration whose document selector matches it.
"""

from __future__ import annotations

import fnmatch
import logging
import threading
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from lsprotocol import types as lsp

from .diagnostics import Diagnostics
from .documents import Documents, path_of
from .jsonrpc import Connection, ConnectionLost, RpcError

log = logging.getLogger(__name__)

METHOD = "textDocument/diagnostic"
RETRIES = 3
"""How often a pull the server cancelled (ServerCancelled, ContentModified) is asked again."""
RETRY_CODES = (lsp.LSPErrorCodes.ServerCancelled.value, lsp.LSPErrorCodes.ContentModified.value)


@dataclass(frozen=True)
class Provider:
    identifier: str | None
    selector: list[Any] | None
    """The registration's document filters (None: every document)."""


def _matches(selector: list[Any] | None, uri: str, language_id: str) -> bool:
    if not selector:
        return True
    path = path_of(uri)
    for entry in selector:
        filt = entry if isinstance(entry, dict) else {}
        if isinstance(entry, str):  # a bare language id (notebook-era shorthand)
            filt = {"language": entry}
        if filt.get("language") not in (None, language_id):
            continue
        if filt.get("scheme") not in (None, uri.split(":", 1)[0]):
            continue
        pattern = filt.get("pattern")
        if isinstance(pattern, str) and (path is None or not fnmatch.fnmatch(str(path), pattern)):
            continue
        return True
    return False


class Pulls:
    """One server process's pull-diagnostics providers and the pulls in flight."""

    def __init__(self, diagnostics: Diagnostics, documents: Documents, server_lock: threading.RLock) -> None:
        self._diagnostics = diagnostics
        self._documents = documents
        self._server_lock = server_lock
        self._conn: Connection | None = None
        self._lock = threading.Condition()
        self._providers: dict[str, Provider] = {}
        self._wanted: dict[str, int] = {}
        """URI -> the newest ticket asking for a pull of it."""
        self._in_flight: set[str] = set()
        self._retries: dict[str, int] = {}
        """URI -> how many more times a cancelled pull of it is asked again."""
        self._results: dict[str, tuple[str, list[lsp.Diagnostic]]] = {}
        """URI -> (resultId, items) of its last full or unchanged answer."""
        self._tickets = 0
        self._thread: threading.Thread | None = None
        self._stopped = False

    # ------------------------------------------------------------------ registrations

    def reset(self, conn: Connection) -> None:
        """A new connection (before ``initialize``): forget everything of the old one."""
        with self._lock:
            self._conn = conn
            self._providers.clear()
            self._wanted.clear()
            self._in_flight.clear()
            self._results.clear()
            self._retries.clear()
            self._stopped = False

    def take_static(self, capabilities: lsp.ServerCapabilities) -> None:
        """A ``diagnosticProvider`` in the ``initialize`` result."""
        static = capabilities.diagnostic_provider
        if static is None:
            return
        selector = getattr(static, "document_selector", None)
        with self._lock:
            self._providers["static"] = Provider(static.identifier, _plain(selector) if selector else None)
        self._diagnostics.wake()

    def on_register(self, params: lsp.RegistrationParams) -> None:
        """``client/registerCapability``: keep the ``textDocument/diagnostic`` registrations."""
        added = False
        with self._lock:
            for reg in getattr(params, "registrations", None) or []:
                if reg.method != METHOD:
                    continue
                options = reg.register_options if isinstance(reg.register_options, dict) else {}
                self._providers[reg.id] = Provider(options.get("identifier"), options.get("documentSelector"))
                added = True
        if added:
            self._diagnostics.wake()  # a waiter for a publication switches to pulling
            self.refresh()

    def on_unregister(self, params: lsp.UnregistrationParams) -> None:
        with self._lock:
            for unreg in getattr(params, "unregisterations", None) or []:
                if unreg.method == METHOD:
                    self._providers.pop(unreg.id, None)

    def provider(self, uri: str) -> Provider | None:
        """Who answers pulls for ``uri``; None when the server only publishes."""
        with self._lock:
            providers = list(self._providers.values())
        if not providers:
            return None
        language = self._documents.language_of(uri)
        return next((p for p in providers if _matches(p.selector, uri, language)), None)

    # ------------------------------------------------------------------ asking

    def want(self, uri: str) -> int:
        """Ask for a pull of ``uri`` made from now on; the ticket a result of it will carry."""
        with self._lock:
            self._tickets += 1
            self._wanted[uri] = self._tickets
            self._ensure_thread()
            self._lock.notify_all()
            return self._tickets

    def refresh(self, _params: object = None) -> None:
        """``workspace/diagnostic/refresh`` (or a new provider): pull every open document again."""
        for uri in self._diagnostics_uris():
            self.want(uri)

    def forget(self, uri: str) -> None:
        """The document was closed: its pulled diagnostics go."""
        with self._lock:
            self._wanted.pop(uri, None)
            self._results.pop(uri, None)
        self._diagnostics.drop_pulled(uri)

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            self._conn = None
            self._lock.notify_all()

    def _diagnostics_uris(self) -> list[str]:
        return [uri for uri in self._documents.uris() if self.provider(uri) is not None]

    # ------------------------------------------------------------------ the pulling thread

    def _ensure_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name="lsp-pull", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._stopped and not any(u not in self._in_flight for u in self._wanted):
                    self._lock.wait()
                if self._stopped:
                    self._thread = None
                    return
                batch = {u: t for u, t in self._wanted.items() if u not in self._in_flight}
                for uri in batch:
                    del self._wanted[uri]
            for uri, ticket in batch.items():
                self._send(uri, ticket)

    def _send(self, uri: str, ticket: int) -> None:
        provider = self.provider(uri)
        with self._server_lock:  # no didChange slips between reading the version and sending the pull
            doc = self._documents.get(uri)
            with self._lock:
                conn = self._conn
                if doc is None or provider is None or conn is None or self._stopped:
                    return
                previous = self._results.get(uri)
                self._in_flight.add(uri)
            version = doc.version
            params = lsp.DocumentDiagnosticParams(
                text_document=lsp.TextDocumentIdentifier(uri=uri),
                identifier=provider.identifier,
                previous_result_id=previous[0] if previous else None,
            )
            try:
                fut = conn.request_async(METHOD, params)
            except ConnectionLost:
                with self._lock:
                    self._in_flight.discard(uri)
                return
        fut.add_done_callback(lambda f: self._done(f, uri, version, ticket, previous))

    def _done(
        self,
        fut: Future[Any],
        uri: str,
        version: int,
        ticket: int,
        previous: tuple[str, list[lsp.Diagnostic]] | None,
    ) -> None:
        """Runs on the reader thread: record the answer, never send from here."""
        items: list[lsp.Diagnostic] | None = None
        retry = False
        try:
            report = fut.result()
        except RpcError as exc:
            with self._lock:
                left = self._retries.get(uri, RETRIES)
                retry = exc.code in RETRY_CODES and left > 0
                self._retries[uri] = left - 1
            if not retry:
                log.info("pulling diagnostics of %s failed: %s", uri, exc)
        except ConnectionLost:
            pass
        except Exception:
            log.exception("a diagnostics pull of %s could not be read", uri)
        else:
            kind = getattr(report, "kind", None)
            result_id = getattr(report, "result_id", None)
            if kind == "full":
                items = list(report.items)
            elif kind == "unchanged" and previous is not None:
                items = previous[1]
            else:
                log.info("%s answered an unchanged pull of %s without a previous result", METHOD, uri)
            with self._lock:
                self._retries.pop(uri, None)
                if items is not None and result_id:
                    self._results[uri] = (result_id, items)
                else:
                    self._results.pop(uri, None)
        with self._lock:
            self._in_flight.discard(uri)
            if retry:
                self._wanted[uri] = max(self._wanted.get(uri, 0), ticket)
            self._lock.notify_all()
        if items is not None:
            self._diagnostics.on_pull(uri, version, ticket, items)
        if retry:
            log.debug("the server cancelled a pull of %s; asking again", uri)


def _plain(selector: Any) -> list[Any]:
    """A typed document selector back into plain filter dicts."""
    from .jsonrpc import to_json

    raw = to_json(selector)
    return raw if isinstance(raw, list) else []

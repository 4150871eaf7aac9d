"""The workspace's language servers: one per language, shared by every session.

``ws.service(LanguageServers)`` is created on first use. It picks the adapter for a file,
starts that language's server lazily, forwards the workspace's file changes to the running
servers, and runs one watchdog thread that stops servers idle for ``MCP_IDE_LSP_IDLE`` seconds
(default 600) and kills any whose process group's resident memory passes the adapter's cap
(``MCP_IDE_LSP_MEMORY_MB``, default 3072). Closing the workspace closes every server.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from lsprotocol import types as lsp

from ...workspace import Workspace
from .adapters import Adapter, Unavailable, all_adapters
from .adapters.base import env_float
from .documents import path_of
from .server import LanguageServer

log = logging.getLogger(__name__)

WATCH_INTERVAL = 2.0


class LanguageServers:
    def __init__(self, ws: Workspace) -> None:
        from .. import changes

        self.ws = ws
        self.root = ws.root
        self.adapters: list[Adapter] = all_adapters()
        for adapter in self.adapters:
            adapter.trusted = ws.policy.trusted
        self.servers: dict[str, LanguageServer] = {}
        self.stopped_reasons: dict[str, str] = {}
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._watchdog: threading.Thread | None = None
        self._unsubscribe = changes.subscribe(ws, self._on_change)
        self.diagnostics_listeners: list[Callable[[Path], None]] = []
        """Called with the file's path whenever a server publishes diagnostics for it."""

    def adapter_for(self, path: Path) -> Adapter | None:
        for adapter in self.adapters:
            if adapter.handles(path):
                return adapter
        return None

    def server_for(self, path: Path, *, start: bool = True) -> LanguageServer | None:
        """The (started) server for ``path``'s language; None when no server handles that language.

        Raises :class:`Unavailable` when the server exists but cannot run.
        """
        adapter = self.adapter_for(path)
        if adapter is None:
            return None
        with self._lock:
            if self._closed.is_set():
                raise Unavailable("the workspace is closing")
            server = self.servers.get(adapter.language)
            if server is None:
                server = self.servers[adapter.language] = LanguageServer(self.root, adapter, self.ws)
                server.diagnostics.listeners.append(self._published)
        if start:
            server.ensure_started()
            self._start_watchdog()
        return server

    def warm(self, path: Path, timeout: float) -> LanguageServer | None:
        """Start the server for ``path``'s language and let it load the project, as a first
        cross-file query would (open ``path``, wait until ready, the adapter's probe), then ask it
        for the references of ``path``'s first symbol (the answer is dropped): a server analyses the
        workspace's files on its first cross-file query, and this one is then no user's wait.
        None when no server handles the language, or it would first have to be installed (a
        warm-up never installs). Its idle clock starts now: unused, the watchdog stops it after
        ``MCP_IDE_LSP_IDLE`` seconds like any server.
        """
        adapter = self.adapter_for(path)
        if adapter is None or not adapter.installed():
            return None
        server = self.server_for(path)
        if server is None:
            return None
        document = server.sync_document(path)
        if server.wait_ready(timeout) is None and adapter.probe(server, path) is None:
            server.wait_ready(timeout)
        position = _first_symbol(path, document.text)
        if position is not None:
            from lsprotocol import types as lsp

            from .documents import uri_of

            params = lsp.ReferenceParams(
                text_document=lsp.TextDocumentIdentifier(uri=uri_of(path)),
                position=lsp.Position(line=position[0], character=position[1]),
                context=lsp.ReferenceContext(include_declaration=True),
            )
            server.request("textDocument/references", params, timeout=timeout)
        return server

    def running_for(self, path: Path) -> LanguageServer | None:
        """The server for ``path`` only if it is already running (never starts one)."""
        adapter = self.adapter_for(path)
        if adapter is None:
            return None
        server = self.servers.get(adapter.language)
        return server if server is not None and server.running else None

    def running(self) -> list[LanguageServer]:
        return [s for s in list(self.servers.values()) if s.running]

    def live_diagnostics(self) -> list[tuple[LanguageServer, Path, float, list[lsp.Diagnostic]]]:
        """(server, file, arrival time, diagnostics) of every file a running server published for."""
        out = []
        for server in self.running():
            for uri, (at, diags) in server.diagnostics.snapshot().items():
                path = path_of(uri)
                if path is not None:
                    out.append((server, path, at, diags))
        return out

    def _published(self, uri: str) -> None:
        path = path_of(uri)
        if path is None:
            return
        for listener in list(self.diagnostics_listeners):
            try:
                listener(path)
            except Exception:
                log.exception("a diagnostics listener failed")

    def _on_change(self, change: object) -> None:
        path = getattr(change, "path", None)
        if path is None:
            return
        server = self.running_for(Path(path))
        if server is not None:
            server.file_changed(
                Path(path), getattr(change, "after", None), getattr(change, "before", None) is None
            )

    def _start_watchdog(self) -> None:
        with self._lock:
            if self._watchdog is None or not self._watchdog.is_alive():
                self._watchdog = threading.Thread(target=self._watch, name="lsp-watchdog", daemon=True)
                self._watchdog.start()

    def _watch(self) -> None:
        while not self._closed.wait(WATCH_INTERVAL):
            idle_limit = env_float("MCP_IDE_LSP_IDLE", 600)
            now = time.monotonic()
            for server in list(self.servers.values()):
                if not server.running:
                    continue
                idle = server.idle_seconds(now)
                if idle > idle_limit:
                    log.info("stopping idle %s", server.adapter.server_name)
                    self.stopped_reasons[server.language] = f"idle for {int(idle)} s"
                    server.stop("idle")
                    continue
                cap = server.adapter.memory_cap_mb() * 1024 * 1024
                rss = server.rss()
                if rss > cap:
                    reason = (
                        f"{server.adapter.server_name} used {rss // (1024 * 1024)} MB, over its "
                        f"{cap // (1024 * 1024)} MB cap (MCP_IDE_LSP_MEMORY_MB); it was stopped and restarts on the next call"
                    )
                    log.warning(reason)
                    self.stopped_reasons[server.language] = reason
                    server.kill(reason)

    def follow_roots(self, roots: list[Path]) -> bool:
        """Stay (servers keep running) while this workspace's primary root is still the one the
        servers were started on; otherwise the workspace closes them and starts anew."""
        return roots[0] == self.root

    def close(self) -> None:
        self._closed.set()
        self._unsubscribe()
        with self._lock:
            servers = list(self.servers.values())
        threads = [threading.Thread(target=s.close, daemon=True) for s in servers]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=5)


def _first_symbol(path: Path, text: str) -> tuple[int, int] | None:
    """Where the name of the first symbol the outline of ``path`` finds is (line, UTF-16 character)."""
    from .. import treesitter

    lang = treesitter.language_for(path)
    symbols = treesitter.outline(text, lang) if lang else []
    return symbols[0].sel_start if symbols else None


def servers(ws: Workspace) -> LanguageServers:
    return ws.service(LanguageServers)

"""Resource subscriptions: ``notifications/resources/updated`` when a subscribed file changes.

Two sources of change, both mapped to ``file://`` URIs:
- writes by this server's own tools (``engines/changes``), announced at once;
- changes on disk by anyone else (an editor, git, a build), seen by a ``watchfiles`` watcher
  that runs only while something is subscribed.

2025 era: ``resources/subscribe`` / ``resources/unsubscribe`` per connection; a closed
connection drops its subscriptions. 2026-07-28 era: ``subscriptions/listen`` streams name the
URIs they want; the SDK's listen handler filters the bus, this module keeps the watcher running
while such a stream is open. Context resources (``ide://git/status``...) are announced as
updated whenever any workspace file changes (debounced), unless they have their own change feed
(``ide://workspace/problems``: announced when the problems it shows change, which its engine
works out from the file changes it is told of and from its language servers). Creating or deleting a file also
sends ``notifications/resources/list_changed`` (debounced).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from mcp.shared.subscriptions import ResourcesListChanged, ResourceUpdated
from mcp_types import (
    EmptyResult,
    SubscribeRequestParams,
    SubscriptionsListenRequestParams,
    UnsubscribeRequestParams,
)

from ..engines import changes
from ..workspace import Workspace
from . import lowlevel
from .clients import clients
from .resources import CONTEXT, file_uri, path_of_uri
from .state import state_of

if TYPE_CHECKING:
    from mcp.server import MCPServer
    from mcp.server.context import HandlerResult
    from mcp.server.session import ServerSession

    from ..runner import ToolRunner
    from ..server import ServerOptions, WorkspaceFor
    from .lowlevel import Handler, Previous, RequestContext

log = logging.getLogger(__name__)

CONTEXT_DEBOUNCE = 0.5
LIST_DEBOUNCE = 1.0

ChangeListener = Callable[[str, Path], None]
"""(kind: "added" | "modified" | "deleted", absolute path)"""


class DiskWatcher:
    """Per-workspace service: a watchfiles thread over every root, running while anyone listens.

    When the roots change it stays, listeners and all, and the watch moves to the new roots
    (:meth:`follow_roots`): a subscription made before the change keeps getting disk events."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._listeners: list[ChangeListener] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._watching: list[Path] = []
        self.ready = threading.Event()

    def listen(self, listener: ChangeListener) -> Callable[[], None]:
        with self._lock:
            self._listeners.append(listener)
            if self._thread is None:
                self._start()

        def stop() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)
                if not self._listeners:
                    self._stop.set()
                    self._thread = None

        return stop

    def follow_roots(self, roots: list[Path]) -> bool:
        """Stays: a running watch is replaced by one over ``roots`` (the listeners are kept)."""
        with self._lock:
            if self._thread is not None and roots != self._watching:
                self._stop.set()
                self._start()
        return True

    def _start(self) -> None:
        """A watch thread over the current roots, with its own stop event (call holding the lock)."""
        self._stop = threading.Event()
        self._watching = list(self.ws.roots)
        self._thread = threading.Thread(
            target=self._run, args=(list(self._watching), self._stop), name="mcp-ide-watch", daemon=True
        )
        self._thread.start()

    def _run(self, roots: list[Path], stop: threading.Event) -> None:
        import watchfiles

        kinds = {
            watchfiles.Change.added: "added",
            watchfiles.Change.modified: "modified",
            watchfiles.Change.deleted: "deleted",
        }
        try:
            self.ready.set()
            for batch in watchfiles.watch(
                *(str(r) for r in roots), stop_event=stop, debounce=150, step=50, rust_timeout=500,
                yield_on_timeout=True, raise_interrupt=False,
            ):  # fmt: skip
                with self._lock:
                    listeners = list(self._listeners) if not stop.is_set() else []
                for change, raw in batch:
                    for listener in listeners:
                        try:
                            listener(kinds[change], Path(raw))
                        except Exception:
                            log.exception("a file-change listener failed")
        except Exception:
            log.warning("the file watcher stopped", exc_info=True)

    def close(self) -> None:
        with self._lock:
            self._stop.set()
            self._thread = None


class Subscriptions:
    """Who is subscribed to which URI, for one server."""

    def __init__(self, server: MCPServer) -> None:
        self.server = server
        self.by_conn: dict[int, set[str]] = {}
        self.listen_uris: dict[int, set[str]] = {}
        self._lock = threading.Lock()
        self._hooked: dict[int, list[Callable[[], None]]] = {}
        self._feeds: dict[tuple[int, str], Callable[[], None]] = {}
        """(workspace, context URI) -> stop of that resource's own change feed."""
        self.subscribe_to: Callable[[RequestContext, str], None] = lambda ctx, uri: None
        """Subscribe the connection of a request to a URI, as ``resources/subscribe`` does (set at
        install): a session rebuilt on another worker gets its subscriptions back through it."""

    # -- bookkeeping ------------------------------------------------------------------------
    def add(self, conn: int, uri: str, ws: Workspace | None = None) -> None:
        """Subscribe connection ``conn`` to ``uri``; with ``ws``, watch that workspace for changes."""
        with self._lock:
            self.by_conn.setdefault(conn, set()).add(uri)
        if ws is not None:
            self.watch(ws)
            self.feed(ws, {uri})

    def feed(self, ws: Workspace, uris: set[str]) -> None:
        """Start the own change feed of each context resource in ``uris`` that has one (once)."""
        for uri in uris:
            item = CONTEXT.get(uri)
            if item is None or item.watch is None:
                continue
            key = (id(ws), uri)
            with self._lock:
                if key in self._feeds:
                    continue
                self._feeds[key] = lambda: None
            stop = item.watch(ws, lambda uri=uri: self.context_changed(uri))
            with self._lock:
                self._feeds[key] = stop

    def context_changed(self, uri: str) -> None:
        """A context resource with its own feed changed: its subscribers are told (debounced)."""
        if uri in self.wanted():
            clients(self.server).broadcast(
                ResourceUpdated(uri=uri), sessions=self.sessions_for(uri), debounce=CONTEXT_DEBOUNCE
            )

    def listen(self, key: int, uris: set[str]) -> None:
        """A 2026-era ``subscriptions/listen`` stream wants ``uris`` until :meth:`unlisten`."""
        with self._lock:
            self.listen_uris[key] = uris

    def unlisten(self, key: int) -> None:
        with self._lock:
            self.listen_uris.pop(key, None)
        self._maybe_unwatch()

    def remove(self, conn: int, uri: str | None = None) -> None:
        with self._lock:
            if uri is None:
                self.by_conn.pop(conn, None)
            else:
                self.by_conn.get(conn, set()).discard(uri)
        self._maybe_unwatch()

    def wanted(self) -> set[str]:
        with self._lock:
            out: set[str] = set()
            for uris in (*self.by_conn.values(), *self.listen_uris.values()):
                out |= uris
            return out

    def sessions_for(self, uri: str) -> list[ServerSession]:
        registry = clients(self.server)
        with self._lock:
            conns = [c for c, uris in self.by_conn.items() if uri in uris]
        return [session for c in conns if (session := registry.session(c)) is not None]

    # -- watching ---------------------------------------------------------------------------
    def watch(self, ws: Workspace) -> None:
        key = id(ws)
        with self._lock:
            if key in self._hooked:
                return
            self._hooked[key] = []
        stops = [
            changes.subscribe(ws, lambda c: self.changed(ws, "deleted" if c.after is None else ("added" if c.before is None else "modified"), c.path)),
            ws.service(DiskWatcher).listen(lambda kind, path: self.changed(ws, kind, path)),
        ]  # fmt: skip
        with self._lock:
            self._hooked[key] = stops

    def _maybe_unwatch(self) -> None:
        wanted = self.wanted()
        with self._lock:
            gone = [key for key in self._feeds if key[1] not in wanted]
            stops = [self._feeds.pop(key) for key in gone]
        for stop in stops:
            stop()
        if wanted:
            return
        with self._lock:
            hooked, self._hooked = self._hooked, {}
        for stops in hooked.values():
            for stop in stops:
                stop()

    def changed(self, ws: Workspace, kind: str, path: Path) -> None:
        registry = clients(self.server)
        wanted = self.wanted()
        uri = file_uri(path, ws)
        if uri in wanted:
            registry.broadcast(ResourceUpdated(uri=uri), sessions=self.sessions_for(uri), debounce=0.05)
        for ctx_uri, item in CONTEXT.items():
            if ctx_uri not in wanted:
                continue
            if item.touched is not None:
                try:
                    item.touched(ws, path)
                except Exception:
                    log.exception("telling %s of a file change failed", ctx_uri)
            if item.watch is None:
                registry.broadcast(
                    ResourceUpdated(uri=ctx_uri),
                    sessions=self.sessions_for(ctx_uri),
                    debounce=CONTEXT_DEBOUNCE,
                )
        if kind in ("added", "deleted"):
            registry.broadcast(ResourcesListChanged(), debounce=LIST_DEBOUNCE)


def _is_watchable(uri: str) -> bool:
    if uri in CONTEXT:
        return True
    try:
        path_of_uri(uri)
    except ValueError:
        return False
    return True


def install(
    server: MCPServer, runner: ToolRunner, workspace_for: WorkspaceFor, options: ServerOptions
) -> None:
    from mcp.server.mcpserver import Context

    subs = Subscriptions(server)
    state_of(server).subscriptions = subs
    registry = clients(server)
    registry.on_close(lambda conn: subs.remove(conn))

    def ws_of(ctx: RequestContext) -> Workspace:
        return workspace_for(Context(request_context=ctx, mcp_server=server))

    def subscribe_to(ctx: RequestContext, uri: str) -> None:
        registry.note(ctx)
        connection = lowlevel.connection_of(ctx)
        if connection is not None:
            # A plugin's resource is not watched: kept so the plugin can announce updates to it.
            subs.add(id(connection), uri, ws_of(ctx) if _is_watchable(uri) else None)

    subs.subscribe_to = subscribe_to

    async def subscribe(ctx: RequestContext, params: SubscribeRequestParams) -> EmptyResult:
        subscribe_to(ctx, str(params.uri))
        return EmptyResult()

    async def unsubscribe(ctx: RequestContext, params: UnsubscribeRequestParams) -> EmptyResult:
        connection = lowlevel.connection_of(ctx)
        if connection is not None:
            subs.remove(id(connection), str(params.uri))
        return EmptyResult()

    def listen(previous: Previous) -> Handler[SubscriptionsListenRequestParams]:
        assert previous is not None, "only replaced where the SDK serves it"

        async def handler(ctx: RequestContext, params: SubscriptionsListenRequestParams) -> HandlerResult:
            registry.note(ctx)
            uris = set(params.notifications.resource_subscriptions or ()) if params.notifications else set()
            key = id(params)
            if uris:
                subs.listen(key, uris)
                if any(_is_watchable(u) for u in uris):
                    subs.watch(ws_of(ctx))
                    subs.feed(ws_of(ctx), uris)
            try:
                return await previous(ctx, params)
            finally:
                subs.unlisten(key)

        return handler

    lowlevel.replace_request(
        server, "resources/subscribe", SubscribeRequestParams, lambda previous: subscribe
    )
    lowlevel.replace_request(
        server, "resources/unsubscribe", UnsubscribeRequestParams, lambda previous: unsubscribe
    )
    if lowlevel.lowlevel(server).get_request_handler("subscriptions/listen") is not None:
        lowlevel.replace_request(server, "subscriptions/listen", SubscriptionsListenRequestParams, listen)


def subscriptions_of(server: MCPServer) -> Subscriptions | None:
    """Who is subscribed to what on ``server`` (None until this module's ``install`` ran)."""
    return state_of(server).subscriptions

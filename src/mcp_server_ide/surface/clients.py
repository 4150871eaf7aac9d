"""The connected clients, so the server can tell them something changed.

A middleware notes the session of every request. Notifications that concern everyone
(``tools/list_changed``, ``resources/list_changed``, ``resources/updated``) go out through
:meth:`Clients.broadcast`: on each 2025-era connection's standalone channel, and on the SDK's
subscription bus for 2026-07-28 ``subscriptions/listen`` streams. Callers may be in any thread
(file watchers, tool worker threads): delivery is always scheduled on the server's event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from mcp.shared.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)

from . import lowlevel
from .state import state_of

if TYPE_CHECKING:
    from mcp.server import MCPServer
    from mcp.server.context import CallNext, HandlerResult
    from mcp.server.session import ServerSession

    from ..runner import ToolRunner
    from ..server import ServerOptions, WorkspaceFor
    from .lowlevel import AnyContext, RequestContext

log = logging.getLogger(__name__)


class Clients:
    def __init__(self, server: MCPServer) -> None:
        self.server = server
        self.sessions: dict[int, ServerSession] = {}
        """id(connection) -> the latest ServerSession seen on it (2025 era, with a standalone channel)."""
        self.loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        self._recent: dict[str, float] = {}
        self._trailing: set[str] = set()  # events held for the end of their debounce window
        self._on_close: list[Callable[[int], None]] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self.relay: Callable[[ServerEvent], Awaitable[None]] | None = None
        """Also given every broadcast to everyone (scale-out: tells the other workers' clients)."""

    # -- who is connected ------------------------------------------------------------------
    def note(self, ctx: AnyContext) -> None:
        with contextlib.suppress(RuntimeError):
            self.loop = asyncio.get_running_loop()
        session = lowlevel.session_of(ctx)
        connection = lowlevel.session_connection(session)
        if (
            session is None
            or connection is None
            or lowlevel.is_modern(ctx)
            or not connection.has_standalone_channel
        ):
            return
        key = id(connection)
        with self._lock:
            first = key not in self.sessions
            self.sessions[key] = session
        if first:
            lowlevel.on_connection_close(ctx, lambda: self._closed(key))

    def _closed(self, key: int) -> None:
        with self._lock:
            self.sessions.pop(key, None)
        for callback in list(self._on_close):
            try:
                callback(key)
            except Exception:
                log.exception("a connection-close callback failed")

    def on_close(self, callback: Callable[[int], None]) -> None:
        self._on_close.append(callback)

    def connected(self) -> list[ServerSession]:
        with self._lock:
            return list(self.sessions.values())

    # -- telling them ----------------------------------------------------------------------
    def session(self, key: int) -> ServerSession | None:
        """The session of the connection ``id(connection)``, while it is connected."""
        with self._lock:
            return self.sessions.get(key)

    def post(self, make: Callable[[], Awaitable[None]]) -> None:
        """Run ``make()`` on the server's loop, from any thread."""
        loop = self.loop
        if loop is None or loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            task = loop.create_task(_quiet(make))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        else:
            asyncio.run_coroutine_threadsafe(_quiet(make), loop)

    def broadcast(
        self, event: ServerEvent, *, sessions: list[ServerSession] | None = None, debounce: float = 0.0
    ) -> None:
        """Send a change event to every 2025-era client (or the given sessions only) and publish it
        to 2026-era ``subscriptions/listen`` streams (which filter by what each one asked for)."""
        if debounce and not self._due(event, sessions, debounce):
            return
        targets = self.connected() if sessions is None else sessions
        relay = self.relay if sessions is None else None

        async def send() -> None:
            if relay is not None:
                try:
                    await relay(event)
                except Exception:
                    log.warning("could not tell the other workers of a change", exc_info=True)
            for session in targets:
                try:
                    await _send_one(session, event)
                except Exception:
                    log.debug("could not notify a client", exc_info=True)
            await lowlevel.bus(self.server).publish(event)

        self.post(send)

    def _due(self, event: ServerEvent, sessions: list[ServerSession] | None, debounce: float) -> bool:
        """Whether ``event`` may go now: at most one per ``debounce`` seconds. One that comes sooner is
        sent once at the end of that window instead, so the last change of a burst is never lost."""
        key = repr(event)
        now = time.monotonic()
        with self._lock:
            wait = self._recent.get(key, -debounce) + debounce - now
            if wait <= 0:
                self._recent[key] = now
                return True
            if key in self._trailing:
                return False
            self._trailing.add(key)

        async def later() -> None:
            await asyncio.sleep(wait)
            with self._lock:
                self._trailing.discard(key)
            self.broadcast(event, sessions=sessions, debounce=debounce)

        self.post(later)
        return False


async def _send_one(session: ServerSession, event: ServerEvent) -> None:
    connection = lowlevel.session_connection(session)
    if connection is None:
        return
    if isinstance(event, ToolsListChanged):
        await connection.send_tool_list_changed()
    elif isinstance(event, ResourcesListChanged):
        await connection.send_resource_list_changed()
    elif isinstance(event, PromptsListChanged):
        await connection.send_prompt_list_changed()
    elif isinstance(event, ResourceUpdated):
        await connection.send_resource_updated(event.uri)


async def _quiet(make: Callable[[], Awaitable[None]]) -> None:
    try:
        await make()
    except Exception:
        log.debug("background notification failed", exc_info=True)


def clients(server: MCPServer) -> Clients:
    """The connected clients of ``server`` (kept in its :class:`~.state.ServerState`)."""
    state = state_of(server)
    if state.clients is None:
        state.clients = Clients(server)
    return state.clients


def install(
    server: MCPServer, runner: ToolRunner, workspace_for: WorkspaceFor, options: ServerOptions
) -> None:
    registry = clients(server)

    async def note_client(ctx: RequestContext, call_next: CallNext) -> HandlerResult:
        registry.note(ctx)
        return await call_next(ctx)

    server.middleware.append(note_client)
    state_of(server).transparent.append(note_client)  # the lane answers only on a connection already noted

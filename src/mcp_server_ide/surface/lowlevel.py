"""The few places the surface reaches below ``MCPServer``'s public API, kept in one module.

``MCPServer`` (mcp 2.3.0) has no public way to replace a protocol handler (paged
``resources/list``, ``resources/subscribe``, ``logging/setLevel``, one completion handler for
every prompt and template), to advertise ``listChanged`` on the 2025 era, to reach the
connection a request came on, to serve its tools from a table of ours (built lazily), or to run
on streams of our own over stdio descriptors claimed as its ``stdio_server()`` claims them.
Everything that needs one of those goes through the helpers here, so an SDK upgrade is a change
to this file alone (``tests/test_layers.py`` keeps the reaches here).

No ``install`` here: :func:`~mcp_server_ide.extensions.apply_all` only imports this module.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

log = logging.getLogger(__name__)

Handler = Callable[[Any, Any], Awaitable[Any]]


def lowlevel(server: Any) -> Server[Any]:
    """The low-level ``Server`` inside an ``MCPServer``."""
    return server._lowlevel_server


def bus(server: Any) -> Any:
    """The server's ``SubscriptionBus`` (2026-07-28 ``subscriptions/listen`` fan-out)."""
    return server._subscriptions


def replace_request(
    server: Any, method: str, params_type: type, make: Callable[[Handler | None], Handler]
) -> None:
    """Install ``make(previous)`` as the handler of ``method``; ``previous`` is the SDK's own (or None)."""
    low = lowlevel(server)
    entry = low.get_request_handler(method)
    previous = entry.handler if entry is not None else None
    low.add_request_handler(method, params_type, make(previous))


def add_notification(server: Any, method: str, params_type: type, handler: Handler) -> None:
    """Add a notification handler, keeping any handler already registered for ``method``."""
    low = lowlevel(server)
    entry = low.get_notification_handler(method)
    previous = entry.handler if entry is not None else None

    async def both(ctx: Any, params: Any) -> None:
        if previous is not None:
            await previous(ctx, params)
        await handler(ctx, params)

    low.add_notification_handler(method, params_type, both)


def advertise_list_changed(server: Any) -> None:
    """Advertise ``listChanged`` for tools, prompts and resources on the 2025 (handshake) era.

    The 2026 era derives these flags from ``subscriptions/listen`` being served; the
    handshake era takes them from ``NotificationOptions``, which ``MCPServer`` never passes.
    """
    low = lowlevel(server)
    original = low.create_initialization_options
    if getattr(original, "_ide_list_changed", False):
        return

    @functools.wraps(original)
    def create(notification_options: NotificationOptions | None = None, *args: Any, **kwargs: Any) -> Any:
        options = notification_options or NotificationOptions(
            prompts_changed=True, resources_changed=True, tools_changed=True
        )
        return original(options, *args, **kwargs)

    create._ide_list_changed = True  # type: ignore[attr-defined]
    low.create_initialization_options = create  # type: ignore[method-assign]


def request_context(ctx: Any) -> Any:
    """The low-level ``ServerRequestContext`` from either an ``MCPServer`` ``Context`` or itself."""
    inner = getattr(ctx, "_request_context", None)
    return inner if inner is not None else ctx


def session_of(ctx: Any) -> Any:
    return getattr(request_context(ctx), "session", None)


def connection_of(ctx: Any) -> Any:
    """The ``Connection`` a request arrived on (its standalone channel, session id, state)."""
    return session_connection(session_of(ctx))


def session_connection(session: Any) -> Any:
    """The ``Connection`` under a ``ServerSession`` (None for anything else)."""
    return getattr(session, "_connection", None)


def protocol_version(ctx: Any) -> str | None:
    return getattr(request_context(ctx), "protocol_version", None)


def is_modern(ctx: Any) -> bool:
    """True on the 2026-07-28 era: no server-to-client requests, input comes as ``InputRequiredResult``."""
    return protocol_version(ctx) in MODERN_PROTOCOL_VERSIONS


def session_key(ctx: Any) -> str | None:
    """A stable key for the client session a request belongs to, or None when there is none.

    Streamable HTTP sessions have an id; a stdio (or in-memory) handshake connection is one
    session for its lifetime. Stateless HTTP and the 2026-07-28 era have no session at all.
    """
    connection = connection_of(ctx)
    if connection is None:
        return None
    sid = getattr(connection, "session_id", None)
    if sid:
        return f"http:{sid}"
    if is_modern(ctx) or not getattr(connection, "has_standalone_channel", False):
        return None
    return connection_key(connection)


def connection_key(connection: Any) -> str:
    """The session key of a 2025-era connection without a session id (stdio, in-memory)."""
    return f"conn:{id(connection)}"


def on_connection_close(ctx: Any, callback: Callable[[], Any]) -> bool:
    """Run ``callback`` when the request's connection closes. False when the connection has no teardown."""
    connection = connection_of(ctx)
    stack = getattr(connection, "exit_stack", None)
    if stack is None:
        return False
    stack.callback(callback)
    return True


def connection_state(ctx: Any) -> dict[str, Any] | None:
    """Per-connection scratch state (persists across requests on one handshake connection)."""
    connection = connection_of(ctx)
    return getattr(connection, "state", None)


def per_session_event_stores(server: Any, make_store: Callable[[], Any]) -> None:
    """Give each new Streamable HTTP session an event store of its own (the SDK shares one store
    among all sessions, whose stream names collide: see :mod:`..doors.eventstore`)."""
    manager = server.session_manager
    admit = manager._admit_session

    def admit_with_store(requestor: Any) -> Any:
        transport = admit(requestor)
        if transport is not None:
            transport._event_store = make_store()
        return transport

    manager._admit_session = admit_with_store


def sdk_middleware_kind(middleware: Any) -> str | None:
    """Which of the SDK's own request middlewares this is: ``"tracing"`` (OpenTelemetry spans),
    ``"request-state"`` (2026-era ``requestState`` sealing), or None for any other."""
    from mcp.server._otel import OpenTelemetryMiddleware
    from mcp.server.request_state import RequestStateBoundary

    if isinstance(middleware, OpenTelemetryMiddleware):
        return "tracing"
    if isinstance(middleware, RequestStateBoundary):
        return "request-state"
    return None


def use_tool_table(server: Any, tools: Any) -> None:
    """Serve ``tools`` (a mapping of name to SDK ``Tool``, e.g. ``runner.LazyTools``) as the server's tools."""
    server._tool_manager._tools = tools


def claim_stdio(fd: int) -> tuple[Any, Callable[[], None] | None]:
    """Claim stdin (0) or stdout (1) exactly as the SDK's ``stdio_server()`` does.

    Gives the binary file the protocol is served on and a ``release`` to call when done (None when
    nothing was diverted); meanwhile fd 0 reads ``/dev/null`` and fd 1 writes to stderr, so a stray
    ``print`` or child process cannot write into the protocol stream.
    """
    import sys

    from mcp.server import stdio as sdk_stdio

    if fd == 0:
        return sdk_stdio._claim_fd(0, sys.stdin, "rb", sdk_stdio._open_stdin_diversion)
    if fd == 1:
        return sdk_stdio._claim_fd(1, sys.stdout, "wb", sdk_stdio._open_stdout_diversion)
    raise ValueError(f"only stdin (0) and stdout (1) can be claimed, not fd {fd}")


async def serve_streams(server: Any, read_stream: Any, write_stream: Any) -> None:
    """Run ``server`` (an ``MCPServer``) on a pair of SDK message streams until they close."""
    low = lowlevel(server)
    await low.run(read_stream, write_stream, low.create_initialization_options())

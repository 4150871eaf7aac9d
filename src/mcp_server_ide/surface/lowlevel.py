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
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar

import anyio
from mcp.server.connection import Connection
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.mcpserver import Context
from mcp.server.session import ServerSession
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

from .state import state_of

if TYPE_CHECKING:
    from mcp.server import MCPServer, ServerRequestContext
    from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
    from mcp.server.context import HandlerResult
    from mcp.server.models import InitializationOptions
    from mcp.server.streamable_http import EventStore, StreamableHTTPServerTransport
    from mcp.server.subscriptions import SubscriptionBus
    from mcp.shared._stream_protocols import ReadStream, WriteStream
    from mcp.shared.message import SessionMessage

    from ..runner import LazyTools

    RequestContext = ServerRequestContext[Any, Any]
    """What a low-level handler gets. The SDK's handlers are generic in the server's lifespan and
    transport request types; ours serve any server, so both are ``Any`` (as the SDK advises for
    reusable middleware)."""
    AnyContext = Context[Any, Any] | ServerRequestContext[Any, Any]
    """A tool's ``Context`` or a low-level handler's context: the helpers below take either."""
    MessageReader = ReadStream[SessionMessage | Exception]
    MessageWriter = WriteStream[SessionMessage]
    """The SDK's message streams a server is run on (as its ``stdio_server()`` gives them)."""

log = logging.getLogger(__name__)

P = TypeVar("P", bound=BaseModel)
R = TypeVar("R", bound=BaseModel)

Handler = Callable[["RequestContext", P], Awaitable["HandlerResult"]]
"""A request handler: ``(ctx, params) -> result``, ``params`` validated as the method's model."""
Previous = Handler[Any] | None
"""The handler being replaced (None: there was none). The SDK stores handlers with their params type
erased, so it takes ``Any`` params; it is only ever called with the params of its own method."""
NotificationHandler = Callable[["RequestContext", P], Awaitable[None]]


def lowlevel(server: MCPServer) -> Server[Any]:
    """The low-level ``Server`` inside an ``MCPServer`` (its lifespan type is the server's: any)."""
    return server._lowlevel_server


def bus(server: MCPServer) -> SubscriptionBus:
    """The server's ``SubscriptionBus`` (2026-07-28 ``subscriptions/listen`` fan-out)."""
    return server._subscriptions


def replace_request(
    server: MCPServer,
    method: str,
    params_type: type[P],
    make: Callable[[Previous], Handler[P]],
) -> None:
    """Install ``make(previous)`` as the handler of ``method``; ``previous`` is the SDK's own (or None).
    :func:`expect` narrows what ``previous`` returns to its method's result model."""
    low = lowlevel(server)
    entry = low.get_request_handler(method)
    previous = entry.handler if entry is not None else None
    low.add_request_handler(method, params_type, make(previous))


def expect(result_type: type[R], result: HandlerResult) -> R:
    """The result of a previous handler as the model its method answers with (the SDK's handlers
    return that model; a plain dict is validated into it)."""
    if isinstance(result, result_type):
        return result
    return result_type.model_validate(result if isinstance(result, dict) else dict(result or {}))


def add_notification(
    server: MCPServer, method: str, params_type: type[P], handler: NotificationHandler[P]
) -> None:
    """Add a notification handler, keeping any handler already registered for ``method``."""
    low = lowlevel(server)
    entry = low.get_notification_handler(method)
    previous = entry.handler if entry is not None else None

    async def both(ctx: RequestContext, params: P) -> None:
        if previous is not None:
            await previous(ctx, params)
        await handler(ctx, params)

    low.add_notification_handler(method, params_type, both)


def advertise_list_changed(server: MCPServer) -> None:
    """Advertise ``listChanged`` for tools, prompts and resources on the 2025 (handshake) era.

    The 2026 era derives these flags from ``subscriptions/listen`` being served; the
    handshake era takes them from ``NotificationOptions``, which ``MCPServer`` never passes.
    """
    state = state_of(server)
    if state.list_changed_advertised:
        return
    state.list_changed_advertised = True
    low = lowlevel(server)
    original = low.create_initialization_options

    @functools.wraps(original)
    def create(
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        options = notification_options or NotificationOptions(
            prompts_changed=True, resources_changed=True, tools_changed=True
        )
        return original(options, experimental_capabilities, extensions)

    low.create_initialization_options = create  # on the instance: the SDK has no switch (see above)


def request_context(ctx: AnyContext) -> ServerRequestContext[Any, Any] | None:
    """The low-level ``ServerRequestContext`` of an ``MCPServer`` ``Context``, or ``ctx`` itself."""
    return ctx._request_context if isinstance(ctx, Context) else ctx


def session_of(ctx: AnyContext) -> ServerSession | None:
    inner = request_context(ctx)
    return inner.session if inner is not None else None


def connection_of(ctx: AnyContext) -> Connection | None:
    """The ``Connection`` a request arrived on (its standalone channel, session id, state)."""
    return session_connection(session_of(ctx))


def session_connection(session: ServerSession | None) -> Connection | None:
    """The ``Connection`` under a ``ServerSession`` (None for anything else)."""
    found = getattr(session, "_connection", None)
    return found if isinstance(found, Connection) else None


def client_name(ctx: AnyContext) -> str | None:
    """The ``clientInfo.name`` the client gave (at ``initialize``, or in a 2026-era request's envelope)."""
    connection = connection_of(ctx)
    params = connection.client_params if connection is not None else None
    return params.client_info.name if params is not None else None


def protocol_version(ctx: AnyContext) -> str | None:
    inner = request_context(ctx)
    return inner.protocol_version if inner is not None else None


def is_modern(ctx: AnyContext) -> bool:
    """True on the 2026-07-28 era: no server-to-client requests, input comes as ``InputRequiredResult``."""
    return protocol_version(ctx) in MODERN_PROTOCOL_VERSIONS


def session_key(ctx: AnyContext) -> str | None:
    """A stable key for the client session a request belongs to, or None when there is none.

    Streamable HTTP sessions have an id; a stdio (or in-memory) handshake connection is one
    session for its lifetime. Stateless HTTP and the 2026-07-28 era have no session at all.
    """
    connection = connection_of(ctx)
    if connection is None:
        return None
    sid = connection.session_id
    if sid:
        return f"http:{sid}"
    if is_modern(ctx) or not connection.has_standalone_channel:
        return None
    return connection_key(connection)


def connection_key(connection: Connection) -> str:
    """The session key of a 2025-era connection without a session id (stdio, in-memory)."""
    return f"conn:{id(connection)}"


def on_connection_close(ctx: AnyContext, callback: Callable[[], object]) -> bool:
    """Run ``callback`` when the request's connection closes. False when the connection has no teardown."""
    connection = connection_of(ctx)
    if connection is None:
        return False
    connection.exit_stack.callback(callback)
    return True


def connection_state(ctx: AnyContext) -> dict[str, Any] | None:
    """Per-connection scratch state (persists across requests on one handshake connection); the
    SDK's ``Connection.state`` is a ``dict[str, Any]``."""
    connection = connection_of(ctx)
    return connection.state if connection is not None else None


def per_session_event_stores(server: MCPServer, make_store: Callable[[], EventStore]) -> None:
    """Give each new Streamable HTTP session an event store of its own (the SDK shares one store
    among all sessions, whose stream names collide: see :mod:`..doors.eventstore`)."""
    manager = server.session_manager
    admit = manager._admit_session

    def admit_with_store(requestor: AuthorizationContext | None) -> StreamableHTTPServerTransport | None:
        transport = admit(requestor)
        if transport is not None:
            transport._event_store = make_store()
        return transport

    manager._admit_session = admit_with_store  # the SDK has no per-session store: wrap its admission


def sdk_middleware_kind(middleware: object) -> str | None:
    """Which of the SDK's own request middlewares this is: ``"tracing"`` (OpenTelemetry spans),
    ``"request-state"`` (2026-era ``requestState`` sealing), or None for any other."""
    from mcp.server._otel import OpenTelemetryMiddleware
    from mcp.server.request_state import RequestStateBoundary

    if isinstance(middleware, OpenTelemetryMiddleware):
        return "tracing"
    if isinstance(middleware, RequestStateBoundary):
        return "request-state"
    return None


def use_tool_table(server: MCPServer, tools: LazyTools) -> None:
    """Serve ``tools`` (``runner.LazyTools``: a mapping of name to SDK ``Tool``) as the server's tools."""
    # The SDK types its table as a dict; a MutableMapping is all its ToolManager uses.
    server._tool_manager._tools = tools  # pyright: ignore[reportAttributeAccessIssue]


def claim_stdio(fd: int) -> tuple[BinaryIO, Callable[[], None] | None]:
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


async def serve_streams(
    server: MCPServer,
    read_stream: MessageReader,
    write_stream: MessageWriter,
) -> None:
    """Run ``server`` (an ``MCPServer``) on a pair of SDK message streams until they close."""
    low = lowlevel(server)
    await low.run(read_stream, write_stream, low.create_initialization_options())


def open_sessions(server: MCPServer) -> int:
    """How many Streamable HTTP sessions are open now (0 before the session manager has run)."""
    try:
        return len(server.session_manager._server_instances)
    except (AttributeError, RuntimeError):
        return 0


# -- Streamable HTTP sessions any worker can serve (hosted scale-out: ``hosted/scaleout.py``) -----


def session_event_stores_by_id(server: MCPServer, make_store: Callable[[str], EventStore]) -> None:
    """Like :func:`per_session_event_stores`, with the session id given to ``make_store`` (a shared
    store keys each session's events by it)."""
    manager = server.session_manager
    admit = manager._admit_session

    def admit_with_store(requestor: AuthorizationContext | None) -> StreamableHTTPServerTransport | None:
        transport = admit(requestor)
        if transport is not None and transport.mcp_session_id is not None:
            transport._event_store = make_store(transport.mcp_session_id)
        return transport

    manager._admit_session = admit_with_store


SessionRestorer = Callable[[str, "AuthorizationContext | None"], Awaitable[bool]]
"""``(session id, requestor) -> restored?``: called for a request naming a session this process does
not hold; it may call :func:`restore_session` (True) or leave the SDK to answer 404 (False)."""
SessionHook = Callable[[str, Any], Awaitable[None]]
"""``(session id, HTTP method)``: called after the SDK served a request of a session."""


def serve_unknown_sessions(server: MCPServer, restore: SessionRestorer, after: SessionHook) -> None:
    """Let ``restore`` rebuild a session the SDK's manager does not hold (it keeps sessions in process
    memory: one made by another worker would be 404), and call ``after`` once each request is served."""
    from mcp.server.streamable_http import MCP_SESSION_ID_HEADER

    manager = server.session_manager
    handle = manager._handle_stateful_request
    header = MCP_SESSION_ID_HEADER.encode()

    async def handle_any_worker(scope: Any, receive: Any, send: Any) -> None:
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, authorization_context

        sid = next((v.decode("latin-1") for k, v in scope.get("headers", []) if k == header), None)
        if sid is not None and sid not in manager._server_instances:
            user = scope.get("user")
            requestor = authorization_context(user) if isinstance(user, AuthenticatedUser) else None
            try:
                await restore(sid, requestor)
            except Exception:
                log.warning("cannot look up session %s in the shared store", sid[:64], exc_info=True)
                await _error_response("Session store unavailable: try again", 503)(scope, receive, send)
                return
        await handle(scope, receive, send)
        if sid is not None:
            try:
                await after(sid, scope.get("method"))
            except Exception:
                log.warning("cannot update session %s in the shared store", sid[:64], exc_info=True)

    manager._handle_stateful_request = handle_any_worker


def _error_response(message: str, status: int) -> Any:
    from mcp.server.streamable_http_manager import _error_response as sdk_error_response

    return sdk_error_response(message, status)


def holds_session(server: MCPServer, session_id: str) -> bool:
    return session_id in server.session_manager._server_instances


async def restore_session(
    server: MCPServer,
    session_id: str,
    requestor: AuthorizationContext | None,
    protocol_version: str,
    client_params: dict[str, Any],
    event_store: EventStore,
) -> None:
    """Rebuild, in this process, a Streamable HTTP session another process opened: a transport with
    the same id and the same settings the manager gives its own, and a server task whose connection
    starts where that session's handshake left it (its protocol version, the client's ``initialize``
    params, initialized). The manager then serves the request as it would one of its own sessions."""
    from mcp.server.runner import serve_connection
    from mcp.server.streamable_http import StreamableHTTPServerTransport
    from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
    from mcp_types import InitializeRequestParams

    manager = server.session_manager
    if session_id in manager._server_instances:
        return
    params = InitializeRequestParams.model_validate(client_params, by_name=False)
    transport = StreamableHTTPServerTransport(
        mcp_session_id=session_id,
        is_json_response_enabled=manager.json_response,
        event_store=event_store,
        security_settings=manager.security_settings,
        retry_interval=manager.retry_interval,
        idle_timeout=manager.session_idle_timeout,
    )

    async def run_server(*, task_status: Any) -> None:
        async with transport.connect() as (read_stream, write_stream):
            task_status.started()
            try:
                idle_scope = transport.idle_scope or anyio.CancelScope()
                with idle_scope:
                    dispatcher: JSONRPCDispatcher[Any] = JSONRPCDispatcher(
                        read_stream, write_stream, inline_methods=frozenset({"initialize"})
                    )
                    connection = Connection.for_loop(dispatcher, session_id=session_id)
                    connection.client_params = params
                    connection.protocol_version = protocol_version
                    connection.initialized.set()
                    await serve_connection(
                        lowlevel(server),
                        dispatcher,
                        connection=connection,
                        lifespan_state=manager._lifespan_state,
                    )
            except Exception:
                log.exception("restored session %s crashed", session_id[:64])
            finally:
                await manager._discard_session(session_id, transport)

    task_group = manager._task_group
    if task_group is None:
        raise RuntimeError("the session manager is not running")
    await task_group.start(run_server)  # connected: only now may a request reach the transport
    if transport.is_terminated:
        return
    if requestor is not None:
        manager._session_owners[session_id] = requestor
    manager._server_instances[session_id] = transport


async def end_session(server: MCPServer, session_id: str) -> None:
    """Terminate this process's copy of a session (another process served its DELETE)."""
    manager = server.session_manager
    transport = manager._server_instances.get(session_id)
    if transport is not None:
        await manager._discard_session(session_id, transport)


async def deliver_to_stream(
    server: MCPServer, session_id: str, stream_id: str, data: bytes, event_id: str
) -> bool:
    """Hand an event another process stored for a session to the SSE stream this process holds for
    it (its standalone GET stream, or a resumed request stream); False when this process holds none."""
    from mcp.server.streamable_http import EventMessage
    from mcp_types import jsonrpc_message_adapter

    transport = server.session_manager._server_instances.get(session_id)
    streams = transport._request_streams.get(stream_id) if transport is not None else None
    if streams is None:
        return False
    message = jsonrpc_message_adapter.validate_json(data)
    try:
        await streams[0].send(EventMessage(message, event_id))
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        return False
    return True

"""The HTTP doors in one Starlette app: Streamable HTTP MCP at ``/mcp`` (stateful or
``--stateless``), legacy SSE at ``/sse``, the seed's REST interface at ``/mcp/{name}``, and the
generated reference at ``GET /mcp/tools``. Every request passes :mod:`.guard` first, then the
per-caller limits of :mod:`.ratelimit` when they are set.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.routing import BaseRoute
from starlette.types import ASGIApp

from . import rest
from .deadlines import ConnectionLimits, bounded_protocol
from .guard import GuardMiddleware, GuardPolicy
from .ratelimit import RateLimitMiddleware, RateSettings

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from ..runner import ToolRunner
    from ..workspaces import Workspaces

log = logging.getLogger(__name__)

PORT_RANGE = range(9960, 9991)


@dataclass
class HttpSettings:
    host: str = "127.0.0.1"
    port: int | None = None
    stateless: bool = False
    token: str | None = None
    allowed_hosts: list[str] = field(default_factory=list)
    allowed_origins: list[str] = field(default_factory=list)
    limits: ConnectionLimits = field(default_factory=ConnectionLimits)
    legacy_sse: bool = True
    """Serve the legacy SSE transport (``/sse``) beside Streamable HTTP when stateful; hosted mode does
    not (its sessions are not bound to the caller the way Streamable HTTP's are)."""
    bearer_auth: bool = False
    """Bearer tokens are checked in front of these doors (hosted mode) rather than by the guard's one token."""
    rate: RateSettings = field(default_factory=RateSettings)
    """Per-caller rate and concurrency limits (:mod:`.ratelimit`; off by default)."""


def pick_port(host: str, wanted: int | None) -> tuple[socket.socket, int]:
    """Bind a listening socket: the wanted port (0 = any free one), else the first free in 9960-9990."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    candidates = [wanted] if wanted is not None else list(PORT_RANGE)
    last_error: OSError | None = None
    for port in candidates:
        # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP, and
        # without it every answer after the first on a kept-alive connection waits ~40 ms (Nagle
        # against the client's delayed ACK).
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            sock.close()
            last_error = exc
            continue
        sock.listen(128)
        sock.set_inheritable(True)
        return sock, sock.getsockname()[1]
    where = f"port {wanted}" if wanted is not None else "any port in 9960-9990"
    raise SystemExit(f"mcp-server-ide: cannot listen on {host} {where}: {last_error}")


RECONNECT_AFTER_MS = 1000


def build_app(
    server: MCPServer, runner: ToolRunner, workspaces: Workspaces, settings: HttpSettings, port: int
) -> GuardMiddleware:
    policy = GuardPolicy.for_bind(
        settings.host,
        port,
        token=settings.token,
        extra_hosts=settings.allowed_hosts,
        extra_origins=settings.allowed_origins,
        body_timeout=settings.limits.body_timeout,
    )
    security = TransportSecuritySettings(
        # The guard checks Host and Origin for every door with one rule (scheme and host
        # compared case-insensitively); the SDK's own check, case-sensitive, would refuse what the
        # REST doors accept.
        enable_dns_rebinding_protection=False,
        allowed_hosts=sorted(policy.allowed_hosts),
        allowed_origins=sorted(policy.allowed_origins),
    )
    mcp_app = server.streamable_http_app(
        stateless_http=settings.stateless,
        transport_security=security,
        host=settings.host,
        retry_interval=RECONNECT_AFTER_MS,  # the priming event tells a 2025-11-25 client when to come back
    )
    if not settings.stateless:  # resumable streams: each session replays what a reconnect missed
        from ..surface.lowlevel import per_session_event_stores
        from .eventstore import SessionEventStore

        per_session_event_stores(server, SessionEventStore)
    routes: list[BaseRoute] = []
    routes.extend(_reference_routes(runner, settings))
    routes.extend(rest.routes(runner, workspaces.for_context))
    routes.extend(mcp_app.routes)
    if not settings.stateless and settings.legacy_sse:
        try:
            sse_app = server.sse_app(transport_security=security, host=settings.host)
            routes.extend(sse_app.routes)
        except Exception:  # the SDK may drop legacy SSE; Streamable HTTP still serves
            log.info("legacy SSE transport not available", exc_info=True)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with server.session_manager.run():
            try:
                yield
            finally:
                workspaces.close()
                from ..engines.processes.shutdown import kill_all

                kill_all()  # uvicorn re-raises SIGTERM after shutdown: atexit would not run

    app: ASGIApp = Starlette(routes=routes, lifespan=lifespan)
    if settings.rate.active:
        app = RateLimitMiddleware(app, settings.rate)
    return GuardMiddleware(app, policy)


def _reference_routes(runner: ToolRunner, settings: HttpSettings) -> list[BaseRoute]:
    try:
        from . import reference
    except ImportError:
        return []
    return list(reference.routes(runner, settings))


async def serve(
    server: MCPServer, runner: ToolRunner, workspaces: Workspaces, settings: HttpSettings
) -> None:
    import uvicorn

    sock, port = pick_port(settings.host, settings.port)
    app = build_app(server, runner, workspaces, settings, port)
    shown = f"[{settings.host}]" if ":" in settings.host else settings.host
    print(
        f"mcp-server-ide: listening on http://{shown}:{port}/mcp (REST at POST /mcp/<tool>, reference at /mcp/tools)",
        file=sys.stderr,
        flush=True,
    )
    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=5,
        timeout_keep_alive=settings.limits.keep_alive,  # past the clients' pool expiry (.deadlines)
        http=bounded_protocol(settings.limits),  # read deadlines and a connection cap (.deadlines)
    )
    await uvicorn.Server(config).serve(sockets=[sock])

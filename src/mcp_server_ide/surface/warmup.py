"""Warm-up after the handshake: the code engine, grammars and main language server, in the background.

When the client says it is initialized (``notifications/initialized``), or at its first request
that is not ``initialize`` (a client that never says it, a 2026-era one), once a process, the local
workspace is warmed by :mod:`..engines.warmup`, so the session's first outline and first
cross-file query do not pay for imports and a server's start. A ``--workspace`` folder is warmed at
once; without one, after the client's roots were adopted (a language server is never started on
the current folder a workspace falls back to: it may be a home folder). Hosted mode and in-process
servers (no local workspaces) are not warmed. ``MCP_IDE_WARM=0`` turns it off.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

from mcp_types import ClientCapabilities, NotificationParams

from . import lowlevel
from .state import state_of

if TYPE_CHECKING:
    from mcp.server import MCPServer
    from mcp.server.context import CallNext, HandlerResult

    from ..runner import ToolRunner
    from ..server import ServerOptions, WorkspaceFor
    from .lowlevel import RequestContext

log = logging.getLogger(__name__)

ENV_SWITCH = "MCP_IDE_WARM"


def enabled_by_environment() -> bool:
    return os.environ.get(ENV_SWITCH, "1").strip().lower() not in ("0", "false", "no", "off")


def install(
    server: MCPServer, runner: ToolRunner, workspace_for: WorkspaceFor, options: ServerOptions
) -> None:
    workspaces = options.workspaces
    if workspaces is None or not enabled_by_environment():
        return
    started = False

    state = state_of(server)

    def begin(caps: ClientCapabilities | None, modern: bool) -> None:
        nonlocal started
        if started:
            return
        started = True
        state.start_warmup = None
        from ..engines import warmup

        if workspaces.explicit:
            warmup.start(workspaces.for_context)
            return
        if caps is None or caps.roots is None or modern:
            warmup.start(workspaces.for_context, language_server=False)
            return
        fallback = list(workspaces.workspace.roots)
        warmup.start(workspaces.for_context, settled=lambda: list(workspaces.workspace.roots) != fallback)

    def begin_at(ctx: RequestContext) -> None:
        try:
            begin(ctx.session.client_capabilities, lowlevel.is_modern(ctx))
        except Exception:  # a warm-up never fails a request
            log.debug("the warm-up could not start", exc_info=True)

    async def on_initialized(ctx: RequestContext, params: NotificationParams) -> None:
        begin_at(ctx)

    async def on_first_request(ctx: RequestContext, call_next: CallNext) -> HandlerResult:
        if not started and ctx.request_id is not None and ctx.method != "initialize":
            begin_at(ctx)
        return await call_next(ctx)

    lowlevel.add_notification(server, "notifications/initialized", NotificationParams, on_initialized)
    server.middleware.append(on_first_request)
    state.transparent.append(on_first_request)
    state.start_warmup = begin  # the direct lane's calls pass no middleware: it starts it itself

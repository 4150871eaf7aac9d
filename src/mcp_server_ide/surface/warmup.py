"""Warm-up after the handshake: the code engine, grammars and main language server, in the background.

When the client says it is initialized (``notifications/initialized``, once a process), the local
workspace is warmed by :mod:`..engines.warmup`, so the session's first outline and first
cross-file query do not pay for imports and a server's start. A ``--workspace`` folder is warmed at
once; without one, after the client's roots were adopted (a language server is never started on
the current folder a workspace falls back to: it may be a home folder). Hosted mode and in-process
servers (no local workspaces) are not warmed. ``MCP_IDE_WARM=0`` turns it off.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from mcp_types import NotificationParams

from . import lowlevel

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from ..runner import ToolRunner
    from ..server import ServerOptions, WorkspaceFor
    from .lowlevel import RequestContext

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

    async def on_initialized(ctx: RequestContext, params: NotificationParams) -> None:
        nonlocal started
        if started:
            return
        started = True
        from ..engines import warmup

        if workspaces.explicit:
            warmup.start(workspaces.for_context)
            return
        caps = ctx.session.client_capabilities
        if caps is None or caps.roots is None or lowlevel.is_modern(ctx):
            warmup.start(workspaces.for_context, language_server=False)
            return
        fallback = list(workspaces.workspace.roots)
        warmup.start(workspaces.for_context, settled=lambda: list(workspaces.workspace.roots) != fallback)

    lowlevel.add_notification(server, "notifications/initialized", NotificationParams, on_initialized)

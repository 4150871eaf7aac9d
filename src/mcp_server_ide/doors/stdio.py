"""MCP over stdio: what VS Code's ``.vscode/mcp.json`` and most clients launch.

When the client closes stdin (or the process is told to stop) every workspace service is
closed, so no job, terminal or language server outlives the session.
"""

from __future__ import annotations

import signal
from typing import TYPE_CHECKING

import anyio

from . import directlane, faststdio

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from ..runner import ToolRunner
    from ..workspaces import LocalWorkspaces
    from .handshake import Handshake


async def serve(
    server: MCPServer,
    workspaces: LocalWorkspaces,
    runner: ToolRunner | None = None,
    handshake: Handshake | None = None,
) -> None:
    """Serve MCP on stdin/stdout until the client closes stdin or a SIGTERM/SIGHUP arrives. With
    ``runner``, the direct lane answers calls of small read-only tools (:mod:`.directlane`); a
    ``handshake`` started before the SDK loaded (:mod:`.handshake`) holds the first bytes read."""
    lane = None
    if runner is not None and directlane.enabled_by_environment():
        lane = directlane.DirectLane(server, runner, workspaces)

    async def stop_on_signal(scope: anyio.CancelScope) -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP) as signals:
            async for _ in signals:
                scope.cancel()
                return

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(stop_on_signal, tg.cancel_scope)
            await faststdio.run(
                server, lane, handshake
            )  # the SDK's stdio_server() on asyncio pipes (no thread hops)
            tg.cancel_scope.cancel()
    finally:
        workspaces.close()

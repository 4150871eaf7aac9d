"""Roots: serve the folders the client announces, and follow ``notifications/roots/list_changed``.

When the server was started without ``--workspace``, the workspace is the client's roots: the
first root is where relative paths resolve; the others are reachable by their folder name
(``other-root/src/x.py``), as the sandbox does for multi-root workspaces. The roots are asked
for (``roots/list``) once the client says it is initialized, and again whenever it says they
changed. With ``--workspace`` the named folder stays the workspace whatever the client says.
A change keeps the work of the roots still there (jobs, terminals, resource subscriptions, and
the primary root's editor model, language servers, repository and session reads) and stops what
belonged to a root that left (``Workspace.set_roots``).

Roots are a 2025-era feature (the server asks the client); the 2026-07-28 protocol deprecates
them and forbids server-to-client requests outside a call, so there the workspace stays as
started (``--workspace`` or the current folder).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

import anyio
from mcp.shared.subscriptions import ResourcesListChanged, ToolsListChanged
from mcp_types import ListRootsRequest, ListRootsResult, NotificationParams

from . import lowlevel
from .clients import clients
from .state import state_of

if TYPE_CHECKING:
    from mcp.server import MCPServer
    from mcp.server.session import ServerSession

    from ..runner import ToolRunner
    from ..server import ServerOptions, WorkspaceFor
    from .lowlevel import RequestContext

log = logging.getLogger(__name__)


def paths_of(result: ListRootsResult) -> list[Path]:
    out: list[Path] = []
    for root in result.roots:
        parsed = urlparse(str(root.uri))
        if parsed.scheme != "file":
            continue
        path = Path(unquote(parsed.path))
        if path.is_dir() and path not in out:
            out.append(path)
    return out


def install(
    server: MCPServer, runner: ToolRunner, workspace_for: WorkspaceFor, options: ServerOptions
) -> None:
    from mcp.server.mcpserver import Context

    workspaces = options.workspaces
    registry = clients(server)
    tasks: set[asyncio.Task[None]] = set()

    async def refresh(ctx: RequestContext, session: ServerSession) -> None:
        caps = session.client_capabilities
        if caps is None or caps.roots is None:
            return
        try:
            result = await session.send_request(
                ListRootsRequest(), ListRootsResult, request_read_timeout_seconds=30
            )
        except Exception:
            log.info("the client did not answer roots/list", exc_info=True)
            return
        roots = paths_of(result)
        log.info("client roots: %s", [str(r) for r in roots])
        if workspaces is None or not roots:
            return
        # On a thread: a root that left may take its jobs and terminals with it, and they take a
        # moment to stop.
        if await anyio.to_thread.run_sync(workspaces.adopt_roots, roots):
            registry.broadcast(ToolsListChanged())
            registry.broadcast(ResourcesListChanged())
            recheck = state_of(server).recheck_tools
            if recheck is not None:
                try:
                    await recheck(workspace_for(Context(request_context=ctx, mcp_server=server)))
                except Exception:
                    log.debug("feature re-check failed", exc_info=True)

    def spawn(ctx: RequestContext) -> None:
        # A notification handler must not wait for the client's answer inline (the read loop
        # may be the one that delivers it), so the request runs as its own task.
        if lowlevel.is_modern(ctx):
            return
        registry.note(ctx)
        task = asyncio.get_running_loop().create_task(refresh(ctx, ctx.session))
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    async def on_initialized(ctx: RequestContext, params: NotificationParams) -> None:
        spawn(ctx)

    async def on_roots_changed(ctx: RequestContext, params: NotificationParams) -> None:
        spawn(ctx)

    lowlevel.add_notification(server, "notifications/initialized", NotificationParams, on_initialized)
    lowlevel.add_notification(
        server, "notifications/roots/list_changed", NotificationParams, on_roots_changed
    )

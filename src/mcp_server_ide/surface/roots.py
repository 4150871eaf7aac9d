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
from typing import Any
from urllib.parse import unquote, urlparse

import anyio
from mcp.shared.subscriptions import ResourcesListChanged, ToolsListChanged
from mcp_types import ListRootsRequest, ListRootsResult, NotificationParams

from . import lowlevel
from .clients import clients

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


def install(server: Any, runner: Any, workspace_for: Any, options: Any) -> None:
    extra = getattr(options, "extra", None) or {}
    workspaces = extra.get("workspaces")
    adopt = getattr(workspaces, "adopt_roots", None)
    registry = clients(server)
    tasks: set[asyncio.Task[Any]] = set()

    async def refresh(session: Any) -> None:
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
        if adopt is None or not roots:
            return
        # On a thread: a root that left may take its jobs and terminals with it, and they take a
        # moment to stop.
        if await anyio.to_thread.run_sync(adopt, roots):
            registry.broadcast(ToolsListChanged())
            registry.broadcast(ResourcesListChanged())
            recheck = getattr(server, "_ide_recheck_tools", None)
            if recheck is not None:
                try:
                    await recheck(workspace_for(None))
                except Exception:
                    log.debug("feature re-check failed", exc_info=True)

    def spawn(ctx: Any) -> None:
        # A notification handler must not wait for the client's answer inline (the read loop
        # may be the one that delivers it), so the request runs as its own task.
        if lowlevel.is_modern(ctx):
            return
        registry.note(ctx)
        session = ctx.session
        task = asyncio.get_running_loop().create_task(refresh(session))
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    async def on_initialized(ctx: Any, params: Any) -> None:
        spawn(ctx)

    async def on_roots_changed(ctx: Any, params: Any) -> None:
        spawn(ctx)

    lowlevel.add_notification(server, "notifications/initialized", NotificationParams, on_initialized)
    lowlevel.add_notification(
        server, "notifications/roots/list_changed", NotificationParams, on_roots_changed
    )

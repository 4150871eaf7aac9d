"""Progress on every long tool call.

Tools that know how far they are report ``(done, total, message)`` themselves through
``call.reporter.progress``. For every other call that carries a ``progressToken`` and runs
longer than :data:`FIRST_AFTER` seconds, this module sends a heartbeat each
:data:`EVERY` seconds ("running <tool>… 3s"), with an increasing ``progress`` and no total, until
the call ends or the tool starts reporting on its own (so the values stay monotonic).
"""

from __future__ import annotations

import contextvars
import time
from typing import TYPE_CHECKING

import anyio
from mcp_types import CallToolRequestParams, ProgressToken

from . import lowlevel

if TYPE_CHECKING:
    from mcp.server import MCPServer
    from mcp.server.context import HandlerResult

    from ..runner import ToolRunner
    from ..server import ServerOptions, WorkspaceFor
    from .lowlevel import Handler, Previous, RequestContext

FIRST_AFTER = 1.0
EVERY = 1.0

_OWN = contextvars.ContextVar[list[bool] | None]("mcp_server_ide_progress_own", default=None)


def reported() -> None:
    """Called by the session reporter when a tool reports its own progress."""
    flag = _OWN.get()
    if flag is not None:
        flag[0] = True


def _token(params: CallToolRequestParams) -> ProgressToken | None:
    meta = params.meta  # a TypedDict: a dict at run time
    if meta is None:
        return None
    return meta.get("progress_token", meta.get("progressToken"))


def install(
    server: MCPServer, runner: ToolRunner, workspace_for: WorkspaceFor, options: ServerOptions
) -> None:
    def call_tool(previous: Previous) -> Handler[CallToolRequestParams]:
        assert previous is not None, "the SDK serves tools/call"

        async def handler(ctx: RequestContext, params: CallToolRequestParams) -> HandlerResult:
            if _token(params) is None:
                return await previous(ctx, params)
            own = [False]
            _OWN.set(own)
            result: HandlerResult = None
            start = time.monotonic()

            async def heartbeat(scope: anyio.CancelScope) -> None:
                await anyio.sleep(FIRST_AFTER)
                beat = 0
                while not own[0]:
                    beat += 1
                    elapsed = int(time.monotonic() - start)
                    try:
                        await ctx.session.report_progress(beat, None, f"running {params.name}… {elapsed}s")
                    except Exception:
                        return
                    await anyio.sleep(EVERY)

            async with anyio.create_task_group() as tg:
                tg.start_soon(heartbeat, tg.cancel_scope)
                try:
                    result = await previous(ctx, params)
                finally:
                    tg.cancel_scope.cancel()
            return result

        return handler

    lowlevel.replace_request(server, "tools/call", CallToolRequestParams, call_tool)

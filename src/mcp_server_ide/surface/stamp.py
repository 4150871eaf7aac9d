"""A lean ``serverInfo`` stamp on 2026-era ``tools/call`` results.

The 2026-07-28 era puts the server's ``Implementation`` in every result's ``_meta`` (spec #3002);
the SDK stamps the whole of it, icons (base64 SVG) and description included: ~630 bytes on every
tool answer, which a model's client reads on every turn. A tool result names the server by
``name`` and ``version`` only (all an ``Implementation`` must carry; the SDK keeps a stamp its
handler wrote); every other result, ``server/discover``'s first, still carries the whole identity.
2025-era results carry no stamp, and get none here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_types import SERVER_INFO_META_KEY, CallToolRequestParams, CallToolResult

if TYPE_CHECKING:
    from mcp.server import MCPServer
    from mcp.server.context import HandlerResult

    from ..runner import ToolRunner
    from ..server import ServerOptions, WorkspaceFor
    from .lowlevel import Handler, Previous, RequestContext


def install(
    server: MCPServer, runner: ToolRunner, workspace_for: WorkspaceFor, options: ServerOptions
) -> None:
    from .. import __version__
    from . import lowlevel

    stamp = {"name": server.name, "version": __version__}

    def call_tool(previous: Previous) -> Handler[CallToolRequestParams]:
        assert previous is not None, "the SDK serves tools/call"

        async def handler(ctx: RequestContext, params: CallToolRequestParams) -> HandlerResult:
            result = await previous(ctx, params)
            if not isinstance(result, CallToolResult) or not lowlevel.is_modern(ctx):
                return result
            meta = dict(result.meta or {})
            meta.setdefault(SERVER_INFO_META_KEY, dict(stamp))
            return result.model_copy(update={"meta": meta})

        return handler

    lowlevel.replace_request(server, "tools/call", CallToolRequestParams, call_tool)

"""Icons for the server and for each tool category (``data:`` SVG URIs, so they work over stdio
and HTTP alike, as VS Code's MCP guide allows).

Tool icons travel only to clients that show them. VS Code does (its tool picker and chat use
``icons.getUrl(22)``, falling back to a generic icon) and never hands them to the model (it passes
name, description and ``inputSchema``); to every other client 69 icons would be ~27 KB of
``tools/list`` shown nowhere. So ``tools/list`` keeps a tool's icons only when the client's
``clientInfo.name`` is one of VS Code's (:data:`SHOWS_TOOL_ICONS`). The server's own icon (in the
``initialize`` answer) and the prompts' icons go to every client. The listing cache holds the tools
with their icons; the choice is made per request, after it.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING

from mcp_types import Icon, ListToolsResult, PaginatedRequestParams

if TYPE_CHECKING:
    from mcp.server import MCPServer
    from mcp.server.context import HandlerResult
    from mcp.server.mcpserver.tools.base import Tool

    from ..registry import ToolSpec
    from ..runner import ToolRunner
    from ..server import ServerOptions, WorkspaceFor
    from .lowlevel import Handler, Previous, RequestContext

SHOWS_TOOL_ICONS = ("Visual Studio Code", "code-server", "Code - OSS", "VSCodium")
"""``clientInfo.name`` of the clients known to show tool icons (VS Code is ``product.nameLong``:
"Visual Studio Code", "Visual Studio Code - Insiders", code-server's "code-server")."""

_FRAME = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" stroke="{color}" '
    'stroke-width="2" stroke-linecap="round" stroke-linejoin="round">{body}</svg>'
)

SHAPES: dict[str, tuple[str, str]] = {
    "server": (
        "#3b82f6",
        '<rect x="3" y="4" width="18" height="16" rx="2"/><path d="M7 9l3 3-3 3M12 15h5"/>',
    ),
    "editor": ("#6366f1", '<path d="M4 20h4L18 10l-4-4L4 16z"/><path d="M13 7l4 4"/>'),
    "file": ("#0ea5e9", '<path d="M14 3H6v18h12V7z"/><path d="M14 3v4h4"/>'),
    "search": ("#14b8a6", '<circle cx="11" cy="11" r="6"/><path d="M20 20l-4.5-4.5"/>'),
    "code": ("#8b5cf6", '<path d="M8 7l-5 5 5 5M16 7l5 5-5 5"/>'),
    "debug": (
        "#ef4444",
        '<rect x="7" y="7" width="10" height="12" rx="5"/><path d="M12 7V4M4 12h3M17 12h3M5 18l3-2M19 18l-3-2"/>',
    ),
    "terminal": ("#22c55e", '<rect x="3" y="4" width="18" height="16" rx="2"/><path d="M7 10l3 3-3 3"/>'),
    "git": (
        "#f97316",
        '<circle cx="6" cy="6" r="2"/><circle cx="6" cy="18" r="2"/><circle cx="18" cy="9" r="2"/><path d="M6 8v8M18 11c0 4-6 3-10 6"/>',
    ),
    "project": ("#eab308", '<path d="M3 7h6l2 2h10v10H3z"/>'),
    "action": ("#ec4899", '<path d="M13 3L5 14h6l-1 7 8-11h-6z"/>'),
    "project_fs": ("#06b6d4", '<path d="M3 7h6l2 2h10v10H3z"/><path d="M9 14h6"/>'),
    "journal": ("#a855f7", '<path d="M4 12a8 8 0 1 0 3-6.2"/><path d="M4 4v4h4M12 8v4l3 2"/>'),
    "plugin": ("#64748b", '<path d="M9 3v4M15 3v4M6 7h12v5a6 6 0 0 1-12 0zM12 18v3"/>'),
}


def icon(kind: str) -> list[Icon]:
    color, body = SHAPES.get(kind, SHAPES["plugin"])
    svg = _FRAME.format(color=color, body=body)
    src = "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()
    return [Icon(src=src, mime_type="image/svg+xml", sizes=["any"])]


def shows_tool_icons(client_name: str | None) -> bool:
    """Whether a client of this ``clientInfo.name`` shows tool icons ("Visual Studio Code - Insiders" does)."""
    if not client_name:
        return False
    return any(client_name == n or client_name.startswith(n + " ") for n in SHOWS_TOOL_ICONS)


def install(
    server: MCPServer, runner: ToolRunner, workspace_for: WorkspaceFor, options: ServerOptions
) -> None:
    from . import lowlevel

    lowlevel.lowlevel(server).icons = icon("server")

    def add_icon(spec: ToolSpec, sdk_tool: Tool) -> None:
        if sdk_tool.icons is None:
            sdk_tool.icons = icon(spec.category)

    runner.patch_tools(add_icon, cache_key="icons")

    def list_tools(previous: Previous) -> Handler[PaginatedRequestParams]:
        assert previous is not None, "the SDK serves tools/list"

        async def handler(ctx: RequestContext, params: PaginatedRequestParams | None) -> HandlerResult:
            result = await previous(ctx, params)
            if shows_tool_icons(lowlevel.client_name(ctx)):
                return result
            listed = lowlevel.expect(ListToolsResult, result)
            return listed.model_copy(
                update={
                    "tools": [t.model_copy(update={"icons": None}) if t.icons else t for t in listed.tools]
                }
            )

        return handler

    lowlevel.replace_request(server, "tools/list", PaginatedRequestParams, list_tools)

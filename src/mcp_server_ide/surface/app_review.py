"""The change-review MCP App (seed 002, "MCP Apps"): a ``ui://`` resource that hosts render in the chat.

- ``ui://mcp-server-ide/review`` (MIME ``text/html;profile=mcp-app``) is one self-contained HTML file
  built with ``@modelcontextprotocol/ext-apps`` from ``apps/review/`` (``npm run build`` there) and
  shipped as package data (``mcp_server_ide/apps/review.html``).
- It shows the changes since a checkpoint, file by file, with Keep / Undo buttons that call the
  journal tools (``diff_since_checkpoint``, ``keep_changes``, ``restore_checkpoint``) through the host.
- Tools that change files point to it with ``_meta.ui.resourceUri`` (and the older flat key
  ``ui/resourceUri``): the non-read-only tools of the file-editing categories, and the destructive
  journal tools. Decided from the registry's categories and annotations, never by tool name; a tool
  that sets its own ``meta["ui"]`` keeps it.
"""

from __future__ import annotations

import logging
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp.server import MCPServer
    from mcp.server.mcpserver.tools.base import Tool

    from ..registry import ToolSpec
    from ..runner import ToolRunner
    from ..server import ServerOptions, WorkspaceFor

log = logging.getLogger(__name__)

REVIEW_URI = "ui://mcp-server-ide/review"
APP_MIME = "text/html;profile=mcp-app"
FILE_CATEGORIES = frozenset({"file", "project_fs", "editor", "code"})
NEEDED_TOOLS = ("diff_since_checkpoint", "keep_changes", "restore_checkpoint")


def review_html() -> str | None:
    try:
        return resources.files("mcp_server_ide").joinpath("apps", "review.html").read_text(encoding="utf-8")
    except (FileNotFoundError, OSError):
        return None


def links_to_review(spec: ToolSpec) -> bool:
    """Whether a tool's results should offer the review view: it changes files."""
    if spec.read_only:
        return False
    if spec.meta and "ui" in spec.meta:
        return False  # the tool chose its own UI (or none)
    return spec.category in FILE_CATEGORIES or (spec.category == "journal" and spec.destructive)


def install(
    server: MCPServer, runner: ToolRunner, workspace_for: WorkspaceFor, options: ServerOptions
) -> None:
    from mcp.server.mcpserver.resources import TextResource

    if any(name not in runner.specs for name in NEEDED_TOOLS):
        return  # the journal tools are not served (--tools): the view would have nothing to call
    html = review_html()
    if html is None:
        log.warning("the review app is missing from the package (apps/review.html); not offering it")
        return
    server.add_resource(
        TextResource(
            uri=REVIEW_URI,
            name="review",
            title="Review changes",
            description="Review the changes made to files since a checkpoint, file by file, and keep or undo each. "
            "An MCP App: hosts that support MCP Apps render it beside the results of tools that change files.",
            mime_type=APP_MIME,
            text=html,
            meta={"ui": {"prefersBorder": True, "csp": {"connectDomains": [], "resourceDomains": []}}},
        )
    )
    if runner.read_only:
        return  # no tool changes files: nothing to point at the view

    def link(spec: ToolSpec, sdk: Tool) -> None:
        if not links_to_review(spec):
            return
        meta = dict(sdk.meta or {})
        meta["ui"] = {**meta.get("ui", {}), "resourceUri": REVIEW_URI}
        meta["ui/resourceUri"] = REVIEW_URI
        sdk.meta = meta

    # Registered only while apps/review.html is there: the listing cache keys by the patches applied.
    runner.patch_tools(link, cache_key="review-app")

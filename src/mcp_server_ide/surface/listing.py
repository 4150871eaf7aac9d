"""A lean ``tools/list``: schemas without generated titles or ``default: null`` (:mod:`..leanschema`),
for every door that shows a schema (MCP, REST's ``list_tools``, the reference page)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..leanschema import LEAN_PATCH, lean_tool

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from ..runner import ToolRunner
    from ..server import ServerOptions, WorkspaceFor


def install(
    server: MCPServer, runner: ToolRunner, workspace_for: WorkspaceFor, options: ServerOptions
) -> None:
    runner.patch_tools(lean_tool, cache_key=LEAN_PATCH)

"""A lean ``tools/list``: schemas without generated titles or ``default: null`` (:mod:`..leanschema`),
for every door that shows a schema (MCP, REST's ``list_tools``, the reference page)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..leanschema import lean_schema

if TYPE_CHECKING:
    from mcp.server import MCPServer
    from mcp.server.mcpserver.tools.base import Tool

    from ..registry import ToolSpec
    from ..runner import ToolRunner
    from ..server import ServerOptions, WorkspaceFor


def lean_tool(spec: ToolSpec, sdk_tool: Tool) -> None:
    """Publish ``sdk_tool``'s schemas lean; arguments and results are still validated by its models."""
    sdk_tool.parameters = lean_schema(sdk_tool.parameters)
    output = sdk_tool.output_schema
    if output is not None:
        lean = lean_schema(output)
        output.clear()  # in place: the SDK's Tool and its FuncMetadata hold this same dict
        output.update(lean)


def install(
    server: MCPServer, runner: ToolRunner, workspace_for: WorkspaceFor, options: ServerOptions
) -> None:
    runner.patch_tools(lean_tool, cache_key="lean-schemas")

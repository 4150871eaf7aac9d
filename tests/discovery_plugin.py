"""A ``--plugin`` module for the discovery tests: a tool shown only in a workspace with Go files."""

from __future__ import annotations

from mcp_server_ide import plugin


@plugin.tool(read_only=True, structured=False, requires=("go",))
def go_only() -> str:
    """Answers in a workspace with Go files (a tool other workspaces do not list)."""
    return "go"

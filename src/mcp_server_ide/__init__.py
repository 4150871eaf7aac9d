"""mcp-server-ide: an MCP server that gives AI assistants IDE powers over a workspace."""

__version__ = "0.1.0"

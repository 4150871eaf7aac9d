"""MCP features beyond tools; each module has an ``install(server, runner, workspace_for, options)``."""

"""A client that announces its roots and changes them, for tests of ``Workspace.set_roots`` through
an MCP session (2025-era roots: the server asks ``roots/list`` when told they changed)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp_types import ListRootsResult, Root

from .results import payload


class RootsClient:
    """What the client announces, and a count of the tool-list changes the server sends back (one
    per change of roots, sent once the server has finished following it). Every other message the
    server sends is kept in :attr:`messages`."""

    def __init__(self, roots: list[Path]) -> None:
        self.roots = roots
        self.list_changes = 0
        self.messages: list[Any] = []

    async def list_roots(self, ctx: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=r.as_uri(), name=r.name) for r in self.roots])

    async def on_message(self, message: Any) -> None:
        if type(message).__name__ == "ToolListChangedNotification":
            self.list_changes += 1
        self.messages.append(message)

    async def change(self, client: Any, roots: list[Path]) -> None:
        seen = self.list_changes
        self.roots = roots
        await client.send_roots_list_changed()
        with anyio.fail_after(30):
            while self.list_changes == seen:
                await anyio.sleep(0.02)


@asynccontextmanager
async def roots_session(peer: RootsClient, **client_kwargs: Any) -> AsyncIterator[tuple[Any, Any]]:
    """``(client, workspaces)``: the real server started without ``--workspace`` (so it serves the
    client's roots), connected in-process to a client announcing ``peer``'s roots; returns once the
    server serves them. Call from a folder that is none of the roots (``monkeypatch.chdir``)."""
    from mcp import Client

    from mcp_server_ide.server import ServerOptions, build_server
    from mcp_server_ide.workspace import Policy
    from mcp_server_ide.workspaces import LocalWorkspaces

    workspaces = LocalWorkspaces(None, Policy())
    server, _ = build_server(workspaces.for_context, ServerOptions(workspaces=workspaces))
    expected = [r.resolve() for r in peer.roots]
    try:
        async with Client(
            server,
            mode="legacy",
            list_roots_callback=peer.list_roots,
            message_handler=peer.on_message,
            **client_kwargs,
        ) as client:
            with anyio.fail_after(30):
                while workspaces.workspace.roots != expected:
                    await anyio.sleep(0.02)
            yield client, workspaces
    finally:
        workspaces.close()


async def call(client: Any, tool: str, args: dict[str, Any] | None = None) -> Any:
    """A tool's result data (a text result as its text); a tool error fails the test with its message."""
    result = await client.call_tool(tool, args or {})
    assert not result.is_error, f"{tool}: {result.content[0].text}"
    try:
        return payload(result)
    except ValueError:
        return result.content[0].text

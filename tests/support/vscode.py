"""What the tests of the tools driving VS Code share (tests/e2e/ in a real VS Code, and those through
the extension's bridge): the launch workspace they write, and tool calls through the REST door (the
JetBrains-style HTTP interface) and through an MCP client."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import httpx


def node_launch(name: str, program: str) -> dict[str, str]:
    """A ``launch.json`` configuration running ``program`` (relative to the workspace) under node."""
    return {"type": "node", "request": "launch", "name": name, "program": f"${{workspaceFolder}}/{program}"}


RUN_APP = node_launch("Run app", "app.js")


def write_launch(ws: Path, *configs: dict[str, str]) -> Path:
    """Write ``ws/.vscode/launch.json`` with these configurations; the file's path."""
    launch = ws / ".vscode" / "launch.json"
    launch.parent.mkdir(parents=True, exist_ok=True)
    launch.write_text(json.dumps({"version": "0.2.0", "configurations": list(configs)}))
    return launch


def rest_status(url: str, tool: str, args: dict[str, object], timeout: float = 60) -> Any:
    """``POST {url}/mcp/{tool}`` (the REST door): its ``status``, asserting it has no ``error``."""
    answer = httpx.post(f"{url}/mcp/{tool}", json=args, timeout=timeout).json()
    assert answer["error"] is None, (tool, answer)
    return answer["status"]


def rest_error(url: str, tool: str, args: dict[str, object], timeout: float = 60) -> str:
    """``POST {url}/mcp/{tool}`` expected to fail: its ``error``, asserting it has no ``status``."""
    answer = httpx.post(f"{url}/mcp/{tool}", json=args, timeout=timeout).json()
    assert answer["status"] is None, (tool, answer)
    return str(answer["error"])


def mcp_call(url: str, tool: str, **args: object) -> Any:
    """One tool call through an MCP client over Streamable HTTP (the REST door answers in the JetBrains
    shape, without the debugger's verdicts); run in a thread of its own, so it also works where the
    calling thread has an event loop (a browser page's sync API)."""
    from mcp import Client

    from tests.support.results import data

    async def go() -> Any:
        async with Client(url, mode="legacy") as client:
            result = await client.call_tool(tool, args)
            assert not result.is_error, (tool, result.content)
            return data(result)

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, go).result()

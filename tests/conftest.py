"""Shared fixtures: a fresh workspace folder, an in-process MCP client, and real server processes.

- ``ws_path``: an empty workspace folder (tmp), with XDG_STATE_HOME pointed at another tmp folder.
- ``mcp``: an async factory: ``async with mcp(ws_path, **options) as client`` gives an SDK ``Client``
  connected in-process to the real server built for that workspace.
- ``stdio_server_params(ws_path, *args)``: ``StdioServerParameters`` that launch the real CLI.
- ``http_server(ws_path, *args)``: starts ``mcp-server-ide --http`` as a real process on a free
  port and returns its base URL (``http://127.0.0.1:PORT``); stopped at the end of the test.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from .support.servers import HttpServer, start_http_server, stdio_params


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _state_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    state = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    return state


@pytest.fixture
def ws_path(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def mcp() -> Callable[..., Any]:
    from mcp import Client

    from mcp_server_ide.server import ServerOptions, build_server
    from mcp_server_ide.workspace import Policy, Workspace

    @asynccontextmanager
    async def connect(
        root: Path,
        *,
        policy: Policy | None = None,
        options: ServerOptions | None = None,
        **client_kwargs: Any,
    ) -> AsyncIterator[Any]:
        ws = Workspace.open(root, policy=policy or Policy())
        server, _ = build_server(lambda ctx: ws, options)
        try:
            async with Client(server, **client_kwargs) as client:
                yield client
        finally:
            ws.close()

    return connect


@pytest.fixture
def stdio_server_params() -> Callable[..., Any]:
    return stdio_params


@pytest.fixture
def http_server() -> Iterator[Callable[..., HttpServer]]:
    started: list[HttpServer] = []

    def start(root: Path, *args: str, env: dict[str, str] | None = None) -> HttpServer:
        server = start_http_server(root, *args, env=env)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def pytest_report_header() -> str:
    return f"python: {sys.executable}; cwd: {os.getcwd()}"

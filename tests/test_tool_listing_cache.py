"""tools/list served from the listing kept by the previous start is exactly the listing of freshly
built tools, and builds nothing; any change to what the listing derives from is a miss."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from mcp_server_ide import toolcache
from mcp_server_ide.server import ServerOptions, build_server
from mcp_server_ide.workspace import Workspace

pytestmark = pytest.mark.anyio


async def _listing(ws_path: Path, options: ServerOptions | None = None) -> tuple[list[dict], object]:
    ws = Workspace.open(ws_path)
    server, runner = build_server(lambda ctx: ws, options)
    async with Client(server) as client:
        tools = (await client.list_tools()).tools
    ws.close()
    return [t.model_dump(mode="json", by_alias=True) for t in tools], runner


async def test_second_start_lists_from_the_cache_without_building(ws_path: Path) -> None:
    fresh, first = await _listing(ws_path)
    assert len(first.sdk._built) == len(first.specs)  # built everything, and kept the listing
    cached, second = await _listing(ws_path)
    assert second.sdk._built == {}  # nothing built to answer tools/list
    assert cached == fresh


async def test_a_call_still_builds_and_validates_the_real_tool(ws_path: Path) -> None:
    (ws_path / "a.txt").write_text("x\n")
    await _listing(ws_path)
    ws = Workspace.open(ws_path)
    server, runner = build_server(lambda ctx: ws, None)
    async with Client(server) as client:
        await client.list_tools()
        bad = await client.call_tool("list_files_in_folder", {"pathInProject": "/", "bogus": 1})
        good = await client.call_tool("list_files_in_folder", {"pathInProject": "/"})
    ws.close()
    assert bad.is_error and not good.is_error
    assert set(runner.sdk._built) == {"list_files_in_folder"}


def test_the_key_changes_with_what_the_listing_derives_from() -> None:
    from mcp_server_ide import registry

    registry.load_builtin_tools()
    specs = registry.all_tools()
    base = toolcache.cache_key(specs, read_only=False)
    assert base == toolcache.cache_key(specs, read_only=False)
    assert base != toolcache.cache_key(specs, read_only=True)
    assert base != toolcache.cache_key(specs[:-1], read_only=False)

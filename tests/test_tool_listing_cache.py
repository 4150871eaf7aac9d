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
    from dataclasses import replace

    from mcp_server_ide import registry

    registry.load_builtin_tools()
    # Only the package's own tools: other tests of this process may have loaded a plugin's.
    specs = [s for s in registry.all_tools() if s.fn.__module__.startswith(toolcache.PACKAGE + ".")]
    base = toolcache.cache_key(specs, read_only=False, patches=["icons"])
    assert base is not None
    assert base == toolcache.cache_key(specs, read_only=False, patches=["icons"])
    assert base != toolcache.cache_key(specs, read_only=True, patches=["icons"])
    assert base != toolcache.cache_key(specs[:-1], read_only=False, patches=["icons"])
    assert base != toolcache.cache_key(specs, read_only=False, patches=["icons", "review-app"])
    # What the key cannot name is never cached: a patch without a key, a tool from outside the package.
    assert toolcache.cache_key(specs, read_only=False, patches=["icons", None]) is None
    foreign = replace(specs[0], fn=test_the_key_changes_with_what_the_listing_derives_from)
    assert toolcache.cache_key([*specs, foreign], read_only=False) is None


# --- every input of the listing, changed in turn, through real stdio servers -------------------------
# Each start below is a real `mcp-server-ide` process sharing one state folder (so one listing cache);
# a start must list what that start's server builds, whatever an earlier start left in the cache.

PATCHED_TOOL = "get_file_text_by_path"

INSTALL_ONLY_PLUGIN = '''
"""A plugin with no tools: its install hook rewrites a built-in tool's description."""
import os


def install(server, runner, workspace_for, options):
    text = os.environ["LISTING_PLUGIN_TEXT"]

    def patch(spec, tool):
        if spec.name == "get_file_text_by_path":
            tool.description = text

    runner.patch_tools(patch)
'''

TOOL_PLUGIN = '''
"""A plugin with one tool."""
from mcp_server_ide import plugin


@plugin.tool(read_only=True, structured=False)
def listing_probe() -> str:
    """Answers probe."""
    return "probe"
'''


async def _stdio_listing(ws_path: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, dict]:
    from .support.servers import stdio_params

    async with Client(stdio_params(ws_path, *args, env=env)) as client:
        tools = (await client.list_tools()).tools
    return {t.name: t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools}


def _plugin_env(tmp_path: Path, name: str, source: str, **extra: str) -> dict[str, str]:
    folder = tmp_path / "plugins"
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.py").write_text(source, encoding="utf-8")
    return {"PYTHONPATH": str(folder), **extra}


async def test_a_plugin_install_hook_is_listed_by_its_own_start_only(ws_path: Path, tmp_path: Path) -> None:
    env = _plugin_env(tmp_path, "listing_hook_plugin", INSTALL_ONLY_PLUGIN)
    hooked = ("--plugin", "listing_hook_plugin")
    first = await _stdio_listing(ws_path, *hooked, env={**env, "LISTING_PLUGIN_TEXT": "patched one"})
    assert first[PATCHED_TOOL]["description"] == "patched one"
    plain = await _stdio_listing(ws_path)  # the issue: this start listed "patched one"
    assert plain[PATCHED_TOOL]["description"] not in ("patched one", "patched two")
    second = await _stdio_listing(ws_path, *hooked, env={**env, "LISTING_PLUGIN_TEXT": "patched two"})
    assert second[PATCHED_TOOL]["description"] == "patched two"


async def test_a_plugin_tool_is_listed_only_while_the_plugin_is_loaded(ws_path: Path, tmp_path: Path) -> None:
    env = _plugin_env(tmp_path, "listing_tool_plugin", TOOL_PLUGIN)
    plain = await _stdio_listing(ws_path, env=env)
    with_plugin = await _stdio_listing(ws_path, "--plugin", "listing_tool_plugin", env=env)
    assert "listing_probe" not in plain and with_plugin["listing_probe"]["description"] == "Answers probe."
    assert await _stdio_listing(ws_path, env=env) == plain


async def test_the_review_app_file_decides_the_links_in_the_listing(ws_path: Path, tmp_path: Path) -> None:
    """A copy of the package, so its apps/review.html can be taken away (the installed one stays)."""
    import shutil

    import mcp_server_ide

    site = tmp_path / "site"
    shutil.copytree(
        Path(mcp_server_ide.__file__).parent,
        site / "mcp_server_ide",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    env = {"PYTHONPATH": str(site)}
    app = site / "mcp_server_ide" / "apps" / "review.html"
    html = app.read_bytes()
    with_app = await _stdio_listing(ws_path, env=env)
    assert with_app["replace_specific_text"]["_meta"]["ui"]["resourceUri"] == "ui://mcp-server-ide/review"
    app.unlink()
    without_app = await _stdio_listing(ws_path, env=env)  # the issue: links to a resource no longer served
    assert "ui" not in (without_app["replace_specific_text"].get("_meta") or {})
    app.write_bytes(html)
    assert await _stdio_listing(ws_path, env=env) == with_app


async def test_tool_selection_and_read_only_each_list_their_own_tools(ws_path: Path) -> None:
    full = await _stdio_listing(ws_path)
    files = await _stdio_listing(ws_path, "--tools", "file")
    read_only = await _stdio_listing(ws_path, "--read-only")
    assert (
        set(files) < set(full) and "get_file_text_by_path" in files and "search_in_files_content" not in files
    )
    assert "ui" in full["replace_specific_text"]["_meta"]
    assert set(read_only) == set(full)  # listed, refused when called; none links to the review view
    assert all("ui" not in (t.get("_meta") or {}) for t in read_only.values())
    assert await _stdio_listing(ws_path) == full

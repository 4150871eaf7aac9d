"""Dynamic tool discovery while clients sit idle (surface/discovery.py): a re-check reads the
workspace again only when a folder its last scan read has changed, and a language file someone
else makes deep in the tree still brings its tools (``notifications/tools/list_changed``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_server_ide.server import ServerOptions, build_server
from mcp_server_ide.surface import discovery
from mcp_server_ide.workspace import Policy, Workspace

pytestmark = pytest.mark.anyio

PLUGIN = ServerOptions(plugins=["tests.discovery_plugin"])


def _tree(root: Path) -> None:
    for i in range(20):
        folder = root / f"pkg{i}" / "sub"
        folder.mkdir(parents=True)
        for j in range(5):
            (folder / f"note{j}.txt").write_text("x\n")


async def test_an_idle_session_re_checks_without_reading_the_workspace_again(
    ws_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The re-checks (``Features.get(fresh=True)``) and the scans (a listing of the root) are counted
    by wrappers around the real calls."""
    import os

    from mcp import Client

    monkeypatch.setattr(discovery, "POLL_SECONDS", 0.05)
    _tree(ws_path)
    counts = {"checks": 0, "scans": 0}
    real_get, real_scandir = discovery.Features.get, os.scandir

    def get(self: discovery.Features, fresh: bool = False) -> frozenset[str]:
        counts["checks"] += fresh
        return real_get(self, fresh)

    def scandir(path: Any = ".") -> Any:
        counts["scans"] += str(path) == str(ws_path)
        return real_scandir(path)

    monkeypatch.setattr(discovery.Features, "get", get)
    monkeypatch.setattr(os, "scandir", scandir)
    ws = Workspace.open(ws_path, policy=Policy())
    server, _ = build_server(lambda ctx: ws, PLUGIN)
    try:
        async with Client(server, mode="legacy") as client:
            await client.list_tools()  # starts the re-checks of an open session
            # Just after the files were made a re-check may read them again (their folders' stamps
            # are too new to trust); then re-checks go on without a scan.
            quiet: tuple[int, int] | None = None  # (checks, scans) when the scans last moved
            with anyio.move_on_after(60):
                while quiet is None or counts["checks"] - quiet[0] < 20:
                    if quiet is None or counts["scans"] != quiet[1]:
                        quiet = (counts["checks"], counts["scans"])
                    await anyio.sleep(0.02)
            assert quiet is not None and counts["checks"] - quiet[0] >= 20, (
                f"every re-check read the workspace again: {counts}"
            )
    finally:
        ws.close()


async def test_a_go_file_someone_makes_deep_in_the_tree_brings_its_tool(ws_path: Path) -> None:
    from mcp import Client

    _tree(ws_path)
    ws = Workspace.open(ws_path, policy=Policy())
    server, _ = build_server(lambda ctx: ws, PLUGIN)
    notes: list[str] = []

    async def handler(message: object) -> None:
        notes.append(type(message).__name__)

    async def listed() -> set[str]:
        return {t.name for t in (await client.list_tools()).tools}

    async def heard_list_changed() -> None:
        with anyio.move_on_after(30):
            while "ToolListChangedNotification" not in notes:
                await anyio.sleep(0.1)
        assert "ToolListChangedNotification" in notes

    try:
        async with Client(server, mode="legacy", message_handler=handler) as client:
            assert "go_only" not in await listed()
            # Past the 2 s in which a folder's stamp is too new to trust (the change below is then
            # found by its folders' stamps; the answer would be the same sooner, from a new scan).
            await anyio.sleep(2.5)
            source = ws_path / "pkg7" / "sub" / "deeper" / "main.go"
            source.parent.mkdir()
            source.write_text("package main\n")  # by the person, outside the server
            await heard_list_changed()
            assert "go_only" in await listed()
            notes.clear()
            source.unlink()
            await heard_list_changed()
            assert "go_only" not in await listed()
    finally:
        ws.close()

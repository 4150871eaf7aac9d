"""A change of the client's roots keeps the work of the roots still there and stops the work of a
root that left (craft issue, bug 8), through an MCP client session that announces its roots and
says when they change (2025-era roots; the real server, real jobs and terminals)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_server_ide.server import ServerOptions
from mcp_server_ide.workspace import Policy

from .support.roots import RootsClient
from .support.roots import call as _call

pytestmark = pytest.mark.anyio


async def _job(client: Any, job_id: str) -> dict[str, Any]:
    return await _call(client, "get_job_output", {"jobId": job_id})


async def _terminal(client: Any, terminal_id: str) -> dict[str, Any]:
    listed = await _call(client, "list_terminals", {})
    items = listed["result"] if isinstance(listed, dict) and "result" in listed else listed
    return next(t for t in items if t["terminalId"] == terminal_id)


async def test_jobs_and_terminals_of_a_root_that_stays_survive_a_roots_change(
    tmp_path: Path, monkeypatch
) -> None:
    from mcp import Client

    from mcp_server_ide.engines.lsp import manager
    from mcp_server_ide.server import build_server
    from mcp_server_ide.workspaces import LocalWorkspaces

    start, first, second = tmp_path / "start", tmp_path / "first", tmp_path / "second"
    for folder in (start, first, second):
        folder.mkdir()
    first, second = first.resolve(), second.resolve()
    monkeypatch.chdir(start)
    workspaces = LocalWorkspaces(None, Policy())
    server, _ = build_server(workspaces.for_context, ServerOptions(workspaces=workspaces))
    peer = RootsClient([first])
    try:
        async with Client(
            server, mode="legacy", list_roots_callback=peer.list_roots, message_handler=peer.on_message
        ) as client:
            with anyio.fail_after(30):
                while workspaces.workspace.roots != [first]:
                    await anyio.sleep(0.02)
            ws = workspaces.workspace
            job_a = await _call(client, "start_job", {"command": "echo ready-a; sleep 300"})
            assert job_a["state"] == "running"
            term_a = await _call(client, "create_terminal", {"name": "in first"})
            languages = manager.servers(ws)  # the primary root's language servers (none started)

            # A root is added: everything of the first root carries on.
            await peer.change(client, [first, second])
            assert ws.roots == [first, second]
            out = await _call(
                client,
                "get_job_output",
                {"jobId": job_a["jobId"], "waitMs": 10000, "untilPattern": "ready-a"},
            )
            assert out["state"] == "running" and "ready-a" in out["output"], out
            assert (await _terminal(client, term_a["terminalId"]))["state"] == "running"
            assert manager.servers(ws) is languages
            job_b = await _call(client, "start_job", {"command": "sleep 300", "cwd": "second"})

            # Reordered: both roots are still there, so is their work; the language servers of the old
            # primary root are closed (relative paths now resolve in the other root).
            await peer.change(client, [second, first])
            assert (await _job(client, job_a["jobId"]))["state"] == "running"
            assert (await _job(client, job_b["jobId"]))["state"] == "running"
            assert (await _terminal(client, term_a["terminalId"]))["state"] == "running"
            assert manager.servers(ws) is not languages

            # The first root leaves: its job and terminal are stopped, the second root's job runs on.
            await peer.change(client, [second])
            assert (await _job(client, job_a["jobId"]))["state"] == "killed"
            assert (await _terminal(client, term_a["terminalId"]))["state"] == "killed"
            assert (await _job(client, job_b["jobId"]))["state"] == "running"
    finally:
        workspaces.close()

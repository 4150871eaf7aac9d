"""Language-server lifecycle, with real servers and real processes: loading, crashes, orphans, idle, memory.

- A query sent while the server is loading waits, or answers ``partial`` with a reason: never an
  incomplete list presented as complete.
- A language server killed under us is restarted by the next call.
- Killing the MCP server process (SIGKILL, no cleanup) leaves no language server behind: the
  parent-death signal and the process group take them down.
- Closing the workspace stops every server; an idle server is stopped and restarts on demand; a
  server over its memory cap is stopped by the watchdog.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from mcp_server_ide.engines.lsp import servers
from mcp_server_ide.server import build_server
from mcp_server_ide.workspace import Workspace

from .support.codeprojects import python_project, typescript_project
from .support.results import flat_references, payload
from .test_code_python import grep_uses

pytestmark = pytest.mark.anyio


def _ppid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2 :].split()
    if fields[0] == b"Z":
        return None
    return int(fields[1])


def descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            parent = _ppid(int(name))
            if parent is not None:
                children.setdefault(parent, []).append(int(name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pid: int) -> bool:
    return _ppid(pid) is not None


def wait_gone(pids: set[int], timeout: float = 10.0) -> set[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = {p for p in pids if alive(p)}
        if not left:
            return set()
        time.sleep(0.1)
    return {p for p in pids if alive(p)}


async def call(server: Any, name: str, args: dict[str, Any]) -> Any:
    async with Client(server) as client:
        result = await client.call_tool(name, args)
    return result


async def test_a_query_while_loading_waits_or_says_partial(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = python_project(tmp_path / "proj")
    expected = grep_uses(root, "compute_total")
    # With no time to wait for the project, the answer must say it may be partial.
    monkeypatch.setenv("MCP_IDE_LSP_READY_TIMEOUT", "0")
    ws = Workspace.open(root)
    server, _ = build_server(lambda ctx: ws, None)
    try:
        result = await call(
            server, "find_references", {"pathInProject": "pkg/core.py", "line": 7, "character": 6}
        )
        assert not result.is_error, result.content[0].text
        out = payload(result)
        found = {(r["path"], r["line"], r["character"]) for r in flat_references(out)}
        assert out.get("partial") is True or found == expected, out
        if out.get("partial"):
            assert "loading" in out["reason"]
        # With the normal wait the same question gets the whole answer.
        monkeypatch.setenv("MCP_IDE_LSP_READY_TIMEOUT", "90")
        out = payload(
            await call(server, "find_references", {"pathInProject": "pkg/core.py", "line": 7, "character": 6})
        )
        assert "partial" not in out
        assert {(r["path"], r["line"], r["character"]) for r in flat_references(out)} == expected
    finally:
        ws.close()


async def test_typescript_without_a_project_file_is_whole_up_to_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "loose"
    (root / "src").mkdir(parents=True)
    (root / "src/a.ts").write_text("export function hello(): string { return 'hi'; }\n")
    (root / "src/b.ts").write_text("import { hello } from './a';\nhello();\n")
    ws = Workspace.open(root)
    server, _ = build_server(lambda ctx: ws, None)
    args = {"pathInProject": "src/a.ts", "line": 0, "character": 17}
    try:
        monkeypatch.setenv("MCP_IDE_TS_PROJECT_MAX_FILES", "1")
        out = payload(await call(server, "find_references", args))
        assert out["partial"] is True
        assert "tsconfig.json" in out["reason"] and "MCP_IDE_TS_PROJECT_MAX_FILES" in out["reason"]
        monkeypatch.delenv("MCP_IDE_TS_PROJECT_MAX_FILES")
        out = payload(await call(server, "find_references", args))
        assert "partial" not in out, out
        assert {r["path"] for r in out["references"]} == {"src/a.ts", "src/b.ts"}
        assert sorted(p.name for p in root.iterdir()) == ["src"]  # nothing written into the workspace
    finally:
        ws.close()


async def test_a_killed_language_server_is_restarted_by_the_next_call(tmp_path: Path) -> None:
    root = python_project(tmp_path / "proj")
    ws = Workspace.open(root)
    server, _ = build_server(lambda ctx: ws, None)
    args = {"pathInProject": "pkg/core.py", "line": 7, "character": 6}
    try:
        first = await call(server, "find_references", args)
        assert not first.is_error
        lsp_server = servers(ws).servers["python"]
        old = lsp_server.pid
        assert old is not None and alive(old)
        os.kill(old, signal.SIGKILL)
        assert not wait_gone({old}), "the killed server is still there"
        again = await call(server, "find_references", args)
        if again.is_error:  # the crash was noticed by this call: it says so, and the next one restarts
            assert "restarts on the next call" in again.content[0].text
            again = await call(server, "find_references", args)
        assert not again.is_error, again.content[0].text
        assert len(flat_references(payload(again))) == len(flat_references(payload(first)))
        assert lsp_server.pid != old
    finally:
        ws.close()


async def test_closing_the_workspace_stops_every_server(tmp_path: Path) -> None:
    root = typescript_project(python_project(tmp_path / "proj"))
    ws = Workspace.open(root)
    server, _ = build_server(lambda ctx: ws, None)
    try:
        for path, line, ch in (("pkg/core.py", 7, 6), ("src/util.ts", 0, 18)):
            result = await call(
                server, "find_references", {"pathInProject": path, "line": line, "character": ch}
            )
            assert not result.is_error, result.content[0].text
        pids = set()
        for lsp_server in servers(ws).servers.values():
            assert lsp_server.pid is not None
            pids |= {lsp_server.pid} | descendants(lsp_server.pid)
        assert len(pids) >= 3  # basedpyright, typescript-language-server, tsserver
    finally:
        ws.close()
    assert not wait_gone(pids, 10), "language servers left running after close"


async def test_killing_the_mcp_server_leaves_no_orphan(tmp_path: Path, stdio_server_params: Any) -> None:
    root = typescript_project(python_project(tmp_path / "proj"))
    marker = str(root)
    lsp_pids: set[int] = set()
    try:
        async with Client(stdio_server_params(root)) as client:
            for path, line, ch in (("pkg/core.py", 7, 6), ("src/util.ts", 0, 18)):
                result = await client.call_tool(
                    "find_references", {"pathInProject": path, "line": line, "character": ch}
                )
                assert not result.is_error, result.content[0].text
            me = os.getpid()
            ours = [
                p
                for p in descendants(me)
                if marker.encode() in _cmdline(p) and b"mcp_server_ide" in _cmdline(p)
            ]
            assert len(ours) == 1, ours
            mcp_pid = ours[0]
            lsp_pids = descendants(mcp_pid)
            assert any(b"langserver.index.js" in _cmdline(p) for p in lsp_pids)
            assert any(b"tsserver" in _cmdline(p) for p in lsp_pids)
            os.kill(mcp_pid, signal.SIGKILL)
            left = wait_gone(lsp_pids, 10)
            assert not left, f"orphaned: {[_cmdline(p)[:120] for p in left]}"
    except (Exception, BaseExceptionGroup) as exc:  # the client notices its server died; that is the point
        if not lsp_pids:
            raise
        assert not isinstance(exc, AssertionError), exc
    assert lsp_pids and not wait_gone(lsp_pids, 1)


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\x00", b" ")
    except OSError:
        return b""


async def test_idle_servers_stop_and_restart_on_demand(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_IDE_LSP_IDLE", "1")
    root = python_project(tmp_path / "proj")
    ws = Workspace.open(root)
    server, _ = build_server(lambda ctx: ws, None)
    args = {"pathInProject": "pkg/core.py", "line": 7, "character": 6}
    try:
        assert not (await call(server, "find_references", args)).is_error
        lsp_server = servers(ws).servers["python"]
        deadline = time.monotonic() + 15  # it may be stopped already: the limit is 1 s
        while lsp_server.running and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not lsp_server.running, "the idle server was not stopped"
        assert servers(ws).stopped_reasons["python"].startswith("idle")
        again = await call(server, "find_references", args)
        assert not again.is_error and "partial" not in payload(again)
    finally:
        ws.close()


async def test_a_server_over_its_memory_cap_is_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_IDE_LSP_MEMORY_MB", "40")
    root = python_project(tmp_path / "proj")
    ws = Workspace.open(root)
    try:
        lsp_server = servers(ws).server_for(root / "pkg/core.py")
        assert lsp_server is not None
        pid = lsp_server.pid
        assert pid is not None
        assert not wait_gone({pid}, 15), "the server over its cap was not stopped"
        reason = servers(ws).stopped_reasons["python"]
        assert "over its 40 MB cap" in reason
        # The next call is told why, and the server starts again.
        assert "cap" in lsp_server.last_error
    finally:
        ws.close()


@pytest.mark.parametrize("trusted", [False, True])
async def test_an_untrusted_workspace_never_runs_its_own_python(tmp_path: Path, trusted: bool) -> None:
    from mcp_server_ide.workspace import Policy

    root = python_project(tmp_path / "proj")
    marker = tmp_path / "venv-python-ran"
    fake = root / ".venv" / "bin" / "python"
    fake.parent.mkdir(parents=True)
    fake.write_text(f'#!/bin/sh\ntouch {marker}\nexec python3 "$@"\n')
    fake.chmod(0o755)
    ws = Workspace.open(root, policy=Policy(trusted=trusted))
    server, _ = build_server(lambda ctx: ws, None)
    try:
        result = await call(
            server, "find_references", {"pathInProject": "pkg/core.py", "line": 7, "character": 6}
        )
        assert not result.is_error, result.content[0].text
    finally:
        ws.close()
    # basedpyright asks the configured interpreter for its search paths: only a trusted workspace's is used.
    assert marker.exists() is trusted


async def test_languages_without_a_server_answer_text_matches_marked_partial(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "go"
    root.mkdir()
    (root / "main.go").write_text(
        "package main\n\nfunc helper() int { return 1 }\n\nfunc main() { helper() }\n"
    )
    (root / "other.go").write_text("package main\n\nvar x = helper()\n")
    (root / "Main.java").write_text("class Main { void run() {} }\n")
    config = tmp_path / "lsp.json"
    # A server named in configuration that is not installed: its language fails clearly, naming it.
    config.write_text('{"servers": {"java": {"command": ["no-such-jdtls"], "extensions": [".java"]}}}')
    monkeypatch.setenv("MCP_IDE_LSP_CONFIG", str(config))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no gopls here, whatever the machine has
    ws = Workspace.open(root)
    server, _ = build_server(lambda ctx: ws, None)
    try:
        result = await call(
            server, "find_references", {"pathInProject": "main.go", "line": 2, "character": 7}
        )
        out = payload(result)
        assert out["partial"] is True and "text matches" in out["reason"]
        assert {(r["path"], r["line"]) for r in flat_references(out)} == {
            ("main.go", 2),
            ("main.go", 4),
            ("other.go", 2),
        }
        result = await call(
            server, "go_to_definition", {"pathInProject": "main.go", "line": 4, "character": 15}
        )
        assert result.is_error and "no language server handles .go files" in result.content[0].text
        result = await call(
            server, "find_references", {"pathInProject": "Main.java", "line": 0, "character": 6}
        )
        assert result.is_error and "no-such-jdtls is not on PATH" in result.content[0].text
    finally:
        ws.close()


def test_a_server_that_is_answering_or_waiting_is_never_idle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watchdog counts a request or a wait in flight as use: with a 0.3 s idle limit, a 2 s wait for
    diagnostics (of a version the server never publishes) keeps its server; once it ends, the idle
    server stops. (It used to stop a server whose first answer took longer than the idle limit.)"""
    from mcp_server_ide.engines.lsp import manager
    from mcp_server_ide.engines.lsp.documents import Document

    monkeypatch.setenv("MCP_IDE_LSP_IDLE", "0.3")
    monkeypatch.setattr(manager, "WATCH_INTERVAL", 0.1)
    root = python_project(tmp_path / "proj")
    ws = Workspace.open(root)
    try:
        lsps = servers(ws)
        server = lsps.server_for(root / "pkg" / "core.py")
        assert server is not None and server.running
        never = Document(uri=(root / "pkg" / "core.py").as_uri(), version=10**9, text="", stamp=(0, 0))
        assert server.wait_diagnostics(never, 2.0) is None
        assert server.running, lsps.stopped_reasons
        pid = server.pid
        assert pid is not None and not wait_gone({pid}, 15), "the idle server was not stopped"
        assert lsps.stopped_reasons["python"].startswith("idle")
    finally:
        ws.close()

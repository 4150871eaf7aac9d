"""The warm-up after ``initialized`` (surface/warmup.py, engines/warmup.py), over real stdio processes.

The server's debug log says what the warm-up did (the files it counted, the grammars it loaded,
the language server that loaded the project) and when it was done, so each test waits for that
line (no sleeps) and then checks what was warmed and that the session's calls are served by it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from mcp_server_ide.engines import warmup
from mcp_server_ide.engines.lsp import servers
from mcp_server_ide.engines.lsp.adapters.typescript import TypeScriptAdapter
from mcp_server_ide.workspace import Workspace

from .support.codeprojects import USERS, python_project
from .support.results import flat_references

DONE = "warm-up: done"
SERVER_LOADED = "basedpyright loaded the project"


class Stdio:
    """A server process spoken to in raw JSON-RPC lines, its log in a file."""

    def __init__(
        self,
        root: Path | None,
        log: Path,
        *args: str,
        cwd: Path | None = None,
        roots: list[Path] | None = None,
    ) -> None:
        self.log = log
        self.roots = roots
        self._stderr = log.open("wb")
        workspace = ["--workspace", str(root)] if root is not None else []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mcp_server_ide", *workspace, "--log-level", "DEBUG", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            cwd=cwd,
        )
        self._guard = threading.Timer(300, self.proc.kill)  # a hung server fails the test, not hangs it
        self._guard.start()
        self._id = 0

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._id += 1
        self.send({"jsonrpc": "2.0", "id": self._id, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            assert line, f"the server closed its output; its log:\n{self.log.read_text()[-3000:]}"
            answer = json.loads(line)
            if answer.get("id") == self._id and "method" not in answer:
                return answer
            if answer.get("method") == "roots/list" and self.roots is not None:
                roots = [{"uri": r.as_uri()} for r in self.roots]
                self.send({"jsonrpc": "2.0", "id": answer["id"], "result": {"roots": roots}})

    def initialize(self, capabilities: dict[str, Any] | None = None) -> None:
        info = {"name": "t", "version": "1"}
        self.request(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": capabilities or {}, "clientInfo": info},
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def warm_log(self, within: float = 240.0) -> str:
        """The log once the warm-up said it was done (polled; fails after ``within`` seconds)."""
        deadline = time.monotonic() + within
        while True:
            self._stderr.flush()
            text = self.log.read_text()
            if DONE in text:
                return text
            assert self.proc.poll() is None, text[-3000:]
            assert time.monotonic() < deadline, f"no warm-up within {within:g} s; the log:\n{text[-3000:]}"
            time.sleep(0.1)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        finally:
            self._guard.cancel()
            self.proc.kill()
            self._stderr.close()


def test_a_python_workspace_gets_its_grammar_and_its_server(ws_path: Path, tmp_path: Path) -> None:
    python_project(ws_path)
    server = Stdio(ws_path, tmp_path / "server.log")
    try:
        server.initialize()
        log = server.warm_log()
        assert "grammars loaded: ['python']" in log
        assert SERVER_LOADED in log
        # The warmed server answers the session's first cross-file query, complete.
        args = {"pathInProject": "pkg/core.py", "line": 7, "character": 6}
        answer = server.request("tools/call", {"name": "find_references", "arguments": args})
        result = answer["result"]
        assert not result.get("isError"), result
        found = json.loads(result["content"][0]["text"])
        assert not found.get("partial") and len(flat_references(found)) >= USERS + 1, found
        outline = server.request(
            "tools/call", {"name": "get_symbols_in_file", "arguments": {"pathInProject": "pkg/core.py"}}
        )
        assert "compute_total" in outline["result"]["content"][0]["text"]
    finally:
        server.close()


@pytest.mark.parametrize("first", ["ping", "tools/call"])
def test_a_client_that_never_says_initialized_is_warmed_at_its_first_request(
    ws_path: Path, tmp_path: Path, first: str
) -> None:
    """The warm-up starts at the first request after ``initialize`` too (a client that skips
    ``notifications/initialized``): one the SDK serves (a ping), or a small read the stdio door's
    direct lane answers without the SDK (``project_fs_list`` of one folder)."""
    python_project(ws_path)
    server = Stdio(ws_path, tmp_path / "server.log", "--untrusted")
    try:
        info = {"name": "t", "version": "1"}
        server.request(
            "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": info}
        )
        if first == "ping":
            assert server.request("ping", {})["result"] == {}
        else:
            answer = server.request("tools/call", {"name": "project_fs_list", "arguments": {"dir": "pkg"}})
            assert "core.py" in answer["result"]["content"][0]["text"]
        log = server.warm_log(within=120)
    finally:
        server.close()
    assert "grammars loaded: ['python']" in log
    assert ("direct lane answered tools/call project_fs_list" in log) == (first == "tools/call")


def test_an_untrusted_workspace_gets_grammars_but_no_server(ws_path: Path, tmp_path: Path) -> None:
    python_project(ws_path)
    server = Stdio(ws_path, tmp_path / "server.log", "--untrusted")
    try:
        server.initialize()
        log = server.warm_log()
    finally:
        server.close()
    assert "grammars loaded: ['python']" in log
    assert SERVER_LOADED not in log


def test_no_server_for_a_language_that_is_not_the_workspaces_own(ws_path: Path, tmp_path: Path) -> None:
    """One helper script among many files of another language starts no language server."""
    for i in range(12):
        (ws_path / f"m{i}.rs").write_text(f"fn f{i}() {{}}\n")
    (ws_path / "script.py").write_text("def main():\n    pass\n")
    server = Stdio(ws_path, tmp_path / "server.log")
    try:
        server.initialize()
        log = server.warm_log()
    finally:
        server.close()
    assert "grammars loaded: ['rust', 'python']" in log
    assert SERVER_LOADED not in log


def test_without_a_workspace_folder_or_roots_no_server_is_started(tmp_path: Path) -> None:
    """No --workspace and a client without roots: the current folder (maybe a home folder) gets
    grammars only."""
    cwd = tmp_path / "cwd"
    python_project(cwd)
    server = Stdio(None, tmp_path / "server.log", cwd=cwd)
    try:
        server.initialize()
        log = server.warm_log()
    finally:
        server.close()
    assert "grammars loaded: ['python']" in log
    assert SERVER_LOADED not in log


def test_without_a_workspace_folder_the_clients_root_is_warmed(ws_path: Path, tmp_path: Path) -> None:
    """No --workspace, a client with roots: the warm-up waits for the root it announces (the
    current folder here is empty), and warms that one."""
    python_project(ws_path)
    cwd = tmp_path / "empty"
    cwd.mkdir()
    server = Stdio(None, tmp_path / "server.log", cwd=cwd, roots=[ws_path])
    try:
        server.initialize({"roots": {"listChanged": True}})
        # The server asks for the roots after initialized; reading the answers to pings answers it.
        while "client roots:" not in server.log.read_text():
            server.request("ping", {})
            time.sleep(0.05)
        log = server.warm_log()
    finally:
        server.close()
    count = len(list(ws_path.rglob("*.py")))
    assert f"files by language {{'python': {count}}}" in log
    assert SERVER_LOADED in log


def test_the_census_skips_what_walks_skip_and_picks_a_large_example(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    for folder in (".git", "node_modules/x", "dist", ".venv/lib", "src/pkg"):
        (root / folder).mkdir(parents=True)
    for folder in (".git", "node_modules/x", "dist", ".venv/lib"):
        (root / folder / "hidden.py").write_text("x = 1\n")
    (root / "src" / "pkg" / "small.py").write_text("x = 1\n")
    (root / "src" / "pkg" / "large.py").write_text("def f():\n    return 1\n" * 50)
    (root / "README.md").write_text("# r\n")
    found = warmup.census(root)
    assert dict(found.counts) == {"python": 2, "markdown": 1}
    assert found.example["python"] == root / "src" / "pkg" / "large.py"
    assert found.source_files() == 2
    assert sum(warmup.census(root, limit=1).counts.values()) == 1


def test_a_warm_up_never_installs_a_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The TypeScript server installs itself on first use; a warm-up is no use, so it starts none."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("MCP_IDE_CACHE", str(cache))
    monkeypatch.delenv("MCP_IDE_TYPESCRIPT_SERVER", raising=False)
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.ts").write_text("export const a = 1;\n")
    ws = Workspace.open(root)
    try:
        assert not TypeScriptAdapter().installed()
        assert servers(ws).warm(root / "a.ts", timeout=5) is None
    finally:
        ws.close()
    assert not cache.exists()

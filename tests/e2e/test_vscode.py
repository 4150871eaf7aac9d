"""VS Code itself as the MCP client: code-server 4.139.1 (= Code 1.139.1) in headless Chromium.

A workspace whose ``.vscode/mcp.json`` is what ``mcp-server-ide config vscode --json`` prints;
``MCP: List Servers`` -> the server -> ``Start Server``; VS Code's own output channel for the
server must report every tool (the count equals ``tools/list``) and no error. Own README command:
``.venv/bin/python -m pytest -m e2e tests/e2e/test_vscode.py``. The first run installs code-server
into the test cache (node 24, ``build-essential pkg-config libkrb5-dev libx11-dev libxkbfile-dev
libsecret-1-dev`` from Debian; ~5 minutes of native builds): :mod:`tests.support.codeserver`.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.browser import artifact
from tests.support.codeserver import workbench

pytestmark = pytest.mark.e2e


def tools_list_count(ws: Path) -> int:
    import anyio
    from mcp import Client

    from tests.support.servers import stdio_params

    async def count() -> int:
        async with Client(stdio_params(ws), mode="legacy") as client:
            return len((await client.list_tools()).tools)

    return anyio.run(count)


def test_vscode_starts_the_server_and_discovers_every_tool(ws_path: Path, tmp_path: Path) -> None:
    (ws_path / "hello.py").write_text("print('hi')\n")
    config = subprocess.run([sys.executable, "-m", "mcp_server_ide", "config", "vscode", "--json"], cwd=ws_path,
                            capture_output=True, text=True, check=True).stdout  # fmt: skip
    (ws_path / ".vscode").mkdir()
    (ws_path / ".vscode" / "mcp.json").write_text(config)
    expected = tools_list_count(ws_path)
    with workbench(ws_path, tmp_path) as bench:
        time.sleep(3)
        bench.start_mcp_server("ide")
        text = bench.mcp_output("ide", "vscode-mcp-output.png")
        found = re.search(r"Discovered (\d+) tools", text)
        assert found, text[-3000:]
        assert int(found.group(1)) == expected
        assert "Connection state: Running" in text
        assert "[error]" not in text.lower(), text[-3000:]
        bench.command("MCP: Browse Resources")
        time.sleep(2)
        bench.page.screenshot(path=str(artifact("vscode-mcp-resources.png")))
        rows = bench.page.locator(".quick-input-list .monaco-list-row").all_inner_texts()
        if len(rows) == 1 and "ide" in rows[0]:
            bench.pick("ide")
            rows = bench.page.locator(".quick-input-list .monaco-list-row").all_inner_texts()
        joined = "\n".join(rows)
        assert "hello.py" in joined or "git-status" in joined or "Git status" in joined, joined


def _rest(port: int, tool: str, **args: object) -> object:
    import httpx

    answer = httpx.post(f"http://127.0.0.1:{port}/mcp/{tool}", json=args, timeout=30).json()
    assert answer["error"] is None, answer
    return answer["status"]


def test_the_extension_registers_the_server_and_bridges_the_editor(ws_path: Path, tmp_path: Path) -> None:
    """The companion extension (extension/), built into a .vsix and installed with --install-extension:
    with no mcp.json, MCP: List Servers shows its server, which starts and reports every tool; its HTTP
    server (port in the status bar, 9960-9990) answers the editor tools from this VS Code: the file
    opened in the page, the selection made there, an edit Ctrl+Z undoes, a breakpoint set with F9."""
    from tests.support.extension import build_vsix

    hello = ws_path / "hello.py"
    hello.write_text("print('hi')\nx = 1\n")
    vsix = build_vsix(tmp_path / "mcp-server-ide.vsix")
    settings = {
        # This interpreter (the console script's shebang may name another checkout's venv).
        "mcpServerIde.server.command": sys.executable,
        "mcpServerIde.server.args": ["-m", "mcp_server_ide"],
        "debug.allowBreakpointsEverywhere": True,  # no Python debugger extension is installed here
    }
    assert not (ws_path / ".vscode").exists()
    expected = tools_list_count(ws_path)
    bench = None
    try:
        with workbench(ws_path, tmp_path, settings, vsix) as bench:
            page = bench.page
            # The status bar shows the HTTP server's port once it listens.
            http_port = bench.status_port()
            assert 9960 <= http_port <= 9990

            bench.command("MCP: List Servers")
            page.screenshot(path=str(artifact("vscode-ext-servers.png")))
            bench.pick("mcp-server-ide")
            bench.pick("Start Server")
            time.sleep(8)
            text = bench.mcp_output("mcp-server-ide", "vscode-ext-mcp-output.png")
            found = re.search(r"Discovered (\d+) tools", text)
            assert found, text[-3000:]
            assert int(found.group(1)) == expected
            assert "Connection state: Running" in text

            # The bridge: open hello.py in the page (the Explorer), select its first line.
            page.locator(".explorer-folders-view .monaco-list-row", has_text="hello.py").first.click()
            page.locator(".monaco-editor .view-lines", has_text="print").first.wait_for()
            time.sleep(1)
            page.screenshot(path=str(artifact("vscode-ext-opened.png")))
            assert _rest(http_port, "get_open_in_editor_file_path") == str(hello.resolve())
            page.locator(".monaco-editor .view-lines").first.click()
            page.keyboard.press("Control+Home")
            page.keyboard.press("Shift+End")
            time.sleep(0.5)
            assert _rest(http_port, "get_selected_in_editor_text") == "print('hi')"

            _rest(http_port, "replace_selected_text", text="print('bridged')")
            time.sleep(1)
            page.screenshot(path=str(artifact("vscode-ext-replaced.png")))
            assert "print('bridged')" in bench.editor_text()
            assert hello.read_text() == "print('bridged')\nx = 1\n"  # the clean file was saved after the edit
            page.locator(".monaco-editor .view-lines").first.click()
            page.keyboard.press("Control+Z")
            time.sleep(1)
            assert (
                _rest(http_port, "get_open_in_editor_file_text") == "print('hi')\nx = 1\n"
            )  # undone in VS Code

            page.keyboard.press("Control+End")
            page.keyboard.press("ArrowUp")  # line 2 ("x = 1")
            page.keyboard.press("F9")
            time.sleep(1)
            listed = json.dumps(_rest(http_port, "get_debugger_breakpoints")).replace(" ", "")
            assert '"line":2' in listed, listed  # set in the page, listed by the tool
            _rest(http_port, "toggle_debugger_breakpoint", pathInProject="hello.py", line=1)
            bench.command("View: Show Run and Debug")
            time.sleep(2)
            page.screenshot(path=str(artifact("vscode-ext-breakpoints.png")))
            view = page.locator(".debug-breakpoints").first.inner_text()
            assert view.count("hello.py") == 2, view  # the tool's breakpoint is VS Code's own
    finally:
        for log in bench.extension_logs() if bench else []:
            artifact("vscode-ext-log.txt").write_text(log.read_text(errors="replace"))

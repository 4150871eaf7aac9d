"""VS Code itself as the MCP client: code-server 4.139.1 (= Code 1.139.1) in headless Chromium.

A workspace whose ``.vscode/mcp.json`` is what ``mcp-server-ide config vscode --json`` prints;
``MCP: List Servers`` -> the server -> ``Start Server``; VS Code's own output channel for the
server must report every tool (the count equals ``tools/list``) and no error. Own README command:
``.venv/bin/python -m pytest -m e2e tests/e2e/test_vscode.py``. The first run installs code-server
into the test cache (node 24, ``build-essential pkg-config libkrb5-dev libx11-dev libxkbfile-dev
libsecret-1-dev`` from Debian; ~5 minutes of native builds).
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.browser import artifact, chromium_page
from tests.support.npm import cache_dir, node

pytestmark = pytest.mark.e2e

VERSION = "4.139.1"


def code_server() -> Path:
    """Install code-server once into the cache (npm + its postinstall native build)."""
    folder = cache_dir() / f"code-server-{VERSION}"
    entry = folder / "node_modules" / "code-server" / "out" / "node" / "entry.js"
    marker = folder / ".built"
    if marker.exists() and entry.exists():
        return entry
    node24 = node(24)
    env = dict(os.environ, PATH=f"{node24.parent}{os.pathsep}{os.environ['PATH']}")
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", f"code-server@{VERSION}"],
                   cwd=folder, env=env, check=True, timeout=1200, stdin=subprocess.DEVNULL)  # fmt: skip
    subprocess.run(["sh", "./postinstall.sh"], cwd=entry.parents[2], check=True, timeout=1800, stdin=subprocess.DEVNULL,
                   env=dict(env, npm_config_user_agent="npm/11 node/v24 linux x64"))  # fmt: skip
    marker.write_text(VERSION)
    return entry


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tools_list_count(ws: Path) -> int:
    import anyio
    from mcp import Client

    from tests.support.servers import stdio_params

    async def count() -> int:
        async with Client(stdio_params(ws), mode="legacy") as client:
            return len((await client.list_tools()).tools)

    return anyio.run(count)


def test_vscode_starts_the_server_and_discovers_every_tool(ws_path: Path, tmp_path: Path) -> None:
    entry = code_server()
    (ws_path / "hello.py").write_text("print('hi')\n")
    config = subprocess.run([sys.executable, "-m", "mcp_server_ide", "config", "vscode", "--json"], cwd=ws_path,
                            capture_output=True, text=True, check=True).stdout  # fmt: skip
    (ws_path / ".vscode").mkdir()
    (ws_path / ".vscode" / "mcp.json").write_text(config)
    user = tmp_path / "user"
    (user / "User").mkdir(parents=True)
    (user / "User" / "settings.json").write_text(
        json.dumps(
            {
                "security.workspace.trust.enabled": False,
                "workbench.startupEditor": "none",
                "chat.mcp.autostart": "never",
            }
        )
    )
    port = free_port()
    env = dict(os.environ, PATH=f"{node(24).parent}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.Popen(
        [str(node(24)), str(entry), "--auth", "none", "--bind-addr", f"127.0.0.1:{port}", "--disable-telemetry",
         "--disable-update-check", "--extensions-dir", str(tmp_path / "ext"), "--user-data-dir", str(user), str(ws_path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, env=env, start_new_session=True,
    )  # fmt: skip
    expected = tools_list_count(ws_path)
    try:
        with chromium_page(tmp_path / "chrome") as page:
            page.set_default_timeout(60_000)
            deadline = time.monotonic() + 60
            while True:
                try:
                    page.goto(f"http://127.0.0.1:{port}/?folder={ws_path}")
                    break
                except Exception:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(1)
            page.wait_for_selector(".monaco-workbench")
            time.sleep(3)

            def command(text: str) -> None:
                page.keyboard.press("F1")
                page.wait_for_selector(".quick-input-widget input")
                page.keyboard.type(text)
                time.sleep(1)
                page.keyboard.press("Enter")
                time.sleep(1.5)

            def pick(label: str) -> None:
                page.locator(".quick-input-list .monaco-list-row", has_text=label).first.click()
                time.sleep(1.5)

            command("MCP: List Servers")
            pick("ide")
            pick("Start Server")
            time.sleep(8)
            command("MCP: List Servers")
            pick("ide")
            pick("Show Output")
            time.sleep(3)
            page.screenshot(path=str(artifact("vscode-mcp-output.png")))
            text = page.locator(".output-view, .output").first.inner_text().replace("\xa0", " ")
            found = re.search(r"Discovered (\d+) tools", text)
            assert found, text[-3000:]
            assert int(found.group(1)) == expected
            assert "Connection state: Running" in text
            assert "[error]" not in text.lower(), text[-3000:]
            command("MCP: Browse Resources")
            time.sleep(2)
            page.screenshot(path=str(artifact("vscode-mcp-resources.png")))
            rows = page.locator(".quick-input-list .monaco-list-row").all_inner_texts()
            if len(rows) == 1 and "ide" in rows[0]:
                pick("ide")
                rows = page.locator(".quick-input-list .monaco-list-row").all_inner_texts()
            joined = "\n".join(rows)
            assert "hello.py" in joined or "git-status" in joined or "Git status" in joined, joined
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(10)

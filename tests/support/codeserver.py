"""A real VS Code for the end-to-end tests: code-server 4.139.1 (= Code 1.139.1) in headless Chromium.

:func:`code_server` installs it once into the test cache (node 24 and its native build, ~5 minutes
the first time); :func:`workbench` starts it on a free loopback port with a user settings file
(and extensions installed first, a ``.vsix`` among them), opens the workspace in a page and hands
back a :class:`Workbench` that types commands the way a person does (F1, a command, Enter) and
reads the page.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .browser import artifact, chromium_page
from .net import free_port
from .npm import cache_dir, node

VERSION = "4.139.1"
#: What every e2e starts from: no trust prompt, no welcome page, no server started on its own.
BASE_SETTINGS: dict[str, object] = {
    "security.workspace.trust.enabled": False,
    "workbench.startupEditor": "none",
    "chat.mcp.autostart": "never",
}


def code_server() -> Path:
    """Install code-server once into the cache (npm + its postinstall native build); its entry.js."""
    folder = cache_dir() / f"code-server-{VERSION}"
    entry = folder / "node_modules" / "code-server" / "out" / "node" / "entry.js"
    marker = folder / ".built"
    if marker.exists() and entry.exists():
        return entry
    env = _env()
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", f"code-server@{VERSION}"],
                   cwd=folder, env=env, check=True, timeout=1200, stdin=subprocess.DEVNULL)  # fmt: skip
    subprocess.run(["sh", "./postinstall.sh"], cwd=entry.parents[2], check=True, timeout=1800, stdin=subprocess.DEVNULL,
                   env=dict(env, npm_config_user_agent="npm/11 node/v24 linux x64"))  # fmt: skip
    marker.write_text(VERSION)
    return entry


def _env() -> dict[str, str]:
    return dict(os.environ, PATH=f"{node(24).parent}{os.pathsep}{os.environ['PATH']}")


@dataclass
class Workbench:
    """An open code-server page, driven through the keyboard and the quick pick like a person."""

    page: Any
    user: Path

    def command(self, text: str) -> None:
        """F1, type ``text``, Enter (a command palette entry)."""
        self.page.keyboard.press("F1")
        self.page.wait_for_selector(".quick-input-widget input")
        self.page.keyboard.type(text)
        time.sleep(1)
        self.page.keyboard.press("Enter")
        time.sleep(1.5)

    def pick(self, label: str) -> None:
        """Click the first quick pick row that shows ``label``."""
        self.page.locator(".quick-input-list .monaco-list-row", has_text=label).first.click()
        time.sleep(1.5)

    def start_mcp_server(self, name: str) -> None:
        """MCP: List Servers -> ``name`` -> Start Server, then give it time to list its tools."""
        self.command("MCP: List Servers")
        self.pick(name)
        self.pick("Start Server")
        time.sleep(8)

    def mcp_output(self, name: str, shot: str) -> str:
        """The text of VS Code's output channel for MCP server ``name`` (screenshot ``shot``)."""
        self.command("MCP: List Servers")
        self.pick(name)
        self.pick("Show Output")
        time.sleep(3)
        self.page.screenshot(path=str(artifact(shot)))
        return self.page.locator(".output-view, .output").first.inner_text().replace("\xa0", " ")

    def status_port(self) -> int:
        """The extension's HTTP port, read from its status bar item (``MCP IDE :PORT``)."""
        item = self.page.locator(".statusbar-item", has_text="MCP IDE :").first
        item.wait_for()
        found = re.search(r"MCP IDE :(\d+)", item.inner_text())
        assert found, item.inner_text()
        return int(found.group(1))

    def editor_text(self) -> str:
        """The visible lines of the first editor."""
        return self.page.locator(".monaco-editor .view-lines").first.inner_text().replace("\xa0", " ")

    def extension_logs(self) -> list[Path]:
        """The companion extension's log files of this run."""
        return sorted((self.user / "logs").glob("*/exthost*/mcp-server-ide.mcp-server-ide/*.log"))


def install_extension(entry: Path, vsix: Path, extensions: Path, user: Path) -> None:
    """``code-server --install-extension vsix`` into ``extensions`` (as a person installs a .vsix)."""
    subprocess.run([str(node(24)), str(entry), "--extensions-dir", str(extensions), "--user-data-dir", str(user),
                    "--install-extension", str(vsix)], env=_env(), check=True, timeout=120, capture_output=True)  # fmt: skip


@contextmanager
def workbench(
    ws: Path, tmp: Path, settings: dict[str, object] | None = None, vsix: Path | None = None
) -> Iterator[Workbench]:
    """code-server on ``ws`` with :data:`BASE_SETTINGS` plus ``settings`` (and ``vsix`` installed),
    its page open in headless Chromium once the workbench shows; stopped (its whole process group)
    on exit."""
    entry = code_server()
    user, extensions = tmp / "user", tmp / "ext"
    (user / "User").mkdir(parents=True, exist_ok=True)
    if vsix is not None:
        install_extension(entry, vsix, extensions, user)
    (user / "User" / "settings.json").write_text(json.dumps({**BASE_SETTINGS, **(settings or {})}))
    port = free_port()
    proc = subprocess.Popen(
        [str(node(24)), str(entry), "--auth", "none", "--bind-addr", f"127.0.0.1:{port}", "--disable-telemetry",
         "--disable-update-check", "--extensions-dir", str(extensions), "--user-data-dir", str(user), str(ws)],
        stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, env=_env(), start_new_session=True,
    )  # fmt: skip
    try:
        with chromium_page(tmp / "chrome") as page:
            page.set_default_timeout(60_000)
            deadline = time.monotonic() + 60
            while True:
                try:
                    page.goto(f"http://127.0.0.1:{port}/?folder={ws}")
                    break
                except Exception:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(1)
            page.wait_for_selector(".monaco-workbench")
            yield Workbench(page, user)
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(10)

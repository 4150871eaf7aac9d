"""The companion extension's set-up in a real VS Code (code-server 4.139.1 in headless Chromium).

- With no ``mcpServerIde.server.command``, no Python extension (code-server has none) and no
  ``mcp-server-ide`` on ``PATH``, the extension installs the wheel its ``.vsix`` ships into its global
  storage (a venv, ``pip install``; dependencies from the package index) with a progress notification,
  and the servers it starts are that install's.
- The extension host killed (as a crash does) while its HTTP server runs: the server outlives it, the
  next tool call answers from the headless model with no error, and once VS Code has a new extension
  host the server is back on the live editor (same socket path and token).
- A setting changed in the Settings editor restarts the servers with the new options.

Own README command: ``.venv/bin/python -m pytest -m e2e tests/e2e/test_vscode_setup.py`` (the install
test takes a few minutes: pip downloads the server's dependencies).
"""

from __future__ import annotations

import os
import re
import signal
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.support.browser import artifact
from tests.support.codeserver import workbench

pytestmark = pytest.mark.e2e


def _rest(port: int, tool: str, **args: object) -> object:
    answer = httpx.post(f"http://127.0.0.1:{port}/mcp/{tool}", json=args, timeout=60).json()
    assert answer["error"] is None, answer
    return answer["status"]


def _processes() -> dict[int, tuple[int, list[str]]]:
    """Every process: pid -> (parent pid, argv)."""
    found: dict[int, tuple[int, list[str]]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
            ppid = int(re.search(r"^PPid:\s+(\d+)", (entry / "status").read_text(), re.M)[1])  # type: ignore[index]
        except (OSError, TypeError):
            continue
        found[int(entry.name)] = (ppid, argv)
    return found


def _servers(ws: Path) -> dict[int, tuple[int, list[str]]]:
    """This workspace's mcp-server-ide processes (started by the extension or VS Code)."""
    return {
        pid: (ppid, argv)
        for pid, (ppid, argv) in _processes().items()
        if any("mcp_server_ide" in a or a.endswith("mcp-server-ide") for a in argv[:3]) and str(ws) in argv
    }


def _wait_status_port(bench, timeout_s: float) -> int:
    item = bench.page.locator(".statusbar-item", has_text="MCP IDE :").first
    item.wait_for(timeout=timeout_s * 1000)
    found = re.search(r"MCP IDE :(\d+)", item.inner_text())
    assert found, item.inner_text()
    return int(found.group(1))


@pytest.mark.timeout(1500)  # pip fetches and installs the dependencies: minutes on a loaded machine
def test_with_no_server_found_the_extension_installs_its_wheel_and_starts_it(
    ws_path: Path, tmp_path: Path
) -> None:
    from tests.support.extension import build_vsix

    (ws_path / "hello.py").write_text("print('hi')\n")
    vsix = build_vsix(tmp_path / "mcp-server-ide.vsix")
    # code-server's environment is this one: make sure nothing on its PATH is the server.
    path = os.environ.get("PATH", "")
    assert not any(Path(d, "mcp-server-ide").exists() for d in path.split(os.pathsep) if d), path
    bench = None
    try:
        with workbench(ws_path, tmp_path, {}, vsix) as bench:
            page = bench.page
            page.locator(
                ".notifications-toasts, .notification-toast", has_text="installing the server"
            ).first.wait_for(timeout=120_000)
            page.screenshot(path=str(artifact("vscode-setup-installing.png")))
            port = _wait_status_port(
                bench, 900
            )  # pip downloads the dependencies: minutes on a loaded machine
            assert 9960 <= port <= 9990
            storage = (
                tmp_path / "user" / "User" / "globalStorage" / "mcp-server-ide.mcp-server-ide" / "server"
            )
            (installed,) = storage.glob("mcp_server_ide-*/installed")
            python = installed.parent / "venv" / "bin" / "python"
            http_servers = [argv for _, argv in _servers(ws_path).values() if "--http" in argv]
            assert http_servers and all(argv[0] == str(python) for argv in http_servers), http_servers
            assert "hello.py" in str(_rest(port, "find_files_by_name_substring", nameSubstring="hello"))

            bench.start_mcp_server("mcp-server-ide")  # VS Code's own stdio server: the same install
            text = bench.mcp_output("mcp-server-ide", "vscode-setup-mcp-output.png")
            assert re.search(r"Discovered \d+ tools", text), text[-3000:]
            assert str(python) in " ".join(" ".join(argv) for _, argv in _servers(ws_path).values())
    finally:
        for log in bench.extension_logs() if bench else []:
            artifact("vscode-setup-install-log.txt").write_text(log.read_text(errors="replace"))


@pytest.mark.timeout(900)
def test_a_killed_extension_host_leaves_the_server_answering_headless_then_live_again(
    ws_path: Path, tmp_path: Path
) -> None:
    from tests.support.extension import build_vsix

    hello = ws_path / "hello.py"
    hello.write_text("print('hi')\n")
    vsix = build_vsix(tmp_path / "mcp-server-ide.vsix")
    settings = {
        "mcpServerIde.server.command": sys.executable,
        "mcpServerIde.server.args": ["-m", "mcp_server_ide"],
    }
    bench = None
    try:
        with workbench(ws_path, tmp_path, settings, vsix) as bench:
            page = bench.page
            port = _wait_status_port(bench, 120)
            page.locator(".explorer-folders-view .monaco-list-row", has_text="hello.py").first.click()
            page.locator(".monaco-editor .view-lines", has_text="print").first.wait_for()
            deadline = time.monotonic() + 30
            while _rest(port, "get_open_in_editor_file_path") != str(hello.resolve()):
                assert time.monotonic() < deadline, "the server never saw the editor"
                time.sleep(0.5)

            (http_pid,) = [pid for pid, (_, argv) in _servers(ws_path).items() if "--http" in argv]
            host_pid, _ = _servers(ws_path)[http_pid]
            host_argv = _processes()[host_pid][1]
            assert any("extensionHost" in a for a in host_argv), host_argv
            os.kill(host_pid, signal.SIGKILL)

            started = time.monotonic()
            headless = _rest(port, "get_open_in_editor_file_path")
            took = time.monotonic() - started
            artifact("vscode-setup-killed-host.txt").write_text(
                f"extension host {host_pid} killed; first call answered {headless!r} in {took:.3f} s\n"
            )
            assert headless == ""  # the headless model has nothing open: no error
            assert took < 10, took  # the bridge's deadline is 1 s; a dead socket fails at once
            assert http_pid in _servers(ws_path)  # the HTTP server outlived the extension host
            page.screenshot(path=str(artifact("vscode-setup-killed-host.png")))

            # VS Code gets a new extension host (on its own after a crash, else the person's command).
            deadline = time.monotonic() + 60
            while not [p for p, (pp, _) in _servers(ws_path).items() if pp != host_pid and p != http_pid]:
                if time.monotonic() > deadline - 30:
                    bench.command("Developer: Restart Extension Host")
                assert time.monotonic() < deadline, "no new extension host started a server"
                time.sleep(2)
            page.locator(".monaco-editor .view-lines").first.click()
            deadline = time.monotonic() + 60
            while _rest(port, "get_open_in_editor_file_path") != str(hello.resolve()):
                assert time.monotonic() < deadline, (
                    "the old server did not reconnect to the new extension host"
                )
                time.sleep(1)
    finally:
        for log in bench.extension_logs() if bench else []:
            artifact("vscode-setup-killed-host-log.txt").write_text(log.read_text(errors="replace"))


@pytest.mark.timeout(900)
def test_changed_settings_restart_the_servers_with_the_new_options(ws_path: Path, tmp_path: Path) -> None:
    """readOnly ticked in the Settings editor: the HTTP server restarts with --read-only, and the provider's
    onDidChangeMcpServerDefinitions fires: VS Code stops its stdio server of the old definition, and
    its next start has --read-only too."""
    from tests.support.extension import build_vsix

    vsix = build_vsix(tmp_path / "mcp-server-ide.vsix")
    settings: dict[str, object] = {
        "mcpServerIde.server.command": sys.executable,
        "mcpServerIde.server.args": ["-m", "mcp_server_ide"],
    }
    bench = None
    try:
        with workbench(ws_path, tmp_path, settings, vsix) as bench:
            _wait_status_port(bench, 120)
            bench.start_mcp_server("mcp-server-ide")
            before = _servers(ws_path)
            stdio_before = [pid for pid, (_, argv) in before.items() if "--http" not in argv]
            assert stdio_before, before
            # As a person does: the Settings editor (a write to settings.json is not picked up here).
            page = bench.page
            bench.command("Preferences: Open User Settings")
            time.sleep(2)

            def search(text: str) -> None:  # the search box has the focus in a fresh Settings editor
                page.locator(".settings-header .monaco-editor").first.click()
                page.keyboard.press("Control+A")
                page.keyboard.type(text)
                time.sleep(3)

            search("mcpServerIde.readOnly")
            page.locator(".setting-item-bool .setting-value-checkbox").first.click()
            time.sleep(1)
            page.screenshot(path=str(artifact("vscode-setup-settings-ui.png")))
            deadline = time.monotonic() + 120
            seen: dict[int, tuple[int, list[str]]] = {}
            while time.monotonic() < deadline:
                seen = _servers(ws_path)
                if any("--http" in argv and "--read-only" in argv for _, argv in seen.values()):
                    break
                time.sleep(2)
            http_after = [argv for _, argv in seen.values() if "--http" in argv]
            assert http_after and all("--read-only" in a for a in http_after), http_after
            # VS Code stops its stdio server, whose definition changed; its next start has the new options.
            deadline = time.monotonic() + 60
            while any(pid in _servers(ws_path) for pid in stdio_before):
                assert time.monotonic() < deadline, "VS Code kept the server of the old definition running"
                time.sleep(2)
            page.keyboard.press("Escape")
            page.keyboard.press("Control+W")  # close the Settings editor (the command palette works again)
            time.sleep(1)
            bench.start_mcp_server("mcp-server-ide")
            deadline = time.monotonic() + 60
            while True:
                seen = _servers(ws_path)
                stdio_after = [argv for _, argv in seen.values() if "--http" not in argv]
                if stdio_after:
                    break
                assert time.monotonic() < deadline, "the server did not start again"
                time.sleep(2)
            artifact("vscode-setup-settings.txt").write_text(
                "before:\n" + "\n".join(" ".join(a) for _, a in before.values())
                + "\nafter:\n" + "\n".join(" ".join(a) for _, a in seen.values()) + "\n"
            )  # fmt: skip
            assert all("--read-only" in a for a in stdio_after), stdio_after
    finally:
        for log in bench.extension_logs() if bench else []:
            artifact("vscode-setup-settings-log.txt").write_text(log.read_text(errors="replace"))

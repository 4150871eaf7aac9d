"""VS Code's tasks, launch configurations, commands, running work and extensions through the bridge
(engines/actions/vscode.py), against the extension's real bridge server (extension/src/protocol.ts)
on a real Unix socket, with extension/test/actions-peer.ts standing in for VS Code (it answers as
src/actions.ts does, with the real deny list): VS Code cannot run in the default suite; the real
proof is tests/e2e/test_vscode_actions.py. The server is a real process, reached through its REST door.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from mcp_server_ide.engines.editor.channel import Address, Channel
from tests.support.apps_host import ESBUILD_VERSION
from tests.support.extension import EXTENSION
from tests.support.npm import node, npm_bin

TOKEN = "d" * 64


@pytest.fixture(scope="module")
def peer_js(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("actions-peer") / "actions-peer.js"
    esbuild = npm_bin("esbuild", ESBUILD_VERSION, "esbuild")
    subprocess.run([str(esbuild), "test/actions-peer.ts", "--bundle", "--platform=node", "--format=cjs",
                    f"--outfile={out}", "--log-level=warning"], cwd=EXTENSION, check=True, timeout=120)  # fmt: skip
    return out


class Peer:
    def __init__(self, proc: subprocess.Popen[str], socket_path: Path) -> None:
        self.proc, self.socket_path = proc, socket_path

    def call(self, method: str, params: dict[str, object] | None = None) -> object:
        return Channel(Address(str(self.socket_path), TOKEN), timeout=10).call(method, params or {})

    def ran(self) -> list[str]:
        return self.call("peer.ran")["ran"]  # type: ignore[index]


@pytest.fixture
def peer(peer_js: Path, ws_path: Path) -> Iterator[Peer]:
    folder = Path(tempfile.mkdtemp(prefix="bridge-"))  # short: a socket path must fit in 108 bytes
    os.chmod(folder, 0o700)
    sock = folder / "bridge.sock"
    proc = subprocess.Popen([str(node()), str(peer_js), str(sock)], stdout=subprocess.PIPE, text=True,
                            env=dict(os.environ, PEER_TOKEN=TOKEN, PEER_WS=str(ws_path.resolve())))  # fmt: skip
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    yield Peer(proc, sock)
    proc.kill()
    proc.wait(5)
    subprocess.run(["rm", "-rf", str(folder)], check=False)


def bridge_env(peer: Peer) -> dict[str, str]:
    return {"MCP_IDE_BRIDGE_SOCKET": str(peer.socket_path), "MCP_IDE_BRIDGE_TOKEN": TOKEN}


def answer(server, tool: str, **args: object) -> dict:
    return httpx.post(f"{server.url}/mcp/{tool}", json=args, timeout=60).json()


def call(server, tool: str, **args: object) -> object:
    got = answer(server, tool, **args)
    assert got["error"] is None, got
    return got["status"]


def workspace_with_a_task(ws: Path) -> None:
    (ws / ".vscode").mkdir()
    (ws / ".vscode" / "tasks.json").write_text(
        json.dumps(
            {"version": "2.0.0", "tasks": [{"label": "echo marker", "type": "shell", "command": "echo hi"}]}
        )
    )


def wait_for_end(server, job_id: str) -> dict:
    deadline = time.monotonic() + 60
    while True:
        out = call(server, "get_job_output", jobId=job_id, waitMs=2000)
        assert isinstance(out, dict)
        if out["state"] != "running":
            return out
        assert time.monotonic() < deadline, out


def test_vscodes_run_configurations_are_listed_with_the_servers_and_a_task_runs_there_to_its_exit_code(
    http_server, ws_path: Path, peer: Peer
) -> None:
    workspace_with_a_task(ws_path)
    server = http_server(ws_path, env=bridge_env(peer))
    # tasks.json's task once (VS Code offers it too), then what only VS Code's providers offer; a task of
    # a folder this server does not serve is left out.
    assert call(server, "get_run_configurations") == ["echo marker", "npm: build", "Launch app"]
    text = call(server, "run_configuration", configName="npm: build")
    assert isinstance(text, str) and text.startswith("Run configuration started in VS Code (jobId: job-"), (
        text
    )
    job_id = text.split("jobId: ")[1].split(";")[0]
    assert peer.ran() == ["npm: build"]
    progress = json.dumps(call(server, "get_progress_indicators"))
    assert "npm: build" in progress and job_id in progress  # VS Code's running task, with its job
    peer.call("peer.end")  # the task's process ends in VS Code
    out = wait_for_end(server, job_id)
    assert out["state"] == "exited" and out["exitCode"] == 3, out  # onDidEndTaskProcess's exit code
    assert "VS Code's terminal" in out["output"]


def test_an_untrusted_workspace_runs_nothing_the_person_refuses_or_does_not_answer(
    http_server, ws_path: Path, peer: Peer
) -> None:
    workspace_with_a_task(ws_path)
    server = http_server(ws_path, "--untrusted", env=bridge_env(peer))
    peer.call("peer.set", {"consent": "no"})
    got = answer(server, "run_configuration", configName="echo marker")
    assert got["status"] is None and "refused: the person declined" in got["error"], got
    peer.call("peer.set", {"consent": "timeout"})
    got = answer(server, "run_configuration", configName="echo marker")
    assert "did not answer" in got["error"] and "nothing ran" in got["error"], got
    assert peer.ran() == []  # nothing ran, and VS Code asked both times
    assert peer.call("peer.ran")["asked"] == 2  # type: ignore[index]
    peer.call("peer.set", {"consent": "yes", "exitCode": 0})
    text = call(server, "run_configuration", configName="echo marker")
    assert "started in VS Code" in str(text)
    assert peer.ran() == ["echo marker"]


def test_vscodes_commands_are_listed_paged_and_run_and_dangerous_ones_refused(
    http_server, ws_path: Path, peer: Peer
) -> None:
    (ws_path / ".vscode").mkdir()
    (ws_path / ".vscode" / "extensions.json").write_text('{"recommendations": ["ms-python.python"]}')
    server = http_server(ws_path, env=bridge_env(peer))
    found = call(server, "get_project_modules")  # recommended and installed extensions side by side
    assert isinstance(found, dict)
    assert found["extensions"] == ["ms-python.python"]
    assert found["vscodeExtensions"] == {
        "installed": ["ms-python.python@2026.1.0"],
        "builtin": ["vscode.git"],
    }
    listed = call(server, "list_available_actions")
    assert {"id": "mcpServerIde.restart", "text": "MCP Server IDE: Restart"} in listed  # type: ignore[operator]
    assert call(server, "list_available_actions", query="UNTITLED") == [
        {"id": "workbench.action.files.newUntitledFile", "text": ""}
    ]
    assert len(call(server, "list_available_actions", limit=1)) == 1  # type: ignore[arg-type]
    assert call(server, "execute_action_by_id", actionId="workbench.action.files.newUntitledFile") == (
        '{"opened":"Untitled-1"}'
    )
    got = answer(server, "execute_action_by_id", actionId="workbench.action.quit")
    assert got["status"] is None and "mcpServerIde.actions.allow" in got["error"], got
    assert peer.ran() == ["workbench.action.files.newUntitledFile"]


def test_without_vscode_the_servers_own_answers_stay(http_server, ws_path: Path, peer: Peer) -> None:
    workspace_with_a_task(ws_path)
    server = http_server(ws_path, env=bridge_env(peer))
    peer.proc.kill()
    peer.proc.wait(5)
    assert call(server, "get_run_configurations") == ["echo marker"]
    assert "vscodeExtensions" not in call(server, "get_project_modules")  # type: ignore[operator]
    text = str(call(server, "run_configuration", configName="echo marker"))
    assert text.startswith("Run configuration started (jobId: "), text  # a job of this server

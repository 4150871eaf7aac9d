"""VS Code's commands, tasks and Restricted Mode through the companion extension, in a real VS Code
(code-server 4.139.1 in headless Chromium, the ``.vsix`` installed with ``--install-extension``).

- ``execute_action_by_id("workbench.action.files.newUntitledFile")`` opens an editor in the page;
  ``run_configuration`` of a ``.vscode/tasks.json`` shell task shows its output in VS Code's terminal
  (read from the page's xterm rows) and its job ends with the task's exit code; ``cancel_job`` stops
  a running task; a launch configuration runs through VS Code's debugger.
- In a workspace VS Code does not trust (Workspace Trust on, a folder it has not been told to trust), a task
  runs only after the person consents in VS Code's modal: "Cancel" -> the tool says refused and
  nothing ran; "Run" -> it runs.

Own README command: ``.venv/bin/python -m pytest -m e2e tests/e2e/test_vscode_actions.py``.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.browser import artifact
from tests.support.codeserver import workbench

pytestmark = pytest.mark.e2e

SETTINGS: dict[str, object] = {
    # This interpreter (the console script's shebang may name another checkout's venv).
    "mcpServerIde.server.command": sys.executable,
    "mcpServerIde.server.args": ["-m", "mcp_server_ide"],
    "terminal.integrated.gpuAcceleration": "off",  # the DOM renderer: the terminal's rows are in the page
    "debug.saveBeforeStart": "none",  # else starting a launch configuration asks where to save Untitled-1
}


@pytest.fixture(scope="module")
def vsix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.support.extension import build_vsix

    return build_vsix(tmp_path_factory.mktemp("vsix") / "mcp-server-ide.vsix")


def _post(port: int, tool: str, **args: object) -> dict[str, Any]:
    return httpx.post(f"http://127.0.0.1:{port}/mcp/{tool}", json=args, timeout=150).json()


def _rest(port: int, tool: str, **args: object) -> Any:
    answer = _post(port, tool, **args)
    assert answer["error"] is None, answer
    return answer["status"]


def _until(what: str, check: Any, seconds: float = 60) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        found = check()
        if found:
            return found
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.5)


def _tasks(ws: Path, label: str, command: str, **more: str) -> None:
    tasks = [
        {"label": name, "type": "shell", "command": cmd} for name, cmd in {label: command, **more}.items()
    ]
    (ws / ".vscode").mkdir(exist_ok=True)
    (ws / ".vscode" / "tasks.json").write_text(json.dumps({"version": "2.0.0", "tasks": tasks}))


def test_a_command_opens_an_editor_and_a_task_runs_in_vscodes_terminal(
    ws_path: Path, tmp_path: Path, vsix: Path
) -> None:
    # The output differs from the command line; "wait" runs until cancelled.
    _tasks(ws_path, "echo marker", 'echo "MARKER-$((40+2))"', wait="sleep 300")
    (ws_path / "app.js").write_text("require('fs').writeFileSync(__dirname + '/launched.txt', 'yes')\n")
    launch = {"type": "node", "request": "launch", "name": "Run app", "program": "${workspaceFolder}/app.js"}
    (ws_path / ".vscode" / "launch.json").write_text(
        json.dumps({"version": "0.2.0", "configurations": [launch]})
    )
    bench = None
    try:
        with workbench(ws_path, tmp_path, SETTINGS, vsix) as bench:
            page = bench.page
            port = bench.status_port()
            _until("the bridge", lambda: "workbench.action.files.newUntitledFile"
                   in json.dumps(_rest(port, "list_available_actions", query="newUntitledFile")))  # fmt: skip

            assert page.locator(".tabs-container .tab", has_text="Untitled").count() == 0
            _rest(port, "execute_action_by_id", actionId="workbench.action.files.newUntitledFile")
            _until(
                "an Untitled editor",
                lambda: page.locator(".tabs-container .tab", has_text="Untitled").count(),
            )
            page.screenshot(path=str(artifact("vscode-actions-untitled.png")))

            assert "echo marker" in _rest(port, "get_run_configurations")
            text = _rest(port, "run_configuration", configName="echo marker")
            assert "started in VS Code" in text, text
            job_id = text.split("jobId: ")[1].split(";")[0]

            def terminal_text() -> str:
                return "\n".join(page.locator(".xterm-rows").all_inner_texts()).replace("\xa0", " ")

            _until("the task's output in VS Code's terminal", lambda: "MARKER-42" in terminal_text())
            page.screenshot(path=str(artifact("vscode-actions-task-terminal.png")))
            out = _until(
                "the task's end",
                lambda: (
                    (o := _rest(port, "get_job_output", jobId=job_id, waitMs=2000))["state"] != "running"
                    and o
                ),
            )
            assert out["state"] == "exited" and out["exitCode"] == 0, out

            # A running VS Code task is work in progress, with a job that cancel_job stops in VS Code.
            text = _rest(port, "run_configuration", configName="wait")
            job_id = text.split("jobId: ")[1].split(";")[0]
            _until(
                "the task in progress", lambda: job_id in json.dumps(_rest(port, "get_progress_indicators"))
            )
            _rest(port, "cancel_job", jobId=job_id)
            out = _until(
                "the cancelled task's end",
                lambda: (
                    (o := _rest(port, "get_job_output", jobId=job_id, waitMs=2000))["state"] != "running"
                    and o
                ),
            )
            assert out["state"] == "killed", out
            assert job_id not in json.dumps(_rest(port, "get_progress_indicators"))

            # A launch configuration runs through VS Code's debugger (its built-in JavaScript one), without
            # debugging: the program runs, and the job ends when the session does.
            launched: list[dict[str, Any]] = []
            starting = threading.Thread(
                target=lambda: launched.append(_post(port, "run_configuration", configName="Run app"))
            )
            starting.start()
            starting.join(20)
            page.screenshot(path=str(artifact("vscode-actions-launch.png")))
            starting.join(150)
            assert launched and "started in VS Code" in str(launched[0]["status"]), launched
            job_id = launched[0]["status"].split("jobId: ")[1].split(";")[0]
            _until("the launched program", lambda: (ws_path / "launched.txt").exists())
            out = _until(
                "the session's end",
                lambda: (
                    (o := _rest(port, "get_job_output", jobId=job_id, waitMs=2000))["state"] != "running"
                    and o
                ),
            )
            assert out["state"] == "exited", out

            # Titles from the extensions' manifests; a command that writes a setting is refused (code-server
            # has no workbench.action.closeWindow: a browser tab cannot close itself).
            titled = _rest(port, "list_available_actions", query="MCP Server IDE: Restart")
            assert titled == [{"id": "mcpServerIde.restart", "text": "MCP Server IDE: Restart"}], titled
            refused = _post(port, "execute_action_by_id", actionId="workbench.action.toggleAutoSave")
            assert refused["status"] is None and "mcpServerIde.actions.allow" in refused["error"], refused
            installed = _rest(port, "get_project_modules")["vscodeExtensions"]["installed"]
            assert any(e.startswith("mcp-server-ide.mcp-server-ide@") for e in installed), installed
    finally:
        for log in bench.extension_logs() if bench else []:
            artifact("vscode-actions-log.txt").write_text(log.read_text(errors="replace"))


def _dialog(page: Any, text: str) -> Any:
    box = page.locator(".monaco-dialog-box", has_text=text).first
    box.wait_for(timeout=60_000)
    return box


def test_restricted_mode_runs_a_task_only_with_the_persons_consent(
    ws_path: Path, tmp_path: Path, vsix: Path
) -> None:
    _tasks(ws_path, "write marker", "echo ran > ran.txt")
    marker = ws_path / "ran.txt"
    # Workspace Trust on, no start-up question: a folder new to this VS Code opens in Restricted Mode.
    settings = {
        **SETTINGS,
        "security.workspace.trust.enabled": True,
        "security.workspace.trust.startupPrompt": "never",
    }
    bench = None
    try:
        with workbench(ws_path, tmp_path, settings, vsix) as bench:
            page = bench.page
            page.screenshot(path=str(artifact("vscode-restricted-start.png")))
            page.locator(".statusbar-item", has_text="Restricted Mode").first.wait_for()
            port = bench.status_port()
            _until("the bridge", lambda: "write marker" in _rest(port, "get_run_configurations"))

            answers: list[dict[str, Any]] = []

            def run() -> None:
                answers.append(_post(port, "run_configuration", configName="write marker"))

            asking = threading.Thread(target=run)
            asking.start()
            box = _dialog(page, "An AI assistant asks to run")
            page.screenshot(path=str(artifact("vscode-restricted-consent.png")))
            box.locator(".monaco-button", has_text="Cancel").first.click()
            asking.join(120)
            assert answers and answers[0]["status"] is None, answers
            assert "refused: the person declined" in answers[0]["error"], answers
            time.sleep(3)
            assert not marker.exists()  # nothing ran

            asking = threading.Thread(target=run)
            asking.start()
            _dialog(page, "An AI assistant asks to run").locator(
                ".monaco-button", has_text="Run"
            ).first.click()
            # VS Code itself may then ask to trust the workspace before it runs a task: the person agrees.
            deadline = time.monotonic() + 60
            while not marker.exists():
                assert time.monotonic() < deadline, "the task did not run after the person consented"
                trust = page.locator(".monaco-dialog-box", has_text="trust")
                if trust.count():
                    page.screenshot(path=str(artifact("vscode-restricted-vscode-trust.png")))
                    trust.first.locator(".monaco-button", has_text="Trust").first.click()
                time.sleep(0.5)
            asking.join(120)
            page.screenshot(path=str(artifact("vscode-restricted-ran.png")))
            assert marker.read_text().strip() == "ran"
            assert "started in VS Code" in str(answers[1]["status"]), answers  # answered before the restart
    finally:
        for log in bench.extension_logs() if bench else []:
            artifact("vscode-restricted-log.txt").write_text(log.read_text(errors="replace"))

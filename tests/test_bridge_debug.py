"""The debugger tools driving a debug session VS Code runs, through the extension's real bridge server
(extension/src/protocol.ts) and its real event log (src/debugstate.ts) on a real Unix socket.

Behind the bridge sits extension/test/peer_debug.ts, a stand-in for VS Code's debugger (one scripted
node session, answering the debug.* methods as src/debug.ts does): VS Code cannot run in the default
suite; the real proof is tests/e2e/test_vscode_debug.py. The server runs as a real process, reached
through its REST door. What this checks: the answers are the headless ones (one renderer), the
session says VS Code runs it, and when the extension goes away mid-session the tools say the session
was VS Code's.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.apps_host import ESBUILD_VERSION
from tests.support.extension import EXTENSION
from tests.support.npm import node, npm_bin
from tests.support.vscode import RUN_APP, mcp_call, rest_error, rest_status, write_launch

TOKEN = "d" * 64


@pytest.fixture(scope="module")
def peer_js(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("peer-debug") / "peer_debug.js"
    esbuild = npm_bin("esbuild", ESBUILD_VERSION, "esbuild")
    subprocess.run([str(esbuild), "test/peer_debug.ts", "--bundle", "--platform=node", "--format=cjs",
                    f"--outfile={out}", "--log-level=warning"], cwd=EXTENSION, check=True, timeout=120)  # fmt: skip
    return out


@pytest.fixture
def peer(peer_js: Path, ws_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    folder = Path(tempfile.mkdtemp(prefix="bridge-dbg-"))  # short: a socket path must fit in 108 bytes
    os.chmod(folder, 0o700)
    sock = folder / "bridge.sock"
    env = dict(os.environ, PEER_TOKEN=TOKEN, PEER_APP=str(ws_path.resolve() / "app.js"))
    proc = subprocess.Popen(
        [str(node()), str(peer_js), str(sock)], stdout=subprocess.PIPE, text=True, env=env
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    yield proc, sock
    if proc.poll() is None:
        proc.kill()
        proc.wait(5)
    subprocess.run(["rm", "-rf", str(folder)], check=False)


def call(url: str, tool: str, **args: object) -> Any:
    return rest_status(url, tool, args)


def failure(url: str, tool: str, **args: object) -> str:
    return rest_error(url, tool, args)


def test_a_session_vscode_runs_answers_as_headless_and_says_so_when_vscode_goes_away(
    http_server: Any, ws_path: Path, peer: tuple[subprocess.Popen[str], Path]
) -> None:
    proc, sock = peer
    (ws_path / "app.js").write_text(
        "function total(xs) {\n  let sum = 0;\n  for (const x of xs) sum += x;\n  return sum;\n}\n"
    )
    write_launch(ws_path, RUN_APP)
    server = http_server(ws_path, env={"MCP_IDE_BRIDGE_SOCKET": str(sock), "MCP_IDE_BRIDGE_TOKEN": TOKEN})
    url = server.url

    out = call(url, "start_debug_session", configName="Run app", waitMs=30000)
    assert out["backedBy"] == "VS Code", out
    assert (out["state"], out["reason"], out["at"], out["function"]) == (
        "stopped",
        "breakpoint",
        "app.js:4",
        "total",
    )
    assert out["locals"] == {"sum": "6", "xs": "(3) [1, 2, 3]"}, out
    sid, job = out["sessionId"], out["jobId"]
    bps = mcp_call(server.mcp_url, "get_debugger_breakpoints")
    assert [(b["line"], b.get("verified")) for b in bps] == [(4, True)], bps
    variables = call(url, "get_variables", sessionId=sid)
    xs = next(v for v in variables["scopes"][0]["variables"] if v["name"] == "xs")
    assert xs["count"] == 3 and xs["ref"] == 11, variables
    assert [v["value"] for v in call(url, "get_variables", sessionId=sid, ref=11)["variables"]] == [
        "1",
        "2",
        "3",
    ]
    assert call(url, "evaluate_expression", sessionId=sid, expression="sum * 7")["result"] == "42"
    listed = call(url, "list_debug_sessions")
    assert [(s["sessionId"], s["backedBy"]) for s in listed] == [(sid, "VS Code")], listed

    proc.kill()  # the extension goes away while the program is stopped
    proc.wait(5)
    said = failure(url, "get_variables", sessionId=sid)
    assert f"debug session {sid} runs in VS Code" in said and "does not answer" in said, said
    deadline = time.monotonic() + 60
    while (state := call(url, "list_debug_sessions")[0]["state"]) != "ended":
        assert time.monotonic() < deadline, state
        time.sleep(0.5)
    lost = call(url, "debug_continue", sessionId=sid)
    assert (
        lost["state"] == "ended" and "VS Code stopped answering" in lost["note"] and "exitCode" not in lost
    ), lost
    assert "runs in VS Code" in failure(url, "get_stack_trace", sessionId=sid)
    stopped = call(url, "stop_debug_session", sessionId=sid)
    assert stopped["state"] == "ended" and "VS Code stopped answering" in stopped["note"], stopped
    ended = call(url, "get_job_output", jobId=job)
    assert ended["state"] == "failed" and "VS Code stopped answering" in ended["output"], ended


def test_run_configuration_debugs_in_vscode_to_the_exit_code_and_python_stays_headless(
    http_server: Any, ws_path: Path, peer: tuple[subprocess.Popen[str], Path]
) -> None:
    _, sock = peer
    (ws_path / "app.js").write_text(
        "function total(xs) {\n  let sum = 0;\n  for (const x of xs) sum += x;\n  return sum;\n}\n"
    )
    (ws_path / "hello.py").write_text("print('hello')\n")
    py = {"type": "debugpy", "request": "launch", "name": "Py", "program": "${workspaceFolder}/hello.py"}
    write_launch(ws_path, RUN_APP, py)
    server = http_server(ws_path, env={"MCP_IDE_BRIDGE_SOCKET": str(sock), "MCP_IDE_BRIDGE_TOKEN": TOKEN})
    text = call(server.url, "run_configuration", configName="Run app", debug=True)
    assert text.startswith("Debug session started in VS Code: {"), text
    started = json.loads(text.split(": ", 1)[1])  # answered at the first stop, as start_debug_session
    assert started["state"] == "stopped" and started["backedBy"] == "VS Code", started
    sid = started["sessionId"]
    assert call(server.url, "get_stack_trace", sessionId=sid)["frames"][0]["at"] == "app.js:4"
    ended = call(server.url, "debug_continue", sessionId=sid, waitMs=30000)
    assert ended["state"] == "ended" and ended["exitCode"] == 3, ended
    job = call(server.url, "get_job_output", jobId=ended["jobId"], waitMs=5000)
    assert job["state"] == "exited" and job["exitCode"] == 3 and "result 6" in job["output"], job
    # VS Code has no Python debugger here (the stand-in offers node only): debugpy runs it headless
    out = call(server.url, "start_debug_session", configName="Py", waitMs=60000)
    assert out["backedBy"] == "headless debugpy" and out["state"] == "ended" and out["exitCode"] == 0, out

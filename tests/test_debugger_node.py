"""The debugger for node programs (issue 14, JavaScript half): vscode-js-debug's DAP server (installed
from npm on first use) driven through MCP client sessions, as tests/test_debugger.py does for Python.

The longer sessions (marker ``jsdebug``: leftover processes, 100 MB of output, attach) run with
``pytest -m jsdebug tests/test_debugger_node.py`` (CI runs them as a step of their own)."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from .support.servers import stdio_params
from .support.system import require_system
from .test_debugger import _call, _gone, _ours

pytestmark = pytest.mark.anyio

CALC = """\
function average(xs) {
  let total = 0;
  for (const x of xs) {
    total += x;
  }
  const count = xs.length - 1;
  return total / count;
}

function main() {
  const ok = average([2, 4, 6]) === 4;

  console.log(ok ? "average ok" : "average wrong");
  process.exitCode = ok ? 0 : 1;
}

main();
"""

BIG = """\
const big = Array.from({ length: 1000000 }, (_, i) => i);
const loop = { name: "loop" };
loop.self = loop;
const text = "x".repeat(5000000);
const chunk = "y".repeat(1023) + "\\n";
const block = chunk.repeat(1024);
for (let i = 0; i < 50; i++) process.stdout.write(block); // 50 MB before the stop
let marker = 1;
for (let i = 0; i < 50; i++) process.stdout.write(block); // 50 MB after it
console.log("done", big.length, loop.name, text.length, marker);
"""

LAUNCH = {
    "version": "0.2.0",
    "configurations": [
        {"name": "Node calc", "type": "node", "request": "launch", "program": "${workspaceFolder}/calc.js"},
        {"name": "Node big", "type": "pwa-node", "request": "launch", "program": "${workspaceFolder}/big.js"},
    ],
}


@pytest.fixture
def root(ws_path: Path) -> Path:
    require_system("node", "nodejs")
    (ws_path / ".vscode").mkdir()
    (ws_path / ".vscode" / "launch.json").write_text(json.dumps(LAUNCH))
    (ws_path / "calc.js").write_text(CALC)
    (ws_path / "big.js").write_text(BIG)
    return ws_path


async def test_a_node_program_debugged_end_to_end(mcp: Any, root: Path) -> None:
    async with mcp(root) as client:
        await _call(client, "toggle_debugger_breakpoint", {"pathInProject": "calc.js", "line": 7})
        await _call(client, "toggle_debugger_breakpoint", {"pathInProject": "calc.js", "line": 12})  # blank
        logpoint = {"pathInProject": "calc.js", "line": 4, "logMessage": "x={x}"}  # (js-debug: no hit counts)
        await _call(client, "toggle_debugger_breakpoint", logpoint)
        stop = await _call(client, "start_debug_session", {"configName": "Node calc", "waitMs": 60000})
        assert stop["state"] == "stopped" and stop["reason"] == "breakpoint", stop
        assert stop["at"] == "calc.js:7" and "average" in stop["function"], stop
        assert stop["locals"]["count"] == "2" and stop["locals"]["total"] == "12", stop  # the wrong count
        sid, job = stop["sessionId"], stop["jobId"]

        listed = {b["line"]: b for b in await _call(client, "get_debugger_breakpoints")}
        assert listed[7]["verified"] is True, listed
        blank = listed[12]  # js-debug moves a blank line's breakpoint to the next statement
        assert blank.get("actualLine", 12) != 12 or blank["verified"] is False, blank

        scopes = (await _call(client, "get_variables", {"frameId": stop["frameId"]}))["scopes"]
        local = {v["name"]: v for v in scopes[0]["variables"]}
        assert local["count"]["value"] == "2" and local["count"]["type"] == "number"
        assert "ref" in local["xs"] or "children" in local["xs"], local["xs"]
        fixed = await _call(
            client, "evaluate_expression", {"expression": "total / xs.length", "frameId": stop["frameId"]}
        )
        assert fixed["result"] == "4" and fixed["type"] == "number", fixed

        frames = (await _call(client, "get_stack_trace"))["frames"]
        assert [f["at"] for f in frames[:2]] == ["calc.js:7", "calc.js:11"], frames
        stepped = await _call(client, "debug_step", {"kind": "over"})
        assert stepped["state"] == "stopped" and stepped["reason"] == "step", stepped
        end = await _call(client, "debug_continue", {"waitMs": 60000})
        assert end["state"] == "stopped" and end["at"] == f"calc.js:{blank['actualLine']}", end  # moved
        end = await _call(client, "debug_continue", {"waitMs": 60000})
        assert end["state"] == "ended" and end["exitCode"] == 1 and end["jobId"] == job, end
        output = await _call(client, "get_job_output", {"jobId": job, "waitMs": 10000})
        assert output["output"].count("average wrong") == 1, output  # not doubled by js-debug's events
        assert "x=2\nx=4\nx=6\n" in output["output"], output  # the logpoint, printed by the program
        sessions = await _call(client, "list_debug_sessions")
        assert [(s["sessionId"], s["state"]) for s in sessions] == [(sid, "ended")]
    assert not _gone(root)


@pytest.mark.jsdebug
async def test_node_sessions_leave_nothing_behind(mcp: Any, root: Path) -> None:
    looping = '  let total = 0;\n  console.log("looping");\n  while (total === 0) {\n    for (let i = 0; i < 1e6; i++);\n  }\n'
    (root / "calc.js").write_text(CALC.replace("  let total = 0;\n", looping))
    async with mcp(root) as client:
        started = await _call(client, "start_debug_session", {"configName": "Node calc", "waitMs": 0})
        assert started["state"] in ("running", "stopped")
        # Paused before the loop runs, the program may be anywhere in node's own start-up code.
        await _call(
            client, "get_job_output", {"jobId": started["jobId"], "untilPattern": "looping", "waitMs": 60000}
        )
        paused = await _call(client, "debug_pause", {"waitMs": 60000})
        assert paused["state"] == "stopped" and paused["at"].startswith("calc.js:"), paused
        await _call(client, "stop_debug_session")
        assert not _gone(root)
    for ending in ("disconnect", "sigterm"):
        async with Client(stdio_params(root)) as client:
            await _call(client, "start_debug_session", {"configName": "Node calc", "waitMs": 0})
            assert any("calc.js" in p for p in _ours(root)), _ours(root)
            if ending == "sigterm":
                server = [p for p in _ours(root) if "mcp_server_ide" in p]
                os.kill(int(server[0].split(":")[0]), signal.SIGTERM)
        assert not _gone(root, 20), ending


@pytest.mark.jsdebug
async def test_node_huge_output_list_and_loop_stay_bounded(mcp: Any, root: Path) -> None:
    line = BIG.splitlines().index("let marker = 1;") + 1
    async with mcp(root) as client:
        await _call(client, "toggle_debugger_breakpoint", {"pathInProject": "big.js", "line": line})
        stop = await _call(client, "start_debug_session", {"configName": "Node big", "waitMs": 120000})
        assert stop["state"] == "stopped" and stop["at"] == f"big.js:{line}", stop
        assert len(json.dumps(stop)) < 2000, stop
        scopes = (await _call(client, "get_variables", {"frameId": stop["frameId"], "depth": 4}))["scopes"]
        assert len(json.dumps(scopes)) < 200_000
        local = {v["name"]: v for s in scopes for v in s.get("variables", [])}
        assert len(local["text"]["value"]) < 300, local["text"]
        loop, depth = local["loop"], 0
        while "children" in loop:
            loop = next(c for c in loop["children"] if c["name"] == "self")
            depth += 1
        assert depth <= 3
        page = await _call(client, "get_variables", {"ref": local["big"]["ref"], "offset": 10, "limit": 5})
        assert len(page["variables"]) == 5, page
        end = await _call(client, "debug_continue", {"waitMs": 120000})
        assert end["state"] == "ended" and end["exitCode"] == 0, end
        out = await _call(
            client, "get_job_output", {"jobId": end["jobId"], "maxBytes": 2000, "waitMs": 30000}
        )
        assert len(json.dumps(out)) < 10_000
        assert await _call(client, "list_debug_sessions")
    assert not _gone(root)


async def test_untrusted_workspace_is_asked_what_the_node_session_runs(mcp: Any, root: Path) -> None:
    from mcp_server_ide.workspace import Policy

    from .test_debugger import _answering

    asked: list[str] = []
    async with mcp(
        root, policy=Policy(trusted=False), elicitation_callback=_answering([False], asked)
    ) as client:
        declined = await client.call_tool("start_debug_session", {"configName": "Node calc"})
        assert declined.is_error and "declined" in declined.content[0].text
        assert f"It runs: node {root / 'calc.js'}" in asked[0], asked
        assert await _call(client, "list_debug_sessions") == [] and not _ours(root)


@pytest.mark.jsdebug
async def test_attach_to_a_node_job_by_its_inspector_port(mcp: Any, root: Path) -> None:
    import socket

    from .test_debugger import _listening

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (root / "wait.js").write_text(
        "let n = 0;\nconst timer = setInterval(() => {\n  n += 1;\n  if (n > 300) clearInterval(timer);\n}, 50);\n"
    )
    launch = {"configurations": [{"name": "Attach node", "type": "node", "request": "attach", "port": port}]}
    (root / ".vscode" / "launch.json").write_text(json.dumps(launch))
    async with mcp(root) as client:
        job = await _call(client, "start_job", {"command": f"node --inspect=127.0.0.1:{port} wait.js"})
        deadline = time.monotonic() + 60
        while not _listening(port) and time.monotonic() < deadline:
            time.sleep(0.05)
        await _call(client, "toggle_debugger_breakpoint", {"pathInProject": "wait.js", "line": 3})
        stop = await _call(client, "start_debug_session", {"configName": "Attach node", "waitMs": 60000})
        assert stop["state"] == "stopped" and stop["at"] == "wait.js:3", stop
        await _call(client, "stop_debug_session")  # detaches: the program goes on, a job of its own
        state = await _call(client, "get_job_output", {"jobId": job["jobId"], "waitMs": 0})
        assert state["state"] == "running", state
        await _call(client, "cancel_job", {"jobId": job["jobId"]})
    assert not _gone(root)

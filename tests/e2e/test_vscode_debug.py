"""The debugger tools driving VS Code's own debugger (issue 14's VS Code bullet), in a real VS Code
(code-server 4.139.1 in headless Chromium, the companion extension's .vsix installed): a breakpoint set
with ``toggle_debugger_breakpoint`` is VS Code's, ``start_debug_session`` of a node launch configuration
runs under VS Code's built-in JavaScript debugger and stops at the line while VS Code's call stack view
shows the paused session; variables, an evaluation, a step, the end with the exit code, no process
left. A session the person starts in VS Code is listed, paused and stopped by the tools. One
code-server start for the file. Own README command:
``.venv/bin/python -m pytest -m e2e tests/e2e/test_vscode_debug.py``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.browser import artifact
from tests.support.codeserver import Workbench, workbench
from tests.support.vscode import RUN_APP, mcp_call, node_launch, rest_status, write_launch

pytestmark = pytest.mark.e2e

APP = """function total(xs) {
  let sum = 0;
  for (const x of xs) sum += x;
  const doubled = sum * 2;
  return doubled;
}
const result = total([1, 2, 3]);
console.log('result', result);
process.exitCode = result === 12 ? 3 : 1;
"""
WAIT = "setInterval(() => {}, 1000);\n"


@pytest.fixture(scope="module")
def vscode(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Workbench, int, Path]]:
    from tests.support.extension import build_vsix

    tmp = tmp_path_factory.mktemp("vscode-debug")
    ws = (tmp / "ws").resolve()
    ws.mkdir(parents=True)
    (ws / "app.js").write_text(APP)
    (ws / "wait.js").write_text(WAIT)
    write_launch(ws, RUN_APP, node_launch("Wait", "wait.js"))
    vsix = build_vsix(tmp / "mcp-server-ide.vsix")
    settings = {
        "mcpServerIde.server.command": sys.executable,
        "mcpServerIde.server.args": ["-m", "mcp_server_ide"],
        "debug.saveBeforeStart": "none",
    }
    bench = None
    try:
        with workbench(ws, tmp, settings, vsix) as bench:
            yield bench, bench.status_port(), ws
    finally:
        for log in bench.extension_logs() if bench else []:
            artifact("vscode-debug-ext-log.txt").write_text(log.read_text(errors="replace"))


def rest(port: int, tool: str, **args: object) -> Any:
    return rest_status(f"http://127.0.0.1:{port}", tool, args, timeout=150)


def until(check: Callable[[], Any], what: str, seconds: float = 60) -> Any:
    deadline = time.monotonic() + seconds
    while not (found := check()):
        assert time.monotonic() < deadline, what
        time.sleep(0.5)
    return found


def programs(ws: Path) -> list[int]:
    """Node processes running a program of this test's workspace (js-debug starts ``node ./app.js`` in
    the workspace folder, whose path is unique to the test)."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = (Path("/proc") / pid / "cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        if cwd == str(ws) and any(a.endswith((b"app.js", b"wait.js")) for a in cmd[1:]):
            out.append(int(pid))
    return out


def test_a_node_session_runs_in_vscodes_debugger_stops_at_the_breakpoint_and_ends_with_its_exit_code(
    vscode: tuple[Workbench, int, Path],
) -> None:
    bench, port, ws = vscode
    page = bench.page
    until(lambda: "Run app" in rest(port, "get_run_configurations"), "the bridge and launch.json")
    assert rest(port, "toggle_debugger_breakpoint", pathInProject="app.js", line=4) == "Breakpoint added"
    # the breakpoint is VS Code's: its glyph shows in the editor once the file is open there
    rest(port, "open_file_in_editor", pathInProject="app.js")
    page.locator(".codicon-debug-breakpoint").first.wait_for()

    out = rest(port, "start_debug_session", configName="Run app", waitMs=60000)
    assert out["backedBy"] == "VS Code", out
    assert out["state"] == "stopped" and out["reason"] == "breakpoint", out
    assert out["at"] == "app.js:4" and out["function"].endswith("total"), out  # js-debug: global.total
    assert out["locals"]["sum"] == "6", out
    sid = out["sessionId"]

    # VS Code shows the assistant's session paused: the debug toolbar and the call stack at total
    page.locator(".debug-toolbar").first.wait_for()
    stack = page.locator(".debug-call-stack")
    if not stack.count():
        bench.command("Run and Debug: Focus on Call Stack View")
    until(lambda: "total" in page.locator(".debug-call-stack").first.inner_text(), "total in the call stack")
    page.screenshot(path=str(artifact("vscode-debug-paused.png")))

    assert programs(ws), "the stopped program is a process here"
    listed = rest(port, "list_debug_sessions")
    assert any(s["sessionId"] == sid and s["backedBy"] == "VS Code" for s in listed), listed
    bps = mcp_call(f"http://127.0.0.1:{port}/mcp", "get_debugger_breakpoints")
    assert [(Path(b["path"]).name, b["line"], b.get("verified")) for b in bps] == [("app.js", 4, True)], bps

    stack_out = rest(port, "get_stack_trace", sessionId=sid)
    assert [f["at"] for f in stack_out["frames"][:2]] == ["app.js:4", "app.js:7"], stack_out
    variables = rest(port, "get_variables", sessionId=sid)
    local = {v["name"]: v for v in variables["scopes"][0]["variables"]}
    assert local["sum"]["value"] == "6" and local["xs"].get("ref"), variables
    children = rest(port, "get_variables", sessionId=sid, ref=local["xs"]["ref"])
    assert [v["value"] for v in children["variables"][:3]] == ["1", "2", "3"], children
    assert rest(port, "evaluate_expression", sessionId=sid, expression="sum * 7")["result"] == "42"

    stepped = rest(port, "debug_step", sessionId=sid, kind="over", waitMs=30000)
    assert stepped["state"] == "stopped" and stepped["reason"] == "step", stepped
    assert stepped["at"] == "app.js:5" and stepped["locals"]["doubled"] == "12", stepped

    ended = rest(port, "debug_continue", sessionId=sid, waitMs=60000)
    assert ended["state"] == "ended" and ended["exitCode"] == 3, ended
    job = rest(port, "get_job_output", jobId=ended["jobId"], waitMs=5000)
    assert job["state"] == "exited" and job["exitCode"] == 3 and "result 12" in json.dumps(job), job
    until(lambda: not programs(ws), "no program left", 30)
    until(lambda: not page.locator(".debug-toolbar:visible").count(), "VS Code's debug toolbar gone", 30)

    # a condition given by the tool is the condition of VS Code's breakpoint (its glyph says so)
    assert rest(port, "toggle_debugger_breakpoint", pathInProject="app.js", line=3, condition="x === 2")
    page.locator(".codicon-debug-breakpoint-conditional").first.wait_for()


def test_a_session_the_person_starts_in_vscode_is_listed_paused_and_stopped_by_the_tools(
    vscode: tuple[Workbench, int, Path],
) -> None:
    bench, port, ws = vscode
    page = bench.page
    bench.command("Debug: Select and Start Debugging")
    bench.pick("Wait")
    found = until(
        lambda: [
            s for s in rest(port, "list_debug_sessions") if s["name"] == "Wait" and s["state"] != "ended"
        ],
        "the person's session listed",
    )
    assert found[0]["backedBy"] == "VS Code" and found[0]["startedIn"] == "VS Code", found
    sid = found[0]["sessionId"]
    until(lambda: programs(ws), "the person's program running")
    paused = rest(port, "debug_pause", sessionId=sid, waitMs=30000)
    # an idle node pauses at its next statement: js-debug says "step" then, "pause" in running code
    assert paused["state"] == "stopped" and paused["reason"] in ("pause", "step"), paused
    page.screenshot(path=str(artifact("vscode-debug-person-paused.png")))
    stopped = rest(port, "stop_debug_session", sessionId=sid)
    assert stopped["state"] == "ended", stopped
    until(lambda: not programs(ws), "no program left after stop_debug_session", 30)

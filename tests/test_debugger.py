"""The debugger (issue 14, Python half): real debugpy sessions driven through MCP client sessions.

A program with a failing test is debugged end to end (breakpoint, locals, evaluation, step, exit
code); breakpoints report the adapter's verdict; files outside the workspace are refused; no adapter,
launcher or program outlives ``stop_debug_session``, a client that goes away or the server's SIGTERM;
huge output, a 10⁶-element list and a structure that contains itself give bounded answers.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import mcp_types
import pytest
from mcp import Client

from .support.results import data
from .support.servers import stdio_params

pytestmark = pytest.mark.anyio

CALC = """\
def average(xs):
    total = 0
    for x in xs:
        total += x
    count = len(xs) - 1
    return total / count


def test_average():
    assert average([2, 4, 6]) == 4


if __name__ == "__main__":
    import sys

    ok = average([2, 4, 6]) == 4
    print("average ok" if ok else "average wrong")
    sys.exit(0 if ok else 1)
"""

BIG = """\
import sys

big = list(range(1_000_000))
loop = {"name": "loop"}
loop["self"] = loop
text = "x" * 5_000_000
chunk = "y" * 1023 + "\\n"
sys.stdout.write(chunk * 51_200)  # 50 MB before the stop
sys.stdout.flush()
marker = 1
sys.stdout.write(chunk * 51_200)  # 50 MB after it
print("done")
"""

LAUNCH = {
    "version": "0.2.0",
    "configurations": [
        {
            "name": "Test calc",
            "type": "debugpy",
            "request": "launch",
            "program": "${workspaceFolder}/calc.py",
        },
        {"name": "Big", "type": "debugpy", "request": "launch", "program": "${workspaceFolder}/big.py"},
        {"name": "No debug", "type": "debugpy", "request": "launch", "program": "calc.py", "noDebug": True},
    ],
}


def _workspace(root: Path) -> Path:
    (root / ".vscode").mkdir()
    (root / ".vscode" / "launch.json").write_text(json.dumps(LAUNCH))
    (root / "calc.py").write_text(CALC)
    (root / "big.py").write_text(BIG)
    return root


def _ours(root: Path) -> list[str]:
    """Live processes started for this workspace: cwd inside it, or its path on their command line."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                if fh.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X"):
                    continue
            cwd = os.readlink(f"/proc/{name}/cwd")
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                cmd = fh.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if cwd == str(root) or cwd.startswith(f"{root}/") or str(root) in cmd:
            found.append(f"{name}: {cmd[:120]}")
    return found


def _gone(root: Path, within_s: float = 10.0) -> list[str]:
    deadline = time.monotonic() + within_s
    while (left := _ours(root)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


async def _call(client: Any, name: str, args: dict[str, Any] | None = None) -> Any:
    result = await client.call_tool(name, args or {})
    assert not result.is_error, (name, result.content)
    return data(result)


async def test_a_failing_test_debugged_end_to_end(mcp: Any, ws_path: Path) -> None:
    root = _workspace(ws_path)
    logged: list[str] = []

    async def on_log(params: Any) -> None:
        logged.append(str(params.data))

    async with mcp(root, mode="legacy", logging_callback=on_log) as client:
        assert await _call(client, "toggle_debugger_breakpoint", {"pathInProject": "calc.py", "line": 6}) == (
            "Breakpoint added"
        )
        stop = await _call(client, "start_debug_session", {"configName": "Test calc", "waitMs": 60000})
        assert stop["state"] == "stopped" and stop["reason"] == "breakpoint", stop
        assert stop["at"] == "calc.py:6" and stop["function"] == "average"
        assert stop["locals"]["count"] == "2" and stop["locals"]["total"] == "12"  # the wrong count
        sid, job = stop["sessionId"], stop["jobId"]

        listed = await _call(client, "get_debugger_breakpoints")
        assert listed == [{"path": str(root / "calc.py"), "line": 6, "verified": True}]

        scopes = (await _call(client, "get_variables", {"frameId": stop["frameId"]}))["scopes"]
        local = {v["name"]: v for v in scopes[0]["variables"]}
        assert local["count"]["value"] == "2" and local["count"]["type"] == "int"
        assert local["xs"]["value"] == "[2, 4, 6]" and "ref" in local["xs"]
        items = await _call(client, "get_variables", {"ref": local["xs"]["ref"]})
        assert [(v["name"], v["value"]) for v in items["variables"]] == [
            ("0", "2"),
            ("1", "4"),
            ("2", "6"),
            ("len()", "3"),
        ]

        fixed = await _call(
            client, "evaluate_expression", {"expression": "total / len(xs)", "frameId": stop["frameId"]}
        )
        assert fixed == {"result": "4.0", "type": "float"}

        frames = (await _call(client, "get_stack_trace"))["frames"]
        assert frames[0]["at"] == "calc.py:6" and frames[1]["at"] == "calc.py:16"

        stepped = await _call(client, "debug_step", {"kind": "out"})
        assert stepped["state"] == "stopped" and stepped["at"] == "calc.py:16", stepped

        # sys.exit(1) is an uncaught SystemExit: the default exception filter ("uncaught") stops there.
        caught = await _call(client, "debug_continue", {"waitMs": 60000})
        assert caught["state"] == "stopped" and caught["reason"] == "exception", caught
        assert "SystemExit" in caught["detail"] and caught["at"] == "calc.py:18"
        end = await _call(client, "debug_continue", {"waitMs": 60000})
        assert end == {"sessionId": sid, "state": "ended", "exitCode": 1, "jobId": job}
        output = await _call(client, "get_job_output", {"jobId": job, "waitMs": 10000})
        assert "average wrong" in output["output"]
        assert f"{sid} stopped (breakpoint)" in logged and f"{sid} program exited with code 1" in logged, (
            logged
        )
        sessions = await _call(client, "list_debug_sessions")
        assert sessions == [
            {
                "sessionId": sid,
                "name": "Test calc",
                "state": "ended",
                "backedBy": "headless debugpy",
                "jobId": job,
                "exitCode": 1,
            }
        ]
    assert not _gone(root)


async def test_breakpoints_verified_moved_and_outside_refused(
    mcp: Any, ws_path: Path, tmp_path: Path
) -> None:
    root = _workspace(ws_path)
    (tmp_path / "outside.py").write_text("x = 1\n")
    async with mcp(root) as client:
        refused = await client.call_tool(
            "toggle_debugger_breakpoint", {"pathInProject": str(tmp_path / "outside.py"), "line": 1}
        )
        assert refused.is_error and "outside" in refused.content[0].text
        await _call(
            client, "toggle_debugger_breakpoint", {"pathInProject": "calc.py", "line": 7}
        )  # blank line
        logpoint = {"pathInProject": "calc.py", "line": 4, "logMessage": "x={x}", "hitCondition": ">=2"}
        assert await _call(client, "toggle_debugger_breakpoint", logpoint) == "Breakpoint added"
        await _call(
            client, "toggle_debugger_breakpoint", {"pathInProject": "calc.py", "line": 2, "condition": "xs"}
        )
        stop = await _call(client, "start_debug_session", {"configName": "Test calc", "waitMs": 60000})
        assert stop["state"] == "stopped" and stop["at"] == "calc.py:2", stop
        listed = {b["line"]: b for b in await _call(client, "get_debugger_breakpoints")}
        assert listed[2]["verified"] is True and listed[2]["condition"] == "xs"
        blank = listed[7]
        assert blank.get("actualLine", 7) != 7 or blank["verified"] is False, blank
        # A breakpoint toggled while the session runs reaches the adapter at once.
        await _call(client, "toggle_debugger_breakpoint", {"pathInProject": "calc.py", "line": 5})
        listed = {b["line"]: b for b in await _call(client, "get_debugger_breakpoints")}
        assert listed[5]["verified"] is True
        nxt = await _call(client, "debug_continue", {"waitMs": 60000})
        assert nxt["state"] == "stopped" and nxt["at"] == "calc.py:5", nxt
        bad = await client.call_tool("set_exception_breakpoints", {"filters": ["everything"]})
        assert bad.is_error and "raised, uncaught, userUnhandled" in bad.content[0].text
        assert (
            await _call(client, "set_exception_breakpoints", {"filters": []}) == "Exception breakpoints: none"
        )
        end = await _call(client, "debug_continue", {"waitMs": 60000})  # no stop at sys.exit(1) now
        if blank.get("actualLine"):  # the blank line's breakpoint, where the adapter moved it
            assert end["state"] == "stopped" and end["at"] == f"calc.py:{blank['actualLine']}", end
            end = await _call(client, "debug_continue", {"waitMs": 60000})
        assert end["state"] == "ended" and end["exitCode"] == 1, end
        output = (await _call(client, "get_job_output", {"jobId": end["jobId"], "waitMs": 10000}))["output"]
        assert "x=4\n" in output and "x=6\n" in output and "x=2" not in output, output  # hitCondition >=2
    assert not _gone(root)


async def test_nothing_survives_stop_disconnect_or_sigterm(mcp: Any, ws_path: Path) -> None:
    root = _workspace(ws_path)
    looping = "    total = 0\n    import time\n\n    while total == 0:\n        time.sleep(0.01)\n"
    (root / "calc.py").write_text(CALC.replace("    total = 0\n", looping))
    async with mcp(root) as client:
        started = await _call(client, "start_debug_session", {"configName": "Test calc", "waitMs": 0})
        assert started["state"] in ("running", "stopped")
        assert _ours(root)  # adapter, launcher, program
        paused = await _call(client, "debug_pause", {"waitMs": 60000})
        assert paused["state"] == "stopped" and paused["reason"] == "pause", paused
        assert paused["at"].startswith("calc.py:"), paused  # wherever the loop (or its start-up) was
        await _call(client, "stop_debug_session", {"sessionId": started["sessionId"]})
        assert not _gone(root)

    # A stdio client that goes away, then a server that gets SIGTERM: each takes its sessions along.
    for ending in ("disconnect", "sigterm"):
        async with Client(stdio_params(root)) as client:
            started = await _call(client, "start_debug_session", {"configName": "Test calc", "waitMs": 0})
            assert started["state"] in ("running", "stopped")
            if ending == "sigterm":
                server = [p for p in _ours(root) if "mcp_server_ide" in p]
                assert server, _ours(root)
                os.kill(int(server[0].split(":")[0]), signal.SIGTERM)
        assert not _gone(root, 20), ending


async def test_huge_output_list_and_loop_stay_bounded(mcp: Any, ws_path: Path) -> None:
    root = _workspace(ws_path)
    await_line = BIG.splitlines().index("marker = 1") + 1
    async with mcp(root) as client:
        await _call(client, "toggle_debugger_breakpoint", {"pathInProject": "big.py", "line": await_line})
        stop = await _call(client, "start_debug_session", {"configName": "Big", "waitMs": 120000})
        assert stop["state"] == "stopped" and stop["at"] == f"big.py:{await_line}", stop
        assert len(json.dumps(stop)) < 2000  # the 5 MB string and the big list are cut in the locals
        assert stop["locals"]["text"].endswith("chars)")
        frame = stop["frameId"]
        scopes = (await _call(client, "get_variables", {"frameId": frame, "depth": 4}))["scopes"]
        answer = json.dumps(scopes)
        assert len(answer) < 200_000, len(answer)
        local = {v["name"]: v for v in scopes[0]["variables"]}
        assert local["text"]["value"].endswith("chars)") and len(local["text"]["value"]) < 300
        loop = local["loop"]
        depth = 0
        while "children" in loop:  # the structure that holds itself stops at the depth limit
            loop = next(c for c in loop["children"] if c["name"] == "'self'")
            depth += 1
        assert depth <= 3
        page = await _call(client, "get_variables", {"ref": local["big"]["ref"], "offset": 10, "limit": 5})
        print("PAGE", page)
        assert len(page["variables"]) == 5 and page["nextOffset"] == 15
        # The server stays responsive while the program floods its output.
        end = await _call(client, "debug_continue", {"waitMs": 120000})
        assert end["state"] == "ended" and end["exitCode"] == 0, end
        out = await _call(
            client, "get_job_output", {"jobId": end["jobId"], "maxBytes": 2000, "waitMs": 30000}
        )
        assert out["state"] == "exited" and len(json.dumps(out)) < 10_000
        assert await _call(client, "list_debug_sessions")  # answers at once after 100 MB went by
    assert not _gone(root)


async def test_run_configuration_debug_and_no_debug(mcp: Any, ws_path: Path) -> None:
    root = _workspace(ws_path)
    async with mcp(root) as client:
        await _call(client, "toggle_debugger_breakpoint", {"pathInProject": "calc.py", "line": 6})
        text = await _call(client, "run_configuration", {"configName": "Test calc", "debug": True})
        assert text.startswith("Debug session started: {"), text
        stop = json.loads(text.split(": ", 1)[1])  # answered at the first stop, as start_debug_session
        assert stop["state"] == "stopped" and stop["at"] == "calc.py:6", stop
        assert stop["sessionId"].startswith("dbg-") and stop["jobId"], stop
        await _call(client, "stop_debug_session")
        plain = await _call(client, "run_configuration", {"configName": "No debug", "debug": True})
        assert "jobId" in plain and "Debug session" not in plain
    assert not _gone(root)
    assert subprocess.run([sys.executable, "-c", "import debugpy"]).returncode == 0


def _answering(answers: list[bool], asked: list[str]) -> Any:
    async def callback(context: Any, params: Any) -> Any:
        asked.append(params.message)
        yes = answers.pop(0)
        return mcp_types.ElicitResult(action="accept" if yes else "decline", content={"confirm": yes})

    return callback


async def test_untrusted_asks_before_running_and_evaluating_read_only_has_no_debugger(
    mcp: Any, ws_path: Path
) -> None:
    from mcp_server_ide.server import ServerOptions
    from mcp_server_ide.workspace import Policy

    root = _workspace(ws_path)
    asked: list[str] = []
    answers = [False, True, False, True]
    async with mcp(
        root, policy=Policy(trusted=False), elicitation_callback=_answering(answers, asked)
    ) as client:
        await _call(client, "toggle_debugger_breakpoint", {"pathInProject": "calc.py", "line": 6})
        declined = await client.call_tool("start_debug_session", {"configName": "Test calc"})
        assert declined.is_error and "declined" in declined.content[0].text
        assert await _call(client, "list_debug_sessions") == [] and not _ours(root)
        stop = await _call(client, "start_debug_session", {"configName": "Test calc", "waitMs": 60000})
        assert stop["at"] == "calc.py:6"
        refused = await client.call_tool("evaluate_expression", {"expression": "count := 3"})
        assert refused.is_error and "declined" in refused.content[0].text
        allowed = await _call(client, "evaluate_expression", {"expression": "count"})
        assert allowed == {"result": "2", "type": "int"}  # the refused assignment never ran
        assert "calc.py" in asked[0] and "count := 3" in asked[2] and len(asked) == 4
        answers.append(True)
        failed = await client.call_tool("evaluate_expression", {"expression": "no_such_name"})
        text = failed.content[0].text
        assert failed.is_error and "NameError" in text and "Traceback" not in text, repr(text)
        await _call(client, "stop_debug_session")
    async with mcp(root, options=ServerOptions(read_only=True)) as client:
        for name, args in [
            ("start_debug_session", {"configName": "Test calc"}),
            ("evaluate_expression", {"expression": "1"}),
            ("debug_step", {}),
        ]:
            refused = await client.call_tool(name, args)
            assert refused.is_error and "--read-only" in refused.content[0].text, name
        assert await _call(client, "list_debug_sessions") == []
    assert not _gone(root)


def _listening(port: int) -> bool:
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as fh:
            rows = [r.split() for r in fh.readlines()[1:]]
        if any(r[3] == "0A" and int(r[1].rsplit(":", 1)[1], 16) == port for r in rows):
            return True
    return False


async def test_attach_to_a_workspace_job_by_port_and_refuse_others(mcp: Any, ws_path: Path) -> None:
    import socket

    root = _workspace(ws_path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port, other = s.getsockname()[1], s.getsockname()[1] + 1
    launch = {
        "configurations": [
            {
                "name": "Attach",
                "type": "debugpy",
                "request": "attach",
                "connect": {"host": "127.0.0.1", "port": port},
            },
            {"name": "Elsewhere", "type": "debugpy", "request": "attach", "connect": {"port": other}},
            {
                "name": "Remote",
                "type": "debugpy",
                "request": "attach",
                "connect": {"host": "10.0.0.1", "port": port},
            },
        ]
    }
    (root / ".vscode" / "launch.json").write_text(json.dumps(launch))
    async with mcp(root) as client:
        for name, why in [("Elsewhere", f"listens on port {other}"), ("Remote", "not this machine")]:
            refused = await client.call_tool("start_debug_session", {"configName": name})
            assert refused.is_error and why in refused.content[0].text, refused.content
        command = [
            sys.executable,
            "-m",
            "debugpy",
            "--listen",
            f"127.0.0.1:{port}",
            "--wait-for-client",
            "calc.py",
        ]
        job = await _call(client, "start_job", {"command": " ".join(command)})
        deadline = time.monotonic() + 60
        while not _listening(port) and time.monotonic() < deadline:
            time.sleep(0.05)
        await _call(client, "toggle_debugger_breakpoint", {"pathInProject": "calc.py", "line": 6})
        stop = await _call(client, "start_debug_session", {"configName": "Attach", "waitMs": 60000})
        assert stop["state"] == "stopped" and stop["at"] == "calc.py:6" and stop["locals"]["count"] == "2", (
            stop
        )
        await _call(client, "stop_debug_session")  # detaches: the program goes on, a job of its own
        end = await _call(client, "get_job_output", {"jobId": job["jobId"], "waitMs": 60000})
        assert end["state"] == "exited" and "average wrong" in end["output"], end
    assert not _gone(root)


async def test_attach_by_process_id_of_a_workspace_job(mcp: Any, ws_path: Path) -> None:
    """debugpy attaches by pid by injecting itself with gdb; where this machine's kernel does not let gdb
    call into a process (this test machine's does not), the tool refuses before touching the program."""
    from mcp_server_ide.engines.debug.attach import pid_attach_refusal

    root = _workspace(ws_path)
    (root / "loop.py").write_text("import time\n\nn = 0\nwhile True:\n    n += 1\n    time.sleep(0.01)\n")
    async with mcp(root) as client:
        job = await _call(client, "start_job", {"command": f"{sys.executable} loop.py"})
        deadline = time.monotonic() + 30
        found = []
        while not found and time.monotonic() < deadline:
            found = [p for p in _ours(root) if "loop.py" in p and "/bin/sh" not in p]
            time.sleep(0.05)
        target = int(found[0].split(":")[0])
        launch = {
            "configurations": [
                {"name": "By pid", "type": "debugpy", "request": "attach", "processId": target}
            ]
        }
        (root / ".vscode" / "launch.json").write_text(json.dumps(launch))
        why = pid_attach_refusal()
        result = await client.call_tool("start_debug_session", {"configName": "By pid", "waitMs": 30000})
        if why is not None:
            text = result.content[0].text
            assert result.is_error and f"cannot attach to process {target} by its id here" in text, text
            assert why in text and '"connect": {"port": PORT}' in text
            state = await _call(client, "get_job_output", {"jobId": job["jobId"], "waitMs": 0})
            assert state["state"] == "running", state  # refused before anything touched the program
        else:  # a machine where gdb can inject: the attached program pauses inside its loop
            assert not result.is_error, result.content
            paused = await _call(client, "debug_pause", {"waitMs": 60000})
            assert paused["state"] == "stopped" and paused["at"].startswith("loop.py:"), paused
            await _call(client, "stop_debug_session")
        await _call(client, "cancel_job", {"jobId": job["jobId"]})
    assert not _gone(root)

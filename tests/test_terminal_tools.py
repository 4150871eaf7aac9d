"""Terminal tools through a real MCP client session (and the seed's REST door): commands, terminal
sessions, jobs, progress, cancellation, trust and the seed's result shapes."""

from __future__ import annotations

import os
import platform
import re
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp_types
import pytest

from mcp_server_ide.server import ServerOptions
from mcp_server_ide.workspace import Policy

from .support.results import call, error, payload
from .test_processes import alive_with, marker, wait_alive, wait_gone

pytestmark = pytest.mark.anyio


# ---------------------------------------------------------------------------------------------
# run_command_on_background


async def test_run_command_seed_shape_and_fields(mcp: Any, ws_path: Path) -> None:
    (ws_path / "sub").mkdir()
    async with mcp(ws_path) as client:
        out = await call(client, "run_command_on_background", command="echo hi; echo warn >&2; exit 3")
        assert out["stdout"] == "hi\n" and out["stderr"] == "warn\n" and out["exitCode"] == 3
        assert out == {"stdout": "hi\n", "stderr": "warn\n", "exitCode": 3}  # no false flags, no duration
        quiet = await call(client, "run_command_on_background", command="true")
        assert quiet == {"exitCode": 0}  # empty streams are left out
        out = await call(
            client,
            "run_command_on_background",
            command="pwd; echo $GREETING",
            cwd="sub",
            env={"GREETING": "hej"},
        )
        assert out["stdout"] == f"{ws_path / 'sub'}\nhej\n"
        out = await call(
            client, "run_command_on_background", command="node -v || true"
        )  # the seed's example runs
        assert out["exitCode"] == 0


async def test_run_command_timeout_kills_tree_and_reports_it(mcp: Any, ws_path: Path) -> None:
    a, b = marker(), marker()
    async with mcp(ws_path) as client:
        started = time.monotonic()
        out = await call(
            client,
            "run_command_on_background",
            command=f"echo before; setsid -f sleep {a}; trap '' TERM; sleep {b}",
            timeout=800,
        )
        assert out["timedOut"] is True and out["stdout"] == "before\n" and out["exitCode"] == -9
        assert time.monotonic() - started < 8
    assert wait_gone(a, 3) == [] and wait_gone(b, 3) == []


async def test_run_command_output_cap(mcp: Any, ws_path: Path) -> None:
    async with mcp(ws_path) as client:
        out = await call(client, "run_command_on_background", command="seq 1 200000", maxOutputBytes=1000)
        assert out["truncated"] is True and out["exitCode"] == 0
        assert out["stdout"].startswith("1\n2\n") and out["stdout"].endswith("\n200000\n")
        assert "bytes truncated]…" in out["stdout"] and len(out["stdout"]) < 1100
        flood = await call(client, "run_command_on_background", command="yes", timeout=1000)
        assert flood["timedOut"] and flood["truncated"] and len(flood["stdout"]) <= 200_100


async def test_run_command_refusals(mcp: Any, ws_path: Path, tmp_path: Path) -> None:
    (ws_path / "link").symlink_to(tmp_path)
    async with mcp(ws_path) as client:
        for cwd in ("..", "/etc", "link", "../ws_evil"):
            text = await error(client, "run_command_on_background", command="touch x", cwd=cwd)
            assert "outside the workspace" in text and str(tmp_path) not in text
        assert not (tmp_path / "x").exists()
        assert "empty" in await error(client, "run_command_on_background", command="  ")
        assert "timeout" in await error(client, "run_command_on_background", command="true", timeout=-5)
        assert "environment variable" in await error(
            client, "run_command_on_background", command="true", env={"A=B": "1"}
        )


async def test_run_command_env_has_no_server_secrets(
    mcp: Any, ws_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret_value")
    monkeypatch.setenv("MCP_IDE_TOKEN", "server-token")
    monkeypatch.setenv("DATABASE_PASSWORD", "pw")
    async with mcp(ws_path) as client:
        out = await call(client, "run_command_on_background", command="env")
    assert (
        "ghp_secret_value" not in out["stdout"]
        and "server-token" not in out["stdout"]
        and "DATABASE_PASSWORD" not in out["stdout"]
    )
    assert "PATH=" in out["stdout"]


async def test_run_command_stdin_is_closed(mcp: Any, ws_path: Path) -> None:
    async with mcp(ws_path) as client:
        started = time.monotonic()
        out = await call(
            client,
            "run_command_on_background",
            command="cat; python3 -c 'import sys; print(repr(sys.stdin.read()))'",
            timeout=20000,
        )
        assert out["stdout"] == "''\n" and "timedOut" not in out and time.monotonic() - started < 5


async def test_run_command_reports_progress(mcp: Any, ws_path: Path) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with mcp(ws_path) as client:
        result = await client.call_tool(
            "run_command_on_background",
            {"command": "echo a; sleep 2.3; echo b", "timeout": 30000},
            progress_callback=on_progress,
        )
    assert payload(result)["stdout"] == "a\nb\n"
    assert len(seen) >= 2 and seen[0][1] == 30.0 and "running for" in (seen[0][2] or "")
    assert seen[-1][0] > seen[0][0]


async def test_cancelling_the_call_kills_the_command(mcp: Any, ws_path: Path) -> None:
    a = marker()
    async with mcp(ws_path) as client:
        with anyio.move_on_after(1.0):
            await client.call_tool(
                "run_command_on_background", {"command": f"setsid -f sleep {a}; sleep {a}", "timeout": 600000}
            )
        assert wait_gone(a, 6) == []
        out = await call(client, "run_command_on_background", command="echo still-serving")
        assert out["stdout"] == "still-serving\n"


def answering(answer: bool, asked: list[str]) -> Any:
    async def callback(context: Any, params: Any) -> Any:
        asked.append(params.message)
        return mcp_types.ElicitResult(action="accept" if answer else "decline", content={"confirm": answer})

    return callback


async def test_untrusted_workspace_asks_before_running(mcp: Any, ws_path: Path) -> None:
    untrusted = Policy(trusted=False)
    async with mcp(ws_path, policy=untrusted) as client:  # the client cannot be asked: refused
        text = await error(client, "run_command_on_background", command="touch ran")
        assert "untrusted workspace" in text
        assert "untrusted" in await error(client, "start_job", command="touch ran")
        assert "untrusted" in await error(client, "execute_terminal_command", command="touch ran")
        assert "untrusted" in await error(client, "execute_os_specific_command", command="touch ran")
    assert not (ws_path / "ran").exists()
    asked: list[str] = []
    async with mcp(ws_path, policy=untrusted, elicitation_callback=answering(False, asked)) as client:
        assert "declined" in await error(client, "run_command_on_background", command="touch ran")
    assert not (ws_path / "ran").exists()
    async with mcp(ws_path, policy=untrusted, elicitation_callback=answering(True, asked)) as client:
        out = await call(client, "run_command_on_background", command="touch ran && echo ok")
        assert out["stdout"] == "ok\n"
    assert (ws_path / "ran").exists() and len(asked) == 2 and "touch ran" in asked[0]
    async with mcp(ws_path, policy=Policy(trusted=False, confirm_policy="allow")) as client:
        assert (await call(client, "run_command_on_background", command="echo allowed"))[
            "stdout"
        ] == "allowed\n"


async def test_read_only_server_refuses_commands_but_reads_output(mcp: Any, ws_path: Path) -> None:
    async with mcp(ws_path, options=ServerOptions(read_only=True)) as client:
        assert "--read-only" in await error(client, "run_command_on_background", command="touch x")
        assert "--read-only" in await error(client, "start_job", command="touch x")
        assert await call(client, "list_jobs") == []
        assert (await call(client, "get_terminal_info"))["isDefault"] is True
    assert not (ws_path / "x").exists()


# ---------------------------------------------------------------------------------------------
# wait, get_terminal_info, execute_os_specific_command


async def test_wait_seed_shape_and_cancellation(mcp: Any, ws_path: Path) -> None:
    async with mcp(ws_path) as client:
        started = time.monotonic()
        out = await call(client, "wait", milliseconds=300)
        assert out == {"status": "completed", "message": "Waited for 300 milliseconds"}
        assert time.monotonic() - started >= 0.29  # it waited (how much longer is the machine's load)
        assert "0 or more" in await error(client, "wait", milliseconds=-1)
        started = time.monotonic()
        with anyio.move_on_after(0.5):
            await client.call_tool("wait", {"milliseconds": 600000})
        # Cancelled, not waited out (600 s): a bound far from both, so a loaded machine cannot fail it.
        assert time.monotonic() - started < 60
        assert (await call(client, "wait", milliseconds=0))["status"] == "completed"


async def test_terminal_info_is_the_real_os(mcp: Any, ws_path: Path) -> None:
    async with mcp(ws_path) as client:
        info = await call(client, "get_terminal_info")
    assert info["osType"] == {"Linux": "Linux", "Darwin": "macOS", "Windows": "Windows"}[platform.system()]
    assert info["isIntegratedTerminal"] is False and info["isDefault"] is True
    assert info["terminalType"] == os.path.basename(info["shell"]) and os.access(info["shell"], os.X_OK)
    if platform.system() == "Linux":
        pretty = platform.freedesktop_os_release().get("PRETTY_NAME", "")
        assert pretty in info["osVersion"] and platform.release() in info["osVersion"]


async def test_os_specific_command_picks_this_os(mcp: Any, ws_path: Path) -> None:
    (ws_path / "a.txt").write_text("x")
    async with mcp(ws_path) as client:
        out = await call(
            client, "execute_os_specific_command", windowsCommand="dir", unixCommand="ls", macCommand="ls -G"
        )
        assert out["osType"] == "Linux" and out["command"] == "ls" and out["executed"] is True
        assert out["commandSource"] == "unixCommand" and out["stdout"] == "a.txt\n" and out["exitCode"] == 0
        fallback = await call(
            client, "execute_os_specific_command", windowsCommand="dir", command="echo generic"
        )
        assert (
            fallback["command"] == "echo generic"
            and fallback["commandSource"] == "command"
            and fallback["stdout"] == "generic\n"
        )
        text = await error(client, "execute_os_specific_command", windowsCommand="dir")
        assert "no command for Linux" in text


# ---------------------------------------------------------------------------------------------
# Terminal sessions


async def test_execute_terminal_command_seed_shape_then_read_output(mcp: Any, ws_path: Path) -> None:
    async with mcp(ws_path) as client:
        out = await call(client, "execute_terminal_command", command="echo one; echo two")
        assert out["status"] == "executed" and out["terminalId"] and isinstance(out["outputOffset"], int)
        read = await call(
            client,
            "read_terminal_output",
            terminalId=out["terminalId"],
            offset=out["outputOffset"],
            waitMs=5000,
        )
        assert read["output"].startswith("echo one; echo two\none\ntwo\n") and read["busy"] is False
        assert read["lastExitCode"] == 0
        again = await call(
            client, "read_terminal_output", terminalId=out["terminalId"], offset=read["nextOffset"]
        )
        assert "output" not in again and again["nextOffset"] == read["nextOffset"]  # nothing new
        assert not {"terminalId", "offset", "skippedBytes", "hasMore"} & set(again)  # defaults and echoes


async def test_terminal_session_keeps_state_and_is_interactive(mcp: Any, ws_path: Path) -> None:
    (ws_path / "sub").mkdir()
    async with mcp(ws_path) as client:
        first = await call(client, "execute_terminal_command", command="cd sub; export NAME=ide", waitMs=5000)
        tid = first["terminalId"]
        assert first["finished"] is True and first["exitCode"] == 0
        out = await call(
            client,
            "execute_terminal_command",
            command="pwd; echo $NAME; test -t 0 && echo tty",
            terminalId=tid,
            waitMs=5000,
        )
        assert out["output"] == f"{ws_path / 'sub'}\nide\ntty\n"
        # a prompt answered through send_terminal_input
        asking = await call(
            client,
            "execute_terminal_command",
            command="read -p 'name? ' who; echo \"hello $who\"",
            terminalId=tid,
        )
        seen = await call(
            client,
            "read_terminal_output",
            terminalId=tid,
            offset=asking["outputOffset"],
            waitMs=3000,
            untilPattern=r"name\? ",
        )
        assert seen["patternMatched"] is True and seen["busy"] is True
        sent = await call(client, "send_terminal_input", terminalId=tid, text="bob", pressEnter=True)
        assert sent["bytesSent"] == 4
        done = await call(
            client, "read_terminal_output", terminalId=tid, offset=sent["outputOffset"], waitMs=5000
        )
        assert "hello bob" in done["output"] and done["busy"] is False
        # a failing command's exit status
        failed = await call(
            client, "execute_terminal_command", command="(exit 5)", terminalId=tid, waitMs=5000
        )
        assert failed["exitCode"] == 5


async def test_ctrl_c_interrupts_and_busy_terminals(mcp: Any, ws_path: Path) -> None:
    a = marker()
    async with mcp(ws_path) as client:
        run = await call(client, "execute_terminal_command", command=f"sleep {a}")
        tid = run["terminalId"]
        assert wait_alive(a)
        text = await error(client, "execute_terminal_command", command="echo hi", terminalId=tid)
        assert "still running" in text
        other = await call(client, "execute_terminal_command", command="echo elsewhere", waitMs=5000)
        assert other["terminalId"] != tid and other["output"] == "elsewhere\n"
        await call(client, "send_terminal_input", terminalId=tid, key="ctrl+c")
        read = await call(
            client, "read_terminal_output", terminalId=tid, offset=run["outputOffset"], waitMs=5000
        )
        assert read["busy"] is False and read["lastExitCode"] == 130, read
        assert wait_gone(a, 3) == []
        terminals = await call(client, "list_terminals")
        assert {t["terminalId"] for t in terminals} == {tid, other["terminalId"]}
        assert all(t["state"] == "running" and t["shell"] for t in terminals)


async def test_kill_terminal_kills_everything_in_it(mcp: Any, ws_path: Path) -> None:
    a, b = marker(), marker()
    async with mcp(ws_path) as client:
        term = await call(client, "create_terminal", name="servers")
        tid = term["terminalId"]
        assert term["name"] == "servers" and term["state"] == "running" and term["busy"] is False
        await call(
            client,
            "execute_terminal_command",
            command=f"sleep {a} & setsid -f sleep {b}",
            terminalId=tid,
            waitMs=3000,
        )
        assert wait_alive(a) and wait_alive(b)
        killed = await call(client, "kill_terminal", terminalId=tid)
        assert killed["state"] == "killed"
        assert wait_gone(a, 3) == [] and wait_gone(b, 3) == []
        assert "has ended" in await error(
            client, "execute_terminal_command", command="echo x", terminalId=tid
        )
        assert "no terminal" in await error(client, "read_terminal_output", terminalId="terminal-999")
        assert (await call(client, "kill_terminal", terminalId=tid))["state"] == "killed"  # idempotent


async def test_terminal_output_from_offsets_and_escapes(mcp: Any, ws_path: Path) -> None:
    async with mcp(ws_path) as client:
        out = await call(
            client,
            "execute_terminal_command",
            command="printf '\\033[1;32mgreen\\033[0m\\r\\n'; seq 1 3",
            waitMs=5000,
        )
        assert out["output"] == "green\n1\n2\n3\n"
        tid = out["terminalId"]
        part = await call(
            client, "read_terminal_output", terminalId=tid, offset=out["outputOffset"], maxBytes=5
        )
        assert len(part["output"]) == 5 and part["hasMore"] is True
        rest = await call(client, "read_terminal_output", terminalId=tid, offset=part["nextOffset"])
        assert (part["output"] + rest["output"]).startswith("printf")
        assert "invalid untilPattern" in await error(
            client, "read_terminal_output", terminalId=tid, waitMs=10, untilPattern="("
        )


# ---------------------------------------------------------------------------------------------
# Jobs


async def test_job_lifecycle(mcp: Any, ws_path: Path) -> None:
    async with mcp(ws_path) as client:
        job = await call(
            client,
            "start_job",
            command="echo starting; sleep 0.3; echo 'listening on 8080'; sleep 30",
            title="server",
        )
        jid = job["jobId"]
        assert job["state"] == "running" and job["title"] == "server" and "acceptsInput" not in job
        assert not {"exitCode", "durationMs"} & set(job)
        ready = await call(client, "get_job_output", jobId=jid, waitMs=10000, untilPattern="listening on")
        assert ready["patternMatched"] is True and ready["state"] == "running"
        assert ready["output"] == "starting\nlistening on 8080\n"
        listed = await call(client, "list_jobs")
        assert [j["jobId"] for j in listed] == [jid] and listed[0]["state"] == "running"
        cancelled = await call(client, "cancel_job", jobId=jid)
        assert cancelled["state"] == "killed" and cancelled["exitCode"] is not None and "endedAt" in cancelled
        assert (await call(client, "cancel_job", jobId=jid))["state"] == "killed"
        final = await call(client, "get_job_output", jobId=jid, offset=ready["nextOffset"])
        assert "output" not in final and final["state"] == "killed" and "durationMs" not in final


async def test_job_output_waits_for_the_end_and_reads_incrementally(mcp: Any, ws_path: Path) -> None:
    async with mcp(ws_path) as client:
        job = await call(
            client, "start_job", command="for i in 1 2 3 4; do echo $i; sleep 0.1; done; echo bad >&2; exit 2"
        )
        first = await call(client, "get_job_output", jobId=job["jobId"], maxBytes=2)
        out = await call(
            client, "get_job_output", jobId=job["jobId"], waitMs=10000, offset=first["nextOffset"]
        )
        assert out["state"] == "exited" and out["exitCode"] == 2
        assert first["output"] + out["output"] == "1\n2\n3\n4\nbad\n"


async def test_job_input_and_timeout(mcp: Any, ws_path: Path) -> None:
    a = marker()
    async with mcp(ws_path) as client:
        job = await call(
            client, "start_job", command='while read line; do echo "got $line"; done; echo eof', stdin=True
        )
        jid = job["jobId"]
        await call(client, "send_job_input", jobId=jid, text="one\ntwo\n")
        await call(client, "send_job_input", jobId=jid, closeInput=True)
        out = await call(client, "get_job_output", jobId=jid, waitMs=5000)
        assert out["output"] == "got one\ngot two\neof\n" and out["exitCode"] == 0
        assert "has ended" in await error(client, "send_job_input", jobId=jid, text="x")
        plain = await call(client, "start_job", command=f"sleep {a}", timeout=500)
        assert "without stdin" in await error(client, "send_job_input", jobId=plain["jobId"], text="x")
        timed = await call(client, "get_job_output", jobId=plain["jobId"], waitMs=8000)
        assert timed["state"] == "timed_out"
        assert wait_gone(a, 3) == []
        assert "no job" in await error(client, "get_job_output", jobId="job-nope")


async def test_job_output_description_names_every_job_state(mcp: Any, ws_path: Path) -> None:
    """The assistant reads what `state` can be from get_job_output's description: every state a job can
    end in (the engine's JobState), `failed` included (work the server ran itself, such as an action's
    fetch, that failed)."""
    from typing import get_args

    from mcp_server_ide.engines.processes.jobs import JobState

    async with mcp(ws_path) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
    described = set(re.findall(r"[a-z_]+", listed["get_job_output"].description or ""))
    assert [s for s in get_args(JobState) if s not in described] == []


async def test_jobs_and_terminals_end_with_the_session(mcp: Any, ws_path: Path) -> None:
    a, b = marker(), marker()
    async with mcp(ws_path) as client:
        await call(client, "start_job", command=f"setsid -f sleep {a}; sleep {a}")
        await call(client, "execute_terminal_command", command=f"sleep {b}")
        assert wait_alive(a) and wait_alive(b)
    assert wait_gone(a, 5) == [] and wait_gone(b, 5) == []
    assert alive_with(a) == []


# ---------------------------------------------------------------------------------------------
# The seed's REST door


def test_rest_door_terminal_tools(http_server: Any, ws_path: Path) -> None:
    server = http_server(ws_path)

    def post(tool: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        response = httpx.post(f"{server.url}/mcp/{tool}", json=body, timeout=30)
        return response.status_code, response.json()

    code, env = post("run_command_on_background", {"command": "node -v || echo no-node"})
    assert code == 200 and env["error"] is None and env["status"]["exitCode"] == 0
    assert {"stdout", "stderr", "exitCode", "timedOut", "truncated", "durationMs"} <= set(env["status"])
    code, env = post("execute_terminal_command", {"command": "npm list --depth=0 || true"})
    assert code == 200 and env["status"]["status"] == "executed" and env["status"]["terminalId"]
    code, env = post("wait", {"jsonrpc": "2.0", "id": 1, "params": {"arguments": {"milliseconds": 20}}})
    assert env == {"status": {"status": "completed", "message": "Waited for 20 milliseconds"}, "error": None}
    code, env = post("get_terminal_info", {})
    assert code == 200 and {
        "osType",
        "osVersion",
        "terminalType",
        "isIntegratedTerminal",
        "isDefault",
    } <= set(env["status"])
    code, env = post(
        "execute_os_specific_command",
        {"windowsCommand": "dir", "unixCommand": "ls -la", "macCommand": "ls -la"},
    )
    assert code == 200 and env["status"]["command"] == "ls -la" and env["status"]["executed"] is True
    code, env = post("run_command_on_background", {"command": "pwd", "cwd": "../.."})
    assert code == 403 and env["status"] is None and "outside the workspace" in env["error"]
    code, env = post("start_job", {"command": "echo from-job"})
    jid = env["status"]["jobId"]
    code, env = post("get_job_output", {"jobId": jid, "waitMs": 5000})
    assert env["status"]["output"] == "from-job\n" and env["status"]["state"] == "exited"
    code, env = post("get_job_output", {"jobId": "nope"})
    assert code == 404 and "no job" in env["error"]


IGNORING_LAUNCHER = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)  # as nohup, some launchers and test runners leave it
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGQUIT})
os.execv(sys.executable, [sys.executable, "-m", "mcp_server_ide", *sys.argv[1:]])
"""


async def test_commands_start_with_default_signals_whatever_the_server_inherited(ws_path: Path) -> None:
    """A server started with SIGINT ignored and SIGQUIT blocked (both survive exec) still gives its
    commands default signals: ctrl+c interrupts a terminal's program, and a one-shot command sees
    nothing ignored or blocked. (Terminals inherited them, so ctrl+c interrupted nothing.)"""
    import sys

    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", IGNORING_LAUNCHER, "--workspace", str(ws_path)],
        env=dict(os.environ),
    )
    a = marker()
    async with Client(params) as client:
        probe = "grep -E '^Sig(Blk|Ign)' /proc/self/status"
        one_shot = (await call(client, "run_command_on_background", command=probe))["stdout"]
        in_terminal = (await call(client, "execute_terminal_command", command=probe, waitMs=10000))["output"]
        for text in (one_shot, in_terminal):
            fields = dict(line.split(":", 1) for line in text.splitlines() if line.startswith("Sig"))
            assert int(fields["SigBlk"], 16) == 0, text
            assert not int(fields["SigIgn"], 16) & (1 << (2 - 1) | 1 << (3 - 1)), text  # SIGINT, SIGQUIT
        run = await call(client, "execute_terminal_command", command=f"sleep {a}")
        tid = run["terminalId"]
        assert wait_alive(a)
        await call(client, "send_terminal_input", terminalId=tid, key="ctrl+c")
        read = await call(
            client, "read_terminal_output", terminalId=tid, offset=run["outputOffset"], waitMs=10000
        )
        assert read["busy"] is False and read["lastExitCode"] == 130, read
        assert wait_gone(a, 3) == []

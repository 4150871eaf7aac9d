"""The process engine's containment (SECURITY.md §4) with real processes, checked through /proc.

Every command carries a unique marker (an unusual ``sleep`` duration) so a test can tell whether
any process of its tree survived; zombies count as dead (they hold no resources but a pid and
are reaped by their parent, which here may be a pid 1 that does not reap).
"""

from __future__ import annotations

import os
import random
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_server_ide.engines import processes
from mcp_server_ide.registry import ToolFailure
from mcp_server_ide.workspace import Policy, Workspace

from .support.net import initialize
from .support.system import require_system


def marker() -> str:
    """A sleep duration no other process on the machine uses."""
    return f"{random.randint(100000, 999999)}.{random.randint(1000, 9999)}"


def alive_with(mark: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmd = f.read()
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        state = stat[stat.rindex(b")") + 2 :][:1]
        if mark.encode() in cmd and state not in (b"Z", b"X"):
            found.append(int(name))
    return found


def wait_gone(mark: str, timeout: float = 8.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive_with(mark):
            return []
        time.sleep(0.05)
    return alive_with(mark)


def wait_alive(mark: str, timeout: float = 5.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = alive_with(mark)
        if found:
            return found
        time.sleep(0.02)
    return []


@pytest.fixture
def ws(ws_path: Path) -> Any:
    workspace = Workspace.open(ws_path)
    yield workspace
    workspace.close()


# ---------------------------------------------------------------------------------------------
# Timeouts kill the whole tree


@pytest.mark.parametrize(
    "template",
    [
        "sleep {a}",
        "setsid sleep {a} & sleep {b}",  # a child in its own session, parent still alive
        "setsid -f sleep {a}; sleep {b}",  # double fork + setsid: re-parented away from us
        "(setsid sh -c 'sleep {a}' >/dev/null 2>&1 </dev/null &); sleep {b}",  # classic daemon
        "trap '' TERM; sleep {a}",  # ignores SIGTERM
        "sh -c \"trap '' TERM; sleep {a}\" & trap '' TERM; sleep {b}",
        "sleep {a} & sleep {b} & wait",
        "nohup sleep {a} >/dev/null 2>&1 & sleep {b}",
    ],
)
def test_timeout_kills_the_whole_tree(ws: Workspace, template: str) -> None:
    a, b = marker(), marker()
    started = time.monotonic()
    done = processes.run(template.format(a=a, b=b), ws=ws, timeout_s=0.7, grace_s=0.5)
    took = time.monotonic() - started
    assert done.timed_out and done.exit_code is not None and done.exit_code < 0
    assert took < 5, took
    assert wait_gone(a, 3) == [] and wait_gone(b, 3) == []


def test_sigterm_first_then_sigkill_after_grace(ws: Workspace) -> None:
    ok = processes.run("trap 'echo got-term; exit 7' TERM; sleep 30 & wait", ws=ws, timeout_s=0.5, grace_s=3)
    assert ok.timed_out and "got-term" in ok.stdout and ok.exit_code == 7
    stubborn = processes.run("trap '' TERM; while :; do sleep 0.05; done", ws=ws, timeout_s=0.3, grace_s=0.4)
    assert stubborn.timed_out and stubborn.exit_code == -signal.SIGKILL
    assert stubborn.duration_ms < 3000


def test_leftover_background_processes_are_stopped_when_the_command_exits(ws: Workspace) -> None:
    a, b, c = marker(), marker(), marker()
    # holds our pipes open: noticed at once
    held = processes.run(f"sleep {a} & echo started", ws=ws, timeout_s=30)
    assert held.stdout == "started\n" and not held.timed_out and held.duration_ms < 5000
    assert wait_gone(a, 3) == []
    # closed its output and left the session: found through /proc by the background sweep
    processes.run(f"setsid -f sh -c 'sleep {b}' >/dev/null 2>&1 </dev/null", ws=ws, timeout_s=30)
    processes.run(f"(sleep {c} >/dev/null 2>&1 &)", ws=ws, timeout_s=30)
    processes.flush_sweeps()
    assert wait_gone(b, 3) == [] and wait_gone(c, 3) == []


def test_fork_storm_is_contained(ws: Workspace) -> None:
    a = marker()
    script = f"for i in $(seq 1 20); do (while :; do sleep {a}; done) & done; wait"
    done = processes.run(script, ws=ws, timeout_s=1, grace_s=0.3)
    assert done.timed_out
    assert wait_gone(a, 5) == []


# ---------------------------------------------------------------------------------------------
# Output caps and memory


def _rss_kb() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def test_yes_flood_keeps_output_and_memory_bounded(ws: Workspace) -> None:
    before = _rss_kb()
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    done = processes.run("yes", ws=ws, timeout_s=1.5, max_output=64_000, grace_s=0.5)
    assert done.timed_out and done.truncated
    assert done.stdout_total > 50_000_000  # it really flooded (hundreds of MB)
    assert len(done.stdout_bytes) < 64_000 + 100
    assert done.stdout.startswith("y\ny\n") and done.stdout.endswith("y\n")
    assert "bytes truncated]…" in done.stdout
    growth_mb = (_rss_kb() - before) / 1024
    peak_growth_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before) / 1024
    assert growth_mb < 40 and peak_growth_mb < 40, (growth_mb, peak_growth_mb)


def test_flood_on_both_streams_and_async_flood(ws: Workspace) -> None:
    done = processes.run("yes out & yes err >&2", ws=ws, timeout_s=1, max_output=10_000, grace_s=0.5)
    assert done.truncated and len(done.stdout_bytes) < 10_100 and len(done.stderr_bytes) < 10_100
    assert done.stderr.startswith("err\n")

    async def flood() -> processes.Completed:
        return await processes.run_async("yes", ws=ws, timeout_s=1, max_output=5_000, grace_s=0.5)

    result = anyio.run(flood)
    assert result.timed_out and result.truncated and len(result.stdout_bytes) < 5_100


def test_head_and_tail_are_kept_around_the_marker(ws: Workspace) -> None:
    done = processes.run("seq 1 100000", ws=ws, max_output=2000)
    assert done.truncated and not done.timed_out and done.exit_code == 0
    text = done.stdout
    assert text.startswith("1\n2\n3\n") and text.endswith("99999\n100000\n")
    head, _, tail = text.partition("…[")
    dropped = int(tail.split(" bytes truncated]…", 1)[0])
    assert (
        dropped
        == done.stdout_total - len(head.rstrip("\n").encode()) - len(tail.split("]…\n", 1)[1].encode()) - 1
    )
    small = processes.run("printf 'héllo wörld'", ws=ws, max_output=2000)
    assert small.stdout == "héllo wörld" and not small.truncated


def test_truncation_never_splits_a_character(ws: Workspace) -> None:
    done = processes.run("python3 -c \"print('é' * 50000)\"", ws=ws, max_output=1001)
    assert done.truncated and "\ufffd" not in done.stdout


# ---------------------------------------------------------------------------------------------
# Environment, cwd, stdin


def test_environment_has_no_server_secrets(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    secrets = {
        "GITHUB_TOKEN": "ghp_x",
        "GH_TOKEN": "x",
        "MY_SERVICE_SECRET": "x",
        "DB_PASSWORD": "x",
        "OPENAI_API_KEY": "x",
        "ANTHROPIC_API_KEY": "x",
        "AWS_SECRET_ACCESS_KEY": "x",
        "AWS_ACCESS_KEY_ID": "x",
        "MCP_IDE_TOKEN": "x",
        "MCP_IDE_ANYTHING": "x",
        "NPM_CONFIG__AUTH": "x",
        "SSH_AUTH_SOCK": "/tmp/agent.sock",
        "HTTPS_PROXY": "http://user:pw@proxy:3128",
        "RANDOM_UNLISTED_VAR": "x",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    done = processes.run("env", ws=ws, env={"FOO": "bar", "MY_OWN_TOKEN": "given-by-caller"})
    seen = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    for name in secrets:
        assert name not in seen, name
    assert seen["FOO"] == "bar" and seen["MY_OWN_TOKEN"] == "given-by-caller"  # the caller's own values pass
    assert seen["PATH"] and seen["HOME"] and "LANG" in seen
    assert processes.is_secret_name("GITLAB_TOKEN") and not processes.is_secret_name("PATH")


def test_bad_environment_names_are_refused(ws: Workspace) -> None:
    for bad in ({"A=B": "x"}, {"": "x"}, {"1X": "x"}, {"X": "a\x00b"}):
        with pytest.raises(ToolFailure):
            processes.run("true", ws=ws, env=bad)


def test_cwd_must_stay_inside_the_workspace(ws: Workspace, ws_path: Path, tmp_path: Path) -> None:
    (ws_path / "sub").mkdir()
    (ws_path / "file.txt").write_text("x")
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws_path / "escape").symlink_to(outside)
    (ws_path.parent / f"{ws_path.name}_evil").mkdir()
    assert processes.run("pwd", ws=ws, cwd="sub").stdout.strip() == str(ws_path / "sub")
    assert processes.run("pwd", ws=ws).stdout.strip() == str(ws_path)
    for bad in (
        "..",
        "../outside",
        "/etc",
        "escape",
        "sub/../../",
        f"../{ws_path.name}_evil",
        "/proc/self/root",
    ):
        with pytest.raises(ToolFailure) as info:
            processes.run("touch created-here", ws=ws, cwd=bad)
        assert "outside the workspace" in str(info.value), bad
    assert not (outside / "created-here").exists()
    with pytest.raises(ToolFailure, match=r"not a folder|is a file"):
        processes.run("true", ws=ws, cwd="file.txt")
    with pytest.raises(ToolFailure, match="does not exist"):
        processes.run("true", ws=ws, cwd="missing")


def test_stdin_is_closed(ws: Workspace) -> None:
    started = time.monotonic()
    done = processes.run("cat; read x || echo no-input", ws=ws, timeout_s=20)
    assert time.monotonic() - started < 5
    assert done.exit_code == 0 and done.stdout == "no-input\n" and not done.timed_out
    fed = processes.run("cat", ws=ws, stdin="given\n" * 50_000)
    assert fed.stdout_total == 6 * 50_000


def test_no_controlling_terminal_so_no_password_prompt(ws: Workspace) -> None:
    done = processes.run("echo x > /dev/tty", ws=ws, timeout_s=10)
    assert done.exit_code != 0 and not done.timed_out


def test_argv_runs_without_a_shell(ws: Workspace) -> None:
    done = processes.run(["echo", "$HOME", ";", "rm -rf /"], ws=ws)
    assert done.stdout == "$HOME ; rm -rf /\n"
    with pytest.raises(ToolFailure, match="not installed"):
        processes.run(["definitely-not-a-program-xyz"], ws=ws)


def test_own_process_group_and_session(ws: Workspace) -> None:
    done = processes.run("ps -o pid=,pgid=,sid= -p $$", ws=ws)
    pid, pgid, sid = done.stdout.split()
    assert pid == pgid == sid
    assert int(sid) != os.getsid(0)


# ---------------------------------------------------------------------------------------------
# Cancellation, jobs, terminals, shutdown


def test_async_cancellation_kills_the_tree(ws: Workspace) -> None:
    a, b = marker(), marker()

    async def main() -> None:
        with anyio.move_on_after(0.5):
            await processes.run_async(f"setsid -f sleep {a}; sleep {b}", ws=ws, timeout_s=60, grace_s=0.5)

    started = time.monotonic()
    anyio.run(main)
    assert time.monotonic() - started < 4
    assert wait_gone(a, 3) == [] and wait_gone(b, 3) == []


def test_sync_run_stops_on_the_call_cancel_event(ws: Workspace) -> None:
    import threading

    a = marker()
    event = threading.Event()
    threading.Timer(0.3, event.set).start()
    with pytest.raises(ToolFailure, match="cancelled"):
        processes.run(f"sleep {a}", ws=ws, timeout_s=60, cancel=event, grace_s=0.3)
    assert wait_gone(a, 3) == []


def test_async_progress_callback(ws: Workspace) -> None:
    seen: list[tuple[float, int]] = []

    async def on_progress(elapsed: float, output: int) -> None:
        seen.append((elapsed, output))

    async def main() -> processes.Completed:
        return await processes.run_async(
            "echo a; sleep 0.5; echo b", ws=ws, on_progress=on_progress, progress_every_s=0.15
        )

    done = anyio.run(main)
    assert done.stdout == "a\nb\n" and len(seen) >= 2 and seen[-1][1] >= 2


def test_job_output_offsets_input_and_cancel(ws: Workspace) -> None:
    jobs = ws.service(processes.Jobs)
    job = jobs.start("for i in 1 2 3; do echo line$i; sleep 0.1; done; echo oops >&2; exit 4")
    assert job._done.wait(5)
    assert job.state == "exited" and job.exit_code == 4
    text, start, nxt, skipped, more = job.read(0)
    assert (
        text == "line1\nline2\nline3\noops\n" and start == 0 and nxt == len(text) and not skipped and not more
    )
    assert job.read(6)[0] == "line2\nline3\noops\n"
    cat = jobs.start("cat", stdin=True)
    jobs.send(cat.id, b"hello\n")
    deadline = time.monotonic() + 5
    while cat.read(0)[0] != "hello\n" and time.monotonic() < deadline:
        time.sleep(0.02)
    assert cat.read(0)[0] == "hello\n"
    jobs.send(cat.id, b"", close=True)
    assert cat._done.wait(5) and cat.state == "exited" and cat.exit_code == 0
    a = marker()
    long = jobs.start(f"setsid -f sleep {a}; sleep {a}")
    assert wait_alive(a)
    jobs.cancel(long.id)
    assert long.state == "killed" and wait_gone(a, 3) == []
    with pytest.raises(ToolFailure, match="without stdin"):
        no_input = jobs.start("sleep 5")
        try:
            jobs.send(no_input.id, b"x")
        finally:
            jobs.cancel(no_input.id)


def test_job_log_keeps_the_tail_of_huge_output(ws: Workspace) -> None:
    jobs = ws.service(processes.Jobs)
    job = jobs.start("yes abcdefgh | head -c 20000000; echo; echo END")
    assert job._done.wait(20)
    _, start, _, skipped, more = job.read(0, 100)
    assert skipped > 10_000_000 and start == skipped and more
    last, *_ = job.read(job.log.end - 20)
    assert last.endswith("\nEND\n")


def test_job_timeout(ws: Workspace) -> None:
    a = marker()
    job = ws.service(processes.Jobs).start(f"sleep {a}", timeout_s=0.5)
    assert job._done.wait(8)
    assert job.state == "timed_out" and wait_gone(a, 3) == []


def test_terminal_is_a_real_pty_with_state(ws: Workspace, ws_path: Path) -> None:
    (ws_path / "sub").mkdir()
    terms = ws.service(processes.Terminals)
    term = terms.create()

    def run(cmd: str) -> str:
        rec = terms.execute(term, cmd)
        deadline = time.monotonic() + 10
        while not rec.finished and time.monotonic() < deadline:
            time.sleep(0.02)
        assert rec.finished, term.read(0)
        return term.read(rec.offset, rec.end_offset - rec.offset)[0]

    assert run("test -t 0 && test -t 1 && echo tty") == "test -t 0 && test -t 1 && echo tty\ntty\n"
    run("cd sub && export GREETING=hi")
    assert run("pwd; echo $GREETING").endswith(f"{ws_path / 'sub'}\nhi\n")
    assert run("printf '\\033[31mred\\033[0m\\n'").endswith("\nred\n")  # colours stripped
    run("false")
    assert term.last.exit_code == 1
    b = marker()
    run(f"sleep {b} &")
    assert wait_alive(b)
    ws.close()
    assert term.state == "killed" and wait_gone(b, 3) == []


def test_workspace_close_kills_jobs_and_terminals(ws_path: Path) -> None:
    ws = Workspace.open(ws_path, policy=Policy())
    a, b, c = marker(), marker(), marker()
    ws.service(processes.Jobs).start(f"sleep {a}")
    ws.service(processes.Jobs).start(f"setsid -f sleep {b}; sleep {b}")
    terms = ws.service(processes.Terminals)
    terms.execute(terms.create(), f"sleep {c}")
    assert wait_alive(a) and wait_alive(b) and wait_alive(c)
    started = time.monotonic()
    ws.close()
    assert time.monotonic() - started < 10
    assert wait_gone(a, 3) == [] and wait_gone(b, 3) == [] and wait_gone(c, 3) == []


# ---------------------------------------------------------------------------------------------
# Nothing outlives the server process


def _stdio_server(ws_path: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "mcp_server_ide", "--workspace", str(ws_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _rpc(proc: subprocess.Popen[bytes], messages: list[dict[str, Any]], replies: int) -> list[dict[str, Any]]:
    import json

    assert proc.stdin is not None and proc.stdout is not None
    for message in messages:
        proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()
    answers = []
    while len(answers) < replies:
        line = proc.stdout.readline()
        assert line, "server closed its output"
        data = json.loads(line)
        if "id" in data:
            answers.append(data)
    return answers


def _start_work(proc: subprocess.Popen[bytes], a: str, b: str, c: str) -> None:
    init = initialize()
    _rpc(proc, [init], 1)
    calls = [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "start_job", "arguments": {"command": f"setsid -f sleep {a}; sleep {a}"}},
        },
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {
                "name": "execute_terminal_command",
                "arguments": {"command": f"sleep {b} & sleep {b}"},
            },
        },
    ]
    answers = _rpc(proc, calls, 2)
    assert all("error" not in x and not x["result"].get("isError") for x in answers), answers
    # a one-shot command still running when the server goes away
    proc.stdin.write(
        (
            '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_command_on_background",'
            f'"arguments":{{"command":"sleep {c}","timeout":600000}}}}}}\n'
        ).encode()
    )
    proc.stdin.flush()
    assert wait_alive(a) and wait_alive(b) and wait_alive(c)


def test_stdio_eof_leaves_no_process_behind(ws_path: Path) -> None:
    a, b, c = marker(), marker(), marker()
    proc = _stdio_server(ws_path)
    try:
        _start_work(proc, a, b, c)
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(20)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert wait_gone(a, 5) == [] and wait_gone(b, 5) == [] and wait_gone(c, 5) == []


def test_sigterm_to_the_server_leaves_no_process_behind(ws_path: Path) -> None:
    a, b, c = marker(), marker(), marker()
    proc = _stdio_server(ws_path)
    try:
        _start_work(proc, a, b, c)
        proc.send_signal(signal.SIGTERM)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert wait_gone(a, 5) == [] and wait_gone(b, 5) == [] and wait_gone(c, 5) == []


def test_sigkill_of_the_server_takes_long_lived_children_with_it(ws_path: Path) -> None:
    """PR_SET_PDEATHSIG: a job's and a terminal's own process die with the server even on SIGKILL."""
    a, b, c = marker(), marker(), marker()
    proc = _stdio_server(ws_path)
    try:
        _rpc(
            proc,
            [
                initialize(),
            ],
            1,
        )
        _rpc(
            proc,
            [
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "tools/call",
                    "params": {"name": "start_job", "arguments": {"command": f"exec sleep {a}"}},
                },
            ],
            1,
        )
        assert wait_alive(a)
        proc.kill()
        proc.wait(10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert wait_gone(a, 5) == []
    del b, c


# ---------------------------------------------------------------------------------------------
# Hosted workspaces: commands run inside bubblewrap


def test_hosted_commands_run_in_a_sandbox(ws_path: Path, tmp_path: Path) -> None:
    require_system("bwrap", "bubblewrap")
    (ws_path.parent / "other-tenant").mkdir()
    (ws_path.parent / "other-tenant" / "secret.txt").write_text("theirs")
    hosted = Workspace.open(ws_path, policy=Policy(hosted=True))
    try:
        done = processes.run(
            f"id -u; touch made-inside; ls -A {ws_path.parent}; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '; "
            f"ls -A ~ | wc -l; cat {ws_path.parent}/other-tenant/secret.txt",
            ws=hosted,
            timeout_s=30,
        )
        lines = done.stdout.splitlines()
        assert int(lines[0]) not in (0, os.getuid())  # another user
        assert (ws_path / "made-inside").exists()  # the workspace is writable
        assert lines[1] == ws_path.name  # the projects beside it are hidden
        assert lines[2] == "lo"  # no network
        assert lines[3] == "0"  # the server's home is hidden
        assert "theirs" not in done.stdout and done.exit_code != 0
        a = marker()
        timed = processes.run(
            f"setsid -f sleep {a}; trap '' TERM; sleep {a}", ws=hosted, timeout_s=0.8, grace_s=0.3
        )
        assert timed.timed_out and wait_gone(a, 3) == []
    finally:
        hosted.close()

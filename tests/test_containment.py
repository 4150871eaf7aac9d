"""Containment the child cannot undo, and resource limits, through the real HTTP doors (issue 13,
items 2 and 3).

Each command below escapes everything a child can change: it drops the tree's tag
(``env -u MCP_IDE_PROC_TAG``, ``env -i``), leaves its session (``setsid``) and its parent (a double
fork re-parents it to init). Nothing of it may survive a timeout, ``cancel_job``, the end of the
HTTP session that started it (after the job grace period) or the server's SIGTERM. A process is
found by a unique marker in its command line (a ``sleep`` duration no other process uses).
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from .support.net import open_session


def marker() -> str:
    return f"{random.randint(100000, 999999)}.{random.randint(1000, 9999)}"


def alive_with(mark: str) -> list[int]:
    found = []
    needle = mark.encode()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmd = f.read()
            with open(f"/proc/{name}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in cmd and state != b"Z":
            found.append(int(name))
    return found


def sleeping(mark: str) -> list[int]:
    """The ``sleep <mark>`` processes themselves. Not :func:`alive_with`: the job's shell carries
    every marker in its own command line, so it would count as an escape already started (and a
    server killed before the shell reached them left no escape to check)."""
    found = []
    for pid in alive_with(mark):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")[:-1]
        except OSError:
            continue
        if len(argv) == 2 and os.path.basename(argv[0]) == b"sleep" and argv[1] == mark.encode():
            found.append(pid)
    return found


def poll(check: Any, timeout: float) -> Any:
    """``check()`` until it is truthy or the deadline passes; its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(0.05)


def survivors(marks: list[str], timeout: float = 6.0) -> list[int]:
    """What still runs with any of ``marks`` once ``timeout`` has passed (polled: [] as soon as none)."""
    left = poll(lambda: [] if not any(alive_with(m) for m in marks) else None, timeout)
    if left == []:
        return []
    found = [p for m in marks for p in alive_with(m)]
    for pid in found:  # do not leave them running after a failed test
        with_suppress_kill(pid)
    return found


def with_suppress_kill(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


def escapes(a: str, b: str, c: str) -> str:
    """Three ways out of a process tree, each untagged and in a session of its own."""
    return (
        f"env -u MCP_IDE_PROC_TAG setsid -f sleep {a}; "
        f"env -i /usr/bin/setsid -f /bin/sleep {b}; "
        f"env -u MCP_IDE_PROC_TAG setsid sh -c '(sleep {c} &)' </dev/null >/dev/null 2>&1"
    )


def rest(server: Any, tool: str, **arguments: Any) -> dict[str, Any]:
    r = httpx.post(f"{server.url}/mcp/{tool}", json=arguments, timeout=60)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body.get("error") is None, body
    return body["status"]


MODES = ["auto", "cgroup-v2", "pidns"]


def _mode_env(mode: str) -> dict[str, str]:
    if mode == "cgroup-v2" and " - cgroup2 " not in Path("/proc/self/mountinfo").read_text():
        pytest.skip("no cgroup2 mount here")
    if mode == "pidns" and not os.path.exists("/usr/bin/bwrap"):
        pytest.skip("bwrap is not installed")
    return {"MCP_IDE_CONTAINMENT": mode}


@pytest.mark.parametrize("mode", MODES)
def test_nothing_escapes_a_timeout(ws_path: Path, http_server: Any, mode: str) -> None:
    a, b, c, d = marker(), marker(), marker(), marker()
    server = http_server(ws_path, env=_mode_env(mode))
    done = rest(server, "run_command_on_background", command=f"{escapes(a, b, c)}; sleep {d}", timeout=1500)
    assert done.get("timedOut") is True, done
    assert survivors([a, b, c, d]) == []


def test_nothing_escapes_cancel_job(ws_path: Path, http_server: Any) -> None:
    a, b, c, d = marker(), marker(), marker(), marker()
    server = http_server(ws_path)
    job = rest(server, "start_job", command=f"{escapes(a, b, c)}; sleep {d}")
    assert poll(lambda: all(sleeping(m) for m in (a, b, c, d)), 10)
    rest(server, "cancel_job", jobId=job["jobId"])
    assert survivors([a, b, c, d]) == []


@pytest.mark.parametrize("mode", ["auto", "session"])
def test_nothing_escapes_the_servers_sigterm(ws_path: Path, http_server: Any, mode: str) -> None:
    """``session``: no cgroup and no pid namespace; the subreaper takes the orphans in and shutdown kills them."""
    a, b, c, d = marker(), marker(), marker(), marker()
    server = http_server(ws_path, env={"MCP_IDE_CONTAINMENT": mode})
    rest(server, "start_job", command=f"{escapes(a, b, c)}; sleep {d}")
    assert poll(lambda: all(sleeping(m) for m in (a, b, c, d)), 10)
    server.stop()  # SIGTERM
    assert server.process.returncode is not None
    assert survivors([a, b, c, d]) == []


GRACE_S = 5.0


def test_a_job_outlives_its_http_session_only_for_the_grace_period(ws_path: Path, http_server: Any) -> None:
    a, b, c, d = marker(), marker(), marker(), marker()
    server = http_server(ws_path, "--job-grace", str(GRACE_S))
    with httpx.Client(base_url=server.url, timeout=30) as http:
        headers = open_session(http)
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "start_job", "arguments": {"command": f"{escapes(a, b, c)}; sleep {d}"}},
        }
        r = http.post("/mcp", json=call, headers=headers)
        assert r.status_code == 200 and '"isError":true' not in r.text.replace(" ", ""), r.text
        assert poll(lambda: all(sleeping(m) for m in (a, b, c, d)), 10)
        deleted_at = time.monotonic()
        assert http.delete("/mcp", headers=headers).status_code in (200, 204)
    # within the grace period the job still runs: a client may come back for its output (checked
    # only while the check itself ends inside the period: a loaded machine may scan /proc slowly)
    running = [bool(sleeping(m)) for m in (a, b, c, d)]
    if time.monotonic() - deleted_at < GRACE_S - 0.5:
        assert all(running), running
    assert survivors([a, b, c, d], timeout=GRACE_S + 10) == []


# ---------------------------------------------------------------------------------------------
# Limits


def test_a_fork_bomb_is_stopped_and_reported(ws_path: Path, http_server: Any) -> None:
    m = marker()
    server = http_server(ws_path, "--limit-pids", "16")
    done = rest(
        server,
        "run_command_on_background",
        command=f": {m}; bomb() {{ bomb | bomb & }}; bomb; sleep {m}",
        timeout=3000,
    )
    assert "pids limit 16 reached" in done.get("limitHit", ""), done
    assert survivors([m]) == []


def test_a_disk_filler_is_stopped_at_the_file_size_limit(ws_path: Path, http_server: Any) -> None:
    server = http_server(ws_path, "--limit-file-size", "1M")
    done = rest(
        server, "run_command_on_background", command="head -c 5000000 /dev/zero > big.bin", timeout=20000
    )
    assert "file size limit 1 MiB reached" in done.get("limitHit", ""), done
    assert (ws_path / "big.bin").stat().st_size == 1 << 20
    # a program that ignores SIGXFSZ (Python) meets EFBIG: reported too
    py = "python3 -c \"open('big2.bin', 'wb').write(bytes(3_000_000))\""
    done = rest(server, "run_command_on_background", command=py, timeout=20000)
    assert "file size limit 1 MiB reached" in done.get("limitHit", ""), done


def test_a_normal_command_is_unaffected_by_the_default_limits(ws_path: Path, http_server: Any) -> None:
    server = http_server(ws_path)
    cmd = "for i in $(seq 40); do (echo $i > f$i.txt) & done; wait; cat f*.txt | wc -l; head -c 3000000 /dev/zero > ok.bin"
    done = rest(server, "run_command_on_background", command=cmd, timeout=30000)
    assert done["exitCode"] == 0 and "limitHit" not in done, done
    assert done["stdout"].strip() == "40"
    assert (ws_path / "ok.bin").stat().st_size == 3_000_000


def test_a_bad_limit_option_is_a_clear_error(ws_path: Path) -> None:
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, "-m", "mcp_server_ide", "--workspace", str(ws_path), "--limit-memory", "lots"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode != 0 and "a limit must be a number or a size like 512M" in r.stderr


def test_what_a_sigkilled_server_left_is_killed_by_the_next_server(ws_path: Path, http_server: Any) -> None:
    """SIGKILL runs no handler: the escapes stay in the dead server's cgroup, and the next server
    kills them (and removes the folder) when it starts its first command."""
    a, b, c, d = marker(), marker(), marker(), marker()
    first = http_server(ws_path)
    rest(first, "start_job", command=f"{escapes(a, b, c)}; sleep {d}")
    assert poll(lambda: all(sleeping(m) for m in (a, b, c, d)), 10)
    first.process.kill()
    first.process.wait(10)
    assert sleeping(a) and sleeping(b) and sleeping(c)
    second = http_server(ws_path)
    rest(second, "run_command_on_background", command="true")
    assert survivors([a, b, c, d]) == []


def test_nothing_escapes_kill_terminal(ws_path: Path, http_server: Any) -> None:
    a, b, c, d = marker(), marker(), marker(), marker()
    server = http_server(ws_path)
    term = rest(server, "create_terminal")
    rest(
        server, "send_terminal_input", terminalId=term["terminalId"], text=f"{escapes(a, b, c)}; sleep {d}\n"
    )
    assert poll(lambda: all(sleeping(m) for m in (a, b, c, d)), 10)
    rest(server, "kill_terminal", terminalId=term["terminalId"])
    assert survivors([a, b, c, d]) == []


def test_a_memory_hog_is_stopped_and_reported(ws_path: Path, http_server: Any) -> None:
    if (
        not Path("/sys/fs/cgroup/memory").is_dir()
        and " - cgroup2 " not in Path("/proc/self/mountinfo").read_text()
    ):
        pytest.skip("no memory cgroup here (RLIMIT_AS applies instead)")
    server = http_server(ws_path, "--limit-memory", "64M")
    hog = 'python3 -c "x = bytearray(300 << 20); x[::4096] = b\\"1\\" * len(x[::4096]); print(len(x))"'
    done = rest(server, "run_command_on_background", command=hog, timeout=30000)
    hit = done.get("limitHit", "")
    if not hit and "MemoryError" in done.get("stderr", ""):
        pytest.skip("the memory controller is not delegated here; RLIMIT_AS stopped it")
    assert "memory limit 64 MiB reached" in hit, done

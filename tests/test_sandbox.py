"""The per-project sandbox of hosted workspaces (issue 16, acceptance 2), through MCP client sessions.

Two hosted projects side by side, A and B, each with its own server session, real bubblewrap and
real processes: A's fork bomb, disk filler and memory hog are stopped by A's limits; A cannot see
B's folder or processes, the server's environment, the network; the write tools refuse past A's
quota; A's files belong to A's own uid, which is not B's, and what the server writes stays
writable by A's commands. Timings are never asserted (B's latency under A's load is in
``bench/bench_sandbox.py``).
"""

from __future__ import annotations

import os
import re
import secrets
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from mcp_server_ide.engines.processes.limits import CommandLimits, Limits
from mcp_server_ide.workspace import Policy

from .support.results import payload
from .support.system import require_system

pytestmark = pytest.mark.anyio

MiB = 1 << 20
QUOTA = 8 * MiB


def hosted_policy(**overrides: Any) -> Policy:
    limits = Limits(
        command=CommandLimits(pids=64, memory=96 * MiB, cpu_s=60, file_size=None),
        workspace_pids=128,
        workspace_memory=192 * MiB,
    )
    options: dict[str, Any] = {
        "hosted": True,
        "confirm_policy": "allow",
        "limits": limits,
        "disk_quota": QUOTA,
    }
    options.update(overrides)
    return Policy(**options)


@pytest.fixture
def projects(tmp_path: Path) -> tuple[Path, Path]:
    require_system("bwrap", "bubblewrap")
    base = tmp_path / "projects"
    a, b = base / "a", base / "b"
    a.mkdir(parents=True)
    b.mkdir()
    (b / "secret.txt").write_text("B's secret\n")
    return a, b


@asynccontextmanager
async def sessions(mcp: Callable[..., Any], *roots: Path, **policy: Any) -> AsyncIterator[list[Any]]:
    async with AsyncExitStack() as stack:
        yield [await stack.enter_async_context(mcp(r, policy=hosted_policy(**policy))) for r in roots]


async def run(client: Any, command: str, timeout: int = 60000) -> dict[str, Any]:
    result = await client.call_tool("run_command_on_background", {"command": command, "timeout": timeout})
    assert not result.is_error, result.content
    return payload(result)


async def test_a_fork_bomb_is_stopped_by_the_project_pids_limit(
    mcp: Any, projects: tuple[Path, Path]
) -> None:
    a, b = projects
    async with sessions(mcp, a, b) as (ca, cb):
        done = await run(ca, "bomb() { bomb | bomb & }; bomb; sleep 2; echo survived")
        assert "pids limit 64 reached" in done.get("limitHit", ""), done
        after = await run(cb, "echo fine")  # B runs on meanwhile
        assert after == {"stdout": "fine\n", "exitCode": 0}


async def test_a_disk_filler_stops_at_the_quota_and_writes_past_it_are_refused(
    mcp: Any, projects: tuple[Path, Path]
) -> None:
    a, _ = projects
    async with sessions(mcp, a) as (ca,):
        # 10 GB asked for: the file size limit (the quota) stops it at 8 MiB
        done = await run(ca, "head -c 10G /dev/zero > fill.bin")
        assert "file size limit 8 MiB reached" in done.get("limitHit", ""), done
        assert (a / "fill.bin").stat().st_size == QUOTA
        # its /tmp is no larger than the quota either
        tmp = await run(ca, "head -c 10G /dev/zero > /tmp/fill; echo $?; stat -c %s /tmp/fill")
        code, size = tmp["stdout"].split()
        assert code != "0" and int(size) <= QUOTA, tmp
        # the project is at its quota: the write tools refuse to grow it, and say why
        refused = await ca.call_tool(
            "create_new_file_with_text", {"pathInProject": "more.txt", "text": "x" * 100}
        )
        assert refused.is_error
        message = refused.content[0].text
        assert "past its disk quota of 8 MiB" in message and "Delete or shrink files" in message, message
        assert not (a / "more.txt").exists()
        # shrinking is always allowed, and then writing fits again
        (a / "fill.bin").unlink()
        written = await ca.call_tool("project_fs_write", {"path": "more.txt", "content": "x" * 100})
        # the count is kept a few seconds: the deletion by hand may not be counted yet
        if written.is_error:
            assert "past its disk quota" in written.content[0].text
        else:
            assert (a / "more.txt").read_text() == "x" * 100


async def test_a_memory_hog_is_stopped_by_the_memory_limit(mcp: Any, projects: tuple[Path, Path]) -> None:
    if (
        not Path("/sys/fs/cgroup/memory").is_dir()
        and " - cgroup2 " not in Path("/proc/self/mountinfo").read_text()
    ):
        pytest.skip("no memory cgroup here")
    a, _ = projects
    async with sessions(mcp, a) as (ca,):
        hog = 'python3 -c "x = bytearray(600 << 20); x[::4096] = b\\"1\\" * len(x[::4096]); print(len(x))"'
        done = await run(ca, hog)
        assert "memory limit 96 MiB reached" in done.get("limitHit", ""), done
        assert "629145600" not in done.get("stdout", "")


async def test_a_project_sees_neither_another_project_nor_the_server(
    mcp: Any, projects: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = projects
    probe = f"probe-{secrets.token_hex(6)}"
    monkeypatch.setenv("SERVER_ONLY_VALUE", probe)
    async with sessions(mcp, a, b) as (ca, cb):
        job = await cb.call_tool("start_job", {"command": f"sleep 120 # {probe}"})
        assert not job.is_error, job.content
        try:
            seen = await run(
                ca,
                f"pwd; ls -A {a.parent}; cat {b}/secret.txt 2>&1; cat /etc/shadow 2>&1 | head -c 40; "
                "ps -eo args | grep -c '[s]leep 120'; "
                f"env | grep -c {probe}; "
                f"cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c {probe}; "
                f"ls -A {Path.home()} 2>&1 | grep -vxc .pyenv; id -u",
            )
            lines = seen["stdout"].splitlines()
            assert lines[0] == "/workspace"
            assert lines[1] == "a"  # the projects folder shows A alone
            assert "B's secret" not in seen["stdout"] and "No such file" in lines[2]
            assert "root:" not in seen["stdout"] and "Permission denied" in lines[3]
            assert lines[4:7] == ["0", "0", "0"]  # B's job, the server's variable: nowhere
            assert lines[7] == "0"  # the server's home shows nothing
            uid_a = int(lines[8])
            uid_b = int((await run(cb, "id -u"))["stdout"])
            assert uid_a != uid_b and not {uid_a, uid_b} & {0, os.getuid()}  # each its own uid
            if os.geteuid() == 0:  # a server not run as root keeps the files its user's
                assert (a.stat().st_uid, b.stat().st_uid) == (uid_a, uid_b)
        finally:
            await cb.call_tool("cancel_job", {"jobId": payload(job)["jobId"]})


async def test_no_network_unless_the_project_allows_it(mcp: Any, projects: tuple[Path, Path]) -> None:
    a, b = projects
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.settimeout(0)
        port = listener.getsockname()[1]
        connect = f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 5); print('connected')\""
        async with sessions(mcp, a) as (ca,):
            done = await run(ca, connect + " 2>&1 | tail -n 1")
            assert "connected" not in done["stdout"] and "Connection refused" in done["stdout"], done
            with pytest.raises(BlockingIOError):
                listener.accept()  # nothing reached the test's port
        async with sessions(mcp, b, network=True) as (cb,):
            done = await run(cb, connect)
            assert done["stdout"] == "connected\n", done


async def test_the_server_s_writes_stay_writable_by_the_project_s_commands(
    mcp: Any, projects: tuple[Path, Path]
) -> None:
    a, _ = projects
    async with sessions(mcp, a) as (ca,):
        uid = int((await run(ca, "id -u"))["stdout"])
        made = await ca.call_tool(
            "create_new_file_with_text", {"pathInProject": "deep/er/notes.txt", "text": "one\n"}
        )
        assert not made.is_error, made.content
        if os.geteuid() == 0:
            assert {p.stat().st_uid for p in (a / "deep", a / "deep/er", a / "deep/er/notes.txt")} == {uid}
        done = await run(ca, "echo two >> deep/er/notes.txt && touch deep/er/more && cat deep/er/notes.txt")
        assert done == {"stdout": "one\ntwo\n", "exitCode": 0}


async def test_terminals_and_jobs_run_in_the_sandbox_too(mcp: Any, projects: tuple[Path, Path]) -> None:
    a, _ = projects
    async with sessions(mcp, a) as (ca,):
        term = payload(
            await ca.call_tool(
                "execute_terminal_command",
                {"command": "pwd; id -u; ls /proc | grep -c '^[0-9]'", "waitMs": 30000},
            )
        )
        assert "/workspace" in term["output"], term
        job = payload(await ca.call_tool("start_job", {"command": "pwd; echo $HOME"}))
        out = payload(await ca.call_tool("get_job_output", {"jobId": job["jobId"], "waitMs": 30000}))
        assert out["output"].split() == ["/workspace", "/tmp/home"], out


async def test_a_project_cannot_read_files_only_root_may_read(mcp: Any, projects: tuple[Path, Path]) -> None:
    """The sandbox used to map its uid 1000 to the server's uid (root) outside: the command then
    read any file root owns as its owner would (``/etc/shadow``, ``0640 root:shadow``)."""
    a, _ = projects
    async with mcp(a, policy=Policy(hosted=True, confirm_policy="allow")) as ca:
        done = await run(ca, "head -c 5 /etc/shadow 2>&1; cat /proc/self/uid_map 2>&1")
        assert "root:" not in done["stdout"] and "Permission denied" in done["stdout"], done


def test_a_project_s_cpu_bandwidth_is_its_cgroup_s(projects: tuple[Path, Path]) -> None:
    """``Limits.workspace_cpus`` (``--workspace-cpus``) is the CFS quota of the project's cgroup."""
    from mcp_server_ide.engines import processes
    from mcp_server_ide.engines.processes import cgroups, containment
    from mcp_server_ide.workspace import Workspace

    hierarchy = cgroups.detect()
    if hierarchy is None or "cpu" not in hierarchy.controllers:
        pytest.skip("no writable cpu cgroup controller here")
    a, _ = projects
    limits = Limits(workspace_cpus=0.25)
    ws = Workspace.open(a, policy=Policy(hosted=True, limits=limits))
    try:
        assert processes.run("true", ws=ws, timeout_s=30).exit_code == 0
        group = containment._WS_GROUPS[ws]
        folder = group.dirs["cpu"] if hierarchy.version == 1 else group.dirs["unified"]
        quota = (
            (folder / ("cpu.cfs_quota_us" if hierarchy.version == 1 else "cpu.max")).read_text().split()[0]
        )
        assert quota == "25000"
    finally:
        ws.close()


def test_the_hosted_service_s_project_policy() -> None:
    from mcp_server_ide.engines.processes.bubblewrap import UID_BASE
    from mcp_server_ide.hosted.sandbox import SandboxSettings, project_policy, project_uid

    policy = project_policy(7, SandboxSettings(quota=5 << 20, network=True), confirm_policy="allow")
    assert (policy.hosted, policy.network, policy.disk_quota, policy.confirm_policy) == (
        True,
        True,
        5 << 20,
        "allow",
    )
    assert policy.sandbox_uid == project_uid(7) == UID_BASE + 7 != project_uid(8)
    assert policy.limits is not None and policy.limits.workspace_cpus == 1.0
    with pytest.raises(ValueError, match="a project number is 1 to"):
        project_uid(0)


async def test_run_configurations_with_several_steps_run_in_the_sandbox(
    mcp: Any, projects: tuple[Path, Path]
) -> None:
    a, _ = projects
    (a / ".vscode").mkdir()
    (a / ".vscode/tasks.json").write_text(
        '{"version": "2.0.0", "tasks": ['
        '{"label": "one", "type": "shell", "command": "echo one-$(id -u) >> order.txt"},'
        '{"label": "two", "type": "shell", "command": "pwd >> order.txt"},'
        '{"label": "both", "dependsOn": ["one", "two"], "dependsOrder": "sequence"}]}'
    )
    async with sessions(mcp, a) as (ca,):
        uid = (await run(ca, "id -u"))["stdout"].strip()
        started = (await ca.call_tool("run_configuration", {"configName": "both"})).content[0].text
        found = re.search(r"jobId: (job-\d+)", started)
        assert found, started
        job = found.group(1)
        out = payload(await ca.call_tool("get_job_output", {"jobId": job, "waitMs": 30000}))
        assert out.get("exitCode") == 0, out
        first, second = (a / "order.txt").read_text().split()
        assert first == f"one-{uid}" and second in ("/workspace", str(a))  # the project's uid, its folder


async def test_a_filler_of_many_small_files_is_stopped_at_the_quota(
    mcp: Any, projects: tuple[Path, Path]
) -> None:
    """Each file is under the file size limit: the quota's watchdog stops the command."""
    a, _ = projects
    async with sessions(mcp, a) as (ca,):
        done = await run(ca, "mkdir -p many; for i in $(seq 2000); do head -c 1M /dev/zero > many/f$i; done")
        assert "disk quota 8 MiB reached" in done.get("limitHit", ""), done
        assert len(list((a / "many").iterdir())) < 2000  # stopped long before it was done


async def test_a_project_s_commands_share_its_pids_limit(mcp: Any, projects: tuple[Path, Path]) -> None:
    """A job holding 40 processes leaves a project limited to 50 room for 10 more, whatever each
    command's own limit: the next command's forks fail on the project's limit, and it says so."""
    a, _ = projects
    limits = Limits(command=CommandLimits(pids=1000, memory=None, file_size=None), workspace_pids=50)
    async with sessions(mcp, a, limits=limits) as (ca,):
        job = payload(
            await ca.call_tool("start_job", {"command": "for i in $(seq 40); do sleep 300 & done; wait"})
        )
        try:
            filled = await run(ca, "sleep 1; ls /proc | grep -c '^[0-9]'")  # its own namespace: not the job's
            assert filled["exitCode"] == 0, filled
            # dash, not bash: bash retries a refused fork for seconds, dash gives up at once
            done = await run(ca, "exec sh -c 'for i in $(seq 30); do sleep 3 & done; wait'")
            assert "workspace pids limit 50 reached" in done.get("limitHit", ""), done
        finally:
            await ca.call_tool("cancel_job", {"jobId": job["jobId"]})

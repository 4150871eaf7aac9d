"""Attaching only to the workspace's own programs: a process id inside one of its jobs' trees, or a
loopback port that such a process listens on (read from ``/proc/net/tcp*`` and the process's fds)."""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
from typing import TYPE_CHECKING, Any

from ..failures import ToolFailure
from ..processes.env import TAG_VAR
from ..processes.procfs import environ_has, read_proc

if TYPE_CHECKING:
    from ..processes import Jobs

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _job_pids(jobs: Jobs) -> set[int]:
    return {j.pid for j in jobs.list() if j.running and j.pid}


def _tag_of(pid: int) -> bytes | None:
    """The process engine's tag (``TAG_VAR=...``) in ``pid``'s environment, as an environ entry."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            entries = fh.read(1 << 20).split(b"\0")
    except OSError:
        return None
    prefix = f"{TAG_VAR}=".encode()
    return next((e + b"\0" for e in entries if e.startswith(prefix)), None)


def in_workspace_jobs(jobs: Jobs, pid: int) -> bool:
    """Whether ``pid`` belongs to one of the workspace's running jobs: it descends from a job's process,
    or carries its tag (a daemon it started that left the tree, such as debugpy's listening adapter)."""
    roots = _job_pids(jobs)
    for root in roots:
        tag = _tag_of(root)
        if tag is not None and environ_has(pid, tag):
            return True
    seen = 0
    while pid > 1 and seen < 64:
        if pid in roots:
            return True
        info = read_proc(pid)
        if info is None:
            return False
        pid, seen = info.ppid, seen + 1
    return False


def _listening_inodes(port: int) -> set[str]:
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table, encoding="ascii") as fh:
            next(fh, None)
            for row in fh:
                cols = row.split()
                if len(cols) > 9 and cols[3] == "0A" and int(cols[1].rsplit(":", 1)[1], 16) == port:
                    inodes.add(cols[9])
    return inodes


def port_owner(port: int) -> int | None:
    """The pid of a process listening on ``port`` (any address), or None."""
    inodes = {f"socket:[{i}]" for i in _listening_inodes(port)}
    if not inodes:
        return None
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{name}/fd"):
                with contextlib.suppress(OSError):
                    if os.readlink(f"/proc/{name}/fd/{fd}") in inodes:
                        return int(name)
    return None


def attach_arguments(item: dict[str, Any], jobs: Jobs) -> dict[str, Any]:
    """debugpy's ``attach`` arguments for ``item``, refused unless the target is the workspace's own."""
    name = item["name"]
    base: dict[str, Any] = {"name": name, "type": "python", "request": "attach"}
    if "justMyCode" in item:
        base["justMyCode"] = item["justMyCode"]
    if isinstance(item.get("pathMappings"), list):
        base["pathMappings"] = item["pathMappings"]
    rule = "rule: the debugger attaches only to programs this workspace started (start one with start_job)"
    if item.get("processId") not in (None, ""):
        try:
            pid = int(item["processId"])
        except (TypeError, ValueError):
            raise ToolFailure(
                f"invalid configuration: {name!r} has processId {item['processId']!r}; give a number",
                kind="invalid",
            ) from None
        if not in_workspace_jobs(jobs, pid):
            raise ToolFailure(
                f"refused: process {pid} is not one of this workspace's jobs ({rule})", kind="refused"
            )
        if item.get("type") in ("debugpy", "python") and (why := pid_attach_refusal()) is not None:
            raise ToolFailure(
                f"unavailable: {name!r} cannot attach to process {pid} by its id here: {why}; start the "
                "program under debugpy instead (python -m debugpy --listen 127.0.0.1:PORT ...) and attach "
                'with "connect": {"port": PORT}',
                kind="unavailable",
            )
        return {**base, "processId": pid}
    raw = item.get("connect")
    connect: dict[str, Any] = raw if isinstance(raw, dict) else {}
    host = str(connect.get("host") or item.get("host") or "127.0.0.1")
    port = connect.get("port", item.get("port"))
    if not isinstance(port, int) or not 0 < port < 65536:
        raise ToolFailure(
            f'invalid configuration: {name!r} needs "connect": {{"port": N}} or "processId"', kind="invalid"
        )
    if host not in LOOPBACK:
        raise ToolFailure(
            f"refused: {name!r} attaches to {host!r}, not this machine ({rule})", kind="refused"
        )
    owner = port_owner(port)
    if owner is None or not in_workspace_jobs(jobs, owner):
        raise ToolFailure(
            f"refused: nothing of this workspace's jobs listens on port {port} ({rule})", kind="refused"
        )
    return {**base, "connect": {"host": host, "port": port}}


PROBE_TIMEOUT_S = 30.0


@functools.cache
def pid_attach_refusal() -> str | None:
    """Why debugpy cannot attach by process id on this machine (None: it can). debugpy injects itself
    with gdb, which must be installed, allowed to trace (Yama's ``ptrace_scope``), and able to call a
    function inside the target: that is probed once on a throwaway process of this server's own, since
    a failed injection can break the target (on some virtual machines' kernels gdb cannot write the
    registers back: "Couldn't write extended state status")."""
    gdb = shutil.which("gdb")
    if gdb is None:
        return "gdb is not installed (debugpy attaches by process id through gdb: apt-get install gdb)"
    with contextlib.suppress(OSError, ValueError):
        scope = int(open("/proc/sys/kernel/yama/ptrace_scope").read().strip())  # noqa: SIM115
        if scope >= 3 or (scope >= 1 and os.geteuid() != 0):
            return f"the kernel's ptrace_scope is {scope}, which forbids tracing another process"
    probe = subprocess.Popen(
        ["sleep", "60"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        done = subprocess.run(
            [gdb, "--nx", "--nh", "--batch", "-p", str(probe.pid), "-ex", "call (int)getpid()"],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        output = done.stdout + done.stderr
    except (OSError, subprocess.TimeoutExpired) as exc:
        output = str(exc)
    finally:
        probe.kill()
        probe.wait()
    if f"= {probe.pid}" in output:
        return None
    lines = [ln.strip() for ln in output.splitlines() if "rror" in ln or "ouldn't" in ln or "denied" in ln]
    why = lines[0][:200] if lines else "gdb could not call into a process"
    return f"gdb cannot inject code into a running process on this machine ({why})"

"""Resource limits for commands: per command and per workspace, reported when a command hits one.

Where a cgroup exists (:mod:`.cgroups`) the pid and memory limits are ``pids.max`` and
``memory.limit_in_bytes``/``memory.max`` on the command's cgroup (and, for the workspace totals,
on the workspace's cgroup above it). CPU time and file size are always rlimits (``RLIMIT_CPU``,
``RLIMIT_FSIZE``), set by the start-up prelude before the command's program runs. With no cgroup,
memory falls back to ``RLIMIT_AS`` and pids to ``RLIMIT_NPROC`` (which counts every process of the
user, so it is set to the user's current count plus the limit).

Defaults stop a fork bomb (1024 processes a command, 4096 a workspace) and a disk filler (4 GiB a
file) and leave builds alone (memory: half the RAM a command, three quarters a workspace; no CPU
limit, the timeout bounds one-shot commands). Options: ``--limit-pids``, ``--limit-memory``,
``--limit-cpu``, ``--limit-file-size``, ``--workspace-pids``, ``--workspace-memory``,
``--workspace-cpus`` (CPU bandwidth, cgroup ``cpu`` controller; default none) (or the env vars
``MCP_IDE_LIMIT_PIDS``…); 0 turns a limit off.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass, field, replace

GiB = 1 << 30


def _ram() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 8 * GiB


@dataclass(frozen=True)
class CommandLimits:
    """What one command (one-shot, job, terminal, task, language server) may use; None: no limit."""

    pids: int | None = 1024
    memory: int | None = field(default_factory=lambda: _ram() // 2)
    cpu_s: int | None = None
    file_size: int | None = 4 * GiB


@dataclass(frozen=True)
class Limits:
    """A workspace's limits: each command's, and the workspace's totals over all its commands."""

    command: CommandLimits = field(default_factory=CommandLimits)
    workspace_pids: int | None = 4096
    workspace_memory: int | None = field(default_factory=lambda: _ram() * 3 // 4)
    workspace_cpus: float | None = None
    """CPU cores all the workspace's commands together may keep busy (cgroup CPU bandwidth)."""


def within_quota(limits: Limits | None, quota: int | None) -> Limits | None:
    """``limits`` with a command's file size limit no larger than a disk quota (None: unchanged)."""
    if not quota:
        return limits
    base = limits if limits is not None else Limits()
    size = base.command.file_size
    if size is not None and size <= quota:
        return limits
    return replace(base, command=replace(base.command, file_size=quota))


def parse_size(text: str) -> int:
    """``512M``, ``4G``, ``1024`` (bytes), ``0`` (no limit) → bytes. ValueError on anything else."""
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    scale = 1
    for suffix, size in (("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30), ("T", 1 << 40)):
        if t.endswith(suffix):
            t, scale = t[:-1], size
            break
    value = float(t)
    if value < 0:
        raise ValueError(text)
    return int(value * scale)


def _none_if_zero(value: int | None) -> int | None:
    return value if value else None


def from_options(
    *,
    pids: int | None = None,
    memory: str | None = None,
    cpu_s: int | None = None,
    file_size: str | None = None,
    workspace_pids: int | None = None,
    workspace_memory: str | None = None,
    workspace_cpus: float | None = None,
) -> Limits:
    """Limits from CLI options (None: the default)."""
    base, cmd = Limits(), CommandLimits()
    return Limits(
        command=CommandLimits(
            pids=_none_if_zero(pids) if pids is not None else cmd.pids,
            memory=_none_if_zero(parse_size(memory)) if memory is not None else cmd.memory,
            cpu_s=_none_if_zero(cpu_s) if cpu_s is not None else cmd.cpu_s,
            file_size=_none_if_zero(parse_size(file_size)) if file_size is not None else cmd.file_size,
        ),
        workspace_pids=_none_if_zero(workspace_pids) if workspace_pids is not None else base.workspace_pids,
        workspace_memory=(
            _none_if_zero(parse_size(workspace_memory))
            if workspace_memory is not None
            else base.workspace_memory
        ),
        workspace_cpus=(workspace_cpus or None) if workspace_cpus is not None else base.workspace_cpus,
    )


def _user_processes() -> int:
    uid, count = os.getuid(), 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    count += 1
            except OSError:
                pass
    return count


def ulimit_lines(limits: CommandLimits, *, cgroup_pids: bool, cgroup_memory: bool) -> list[str]:
    """The ``ulimit`` commands of the start-up prelude (POSIX sh units: -f in 512-byte blocks,
    -v in KiB), hard and soft alike so the command cannot raise them back."""
    lines = []
    if limits.file_size:
        lines.append(f"ulimit -f {max(1, limits.file_size // 512)}")
    if limits.cpu_s:
        lines.append(f"ulimit -t {limits.cpu_s}")
    if limits.memory and not cgroup_memory:
        lines.append(f"ulimit -v {max(1, limits.memory // 1024)}")
    if limits.pids and not cgroup_pids and os.getuid() != 0:  # root is not held by RLIMIT_NPROC
        # bash and zsh name RLIMIT_NPROC -u; dash and busybox sh refuse -u and name it -p (in bash
        # -p is the read-only pipe size, never reached there).
        n = _user_processes() + limits.pids
        lines.append(f"{{ ulimit -u {n} 2>/dev/null || ulimit -p {n}; }}")
    return lines


def output_hit(stderr: bytes, limits: CommandLimits) -> str | None:
    """A file size limit a program met without dying of it (it ignores SIGXFSZ, as Python does,
    and reports EFBIG: ``File too large``), else None."""
    if limits.file_size and b"File too large" in stderr:
        return f"file size limit {human_size(limits.file_size)} reached (File too large)"
    return None


def signal_hit(returncode: int | None, limits: CommandLimits) -> str | None:
    """The rlimit a command's end signal reports (SIGXFSZ, SIGXCPU), in words, else None. A shell
    reports its child's signal as 128 + the signal's number, which counts too."""
    if returncode in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ) and limits.file_size:
        return f"file size limit {human_size(limits.file_size)} reached (SIGXFSZ)"
    if returncode in (-signal.SIGXCPU, 128 + signal.SIGXCPU) and limits.cpu_s:
        return f"CPU time limit {limits.cpu_s} s reached (SIGXCPU)"
    return None


def human_size(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n} bytes"

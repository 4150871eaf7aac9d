"""What the hosted service gives each project's workspace: its sandbox, its uid and its limits.

A project's workspace is ``Workspace.open(folder, policy=project_policy(number, settings))``:
``Policy.hosted`` (everything that runs code runs in bubblewrap, ``engines/processes/bubblewrap.py``),
the project's own uid (``UID_BASE`` + its number, so two projects never share one), its network
switch, its disk quota and its limits. The HTTP doors' per-user limits are
``doors.ratelimit.RateSettings`` with ``key`` returning the user of a request.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..engines.processes.bubblewrap import UID_BASE, UID_SPAN
from ..engines.processes.limits import CommandLimits, Limits
from ..workspace import Policy

MiB = 1 << 20
GiB = 1 << 30
DEFAULT_QUOTA = 1 * GiB


def hosted_limits() -> Limits:
    """A project's default limits: 256 processes a command and 512 a project, 1 GiB of memory a
    command and 2 GiB a project, one CPU core for the whole project; the file size limit is the
    project's quota (``limits.within_quota``)."""
    return Limits(
        command=CommandLimits(pids=256, memory=1 * GiB, cpu_s=None, file_size=None),
        workspace_pids=512,
        workspace_memory=2 * GiB,
        workspace_cpus=1.0,
    )


@dataclass(frozen=True)
class SandboxSettings:
    """A project's sandbox settings (what its owner or the operator may change)."""

    quota: int = DEFAULT_QUOTA
    """Bytes the project's files may take."""
    network: bool = False
    """Whether its commands reach the network."""
    limits: Limits = field(default_factory=hosted_limits)


def project_uid(number: int) -> int:
    """The uid (and gid) of the project numbered ``number`` (1, 2, …; the store's project id)."""
    if not 0 < number < UID_SPAN:
        raise ValueError(f"a project number is 1 to {UID_SPAN - 1}, not {number}")
    return UID_BASE + number


def project_policy(number: int, settings: SandboxSettings | None = None, **policy: Any) -> Policy:
    """The ``Policy`` of project ``number``'s workspace (``policy``: further Policy fields)."""
    s = settings or SandboxSettings()
    return Policy(
        hosted=True,
        network=s.network,
        sandbox_uid=project_uid(number),
        disk_quota=s.quota,
        limits=s.limits,
        **policy,
    )

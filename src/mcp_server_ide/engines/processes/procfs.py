"""Reading ``/proc``: which processes exist, their parent, group, session and start time.

The containment module finds a command's whole tree from these facts (no psutil, no shell-out).
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class ProcInfo:
    """One line of ``/proc/PID/stat``: ``start`` is in clock ticks since boot, ``state`` a letter."""

    pid: int
    ppid: int
    pgid: int
    sid: int
    start: int
    state: str


def scan_proc() -> dict[int, ProcInfo]:
    """Every process visible in /proc (pid → info). Zombies are included (state ``Z``)."""
    found: dict[int, ProcInfo] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        info = read_proc(int(name))
        if info is not None:
            found[info.pid] = info
    return found


def _read_small(path: str, size: int = 1024) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.read(fd, size)
    except OSError:
        return None
    finally:
        os.close(fd)


def read_proc(pid: int) -> ProcInfo | None:
    """The process ``pid`` as /proc shows it now, or None when it is gone (or unreadable)."""
    data = _read_small(f"/proc/{pid}/stat")
    if not data:
        return None
    try:
        right = data.rindex(b")")
        fields = data[right + 2 :].split()
        return ProcInfo(
            pid=pid,
            ppid=int(fields[1]),
            pgid=int(fields[2]),
            sid=int(fields[3]),
            start=int(fields[19]),
            state=fields[0].decode(),
        )
    except (ValueError, IndexError):
        return None


def environ_has(pid: int, needle: bytes) -> bool:
    """Whether the environment ``pid`` started with holds ``needle`` (False when unreadable)."""
    data = _read_small(f"/proc/{pid}/environ", 1 << 20)
    return data is not None and needle in data

"""Control groups: every contained command runs in its own cgroup, which the command cannot leave.

Membership does not depend on anything the child can change (its environment, session, parent):
a process forked in a cgroup stays in it, and only a privileged writer can move it out. Killing a
command is killing its cgroup: on v2 one write to ``cgroup.kill``; on v1 freeze (``freezer``),
SIGKILL every pid in ``cgroup.procs``, thaw, until it is empty (with no freezer, ``pids.max`` is
set to 0 first so nothing can fork between the read and the kill).

Layout, under the cgroup the server itself runs in (never above it, so the server's own limits
still hold): ``mcp-ide-<server pid>-<random>/ws-<n>/cmd-<tag>`` — one folder a server, one a workspace (its
limits, :class:`.limits.Limits`), one a command. v1 uses the ``pids``, ``memory`` and ``freezer``
hierarchies, and ``cpu`` for a workspace's CPU bandwidth (whichever are mounted and writable,
``pids`` or ``freezer`` required); v2 the unified hierarchy (``cgroup.kill``, kernel 5.14+), with
``pids``/``memory``/``cpu`` limits when the parent delegates those controllers. Detected at run time (:func:`detect`); ``MCP_IDE_CONTAINMENT``
(``auto``, ``cgroup-v1``, ``cgroup-v2``, ``pidns``, ``session``) forces a path.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import secrets
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

V1_CONTROLLERS = ("pids", "freezer", "memory", "cpu")
CPU_PERIOD_US = 100_000


@dataclass
class Hierarchy:
    """Where this server may make cgroups: one folder a v1 controller, or one v2 folder."""

    version: int
    dirs: dict[str, Path]
    """controller → the server's own folder (v2: key ``unified``)."""
    controllers: frozenset[str] = frozenset()
    """What limits can be set: ``pids``, ``memory``, ``cpu`` (and ``freezer`` on v1)."""
    _seq: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def new_dir_name(self) -> str:
        with self._lock:
            self._seq += 1
            return f"ws-{self._seq}"

    def remove(self) -> None:
        for d in self.dirs.values():
            _rmdir_tree(d)


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(mount point, fs type, super options) of every cgroup mount."""
    found = []
    try:
        with open("/proc/self/mountinfo", encoding="utf-8") as fh:
            for line in fh:
                left, _, right = line.partition(" - ")
                parts, rparts = left.split(), right.split()
                if len(rparts) >= 3 and rparts[0] in ("cgroup", "cgroup2"):
                    found.append((parts[4], rparts[0], set(rparts[2].split(","))))
    except OSError:
        pass
    return found


def _own_paths() -> dict[str, str]:
    """controller (or ``unified``) → this process's cgroup path, from /proc/self/cgroup."""
    own: dict[str, str] = {}
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as fh:
            for line in fh:
                _, ctrls, path = line.rstrip("\n").split(":", 2)
                if ctrls == "":
                    own["unified"] = path
                for c in ctrls.split(","):
                    own[c] = path
    except (OSError, ValueError):
        pass
    return own


_HELD: list[int] = []
"""fds of this server's own cgroup folders, each held with ``flock``: a folder nobody holds is a dead
server's (pids are no proof: a server in another pid namespace may have the same one)."""


def _sweep_dead_servers(parent: Path) -> None:
    """Kill and remove what a server killed with SIGKILL left (an ``mcp-ide-*`` folder no live server holds)."""
    with contextlib.suppress(OSError):
        for d in parent.glob("mcp-ide-*"):
            try:
                fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue  # a live server holds it
            try:
                for procs in d.glob("**/cgroup.procs"):
                    _write(procs.parent / "freezer.state", "THAWED")  # a frozen process cannot die
                    for word in _read(procs).split():
                        with contextlib.suppress(OSError):
                            os.kill(int(word), signal.SIGKILL)
                _rmdir_tree(d)
            finally:
                os.close(fd)


def _make_server_dir(parent: Path) -> Path | None:
    _sweep_dead_servers(parent)
    d = parent / f"mcp-ide-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        d.mkdir()
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        with contextlib.suppress(OSError):
            d.rmdir()
        return None
    _HELD.append(fd)
    return d


def _detect_v1() -> Hierarchy | None:
    own = _own_paths()
    dirs: dict[str, Path] = {}
    for mount, fstype, opts in _mounts():
        if fstype != "cgroup":
            continue
        for c in V1_CONTROLLERS:
            if c in opts and c not in dirs and c in own:
                d = _make_server_dir(Path(mount) / own[c].lstrip("/"))
                if d is not None:
                    dirs[c] = d
    if "pids" not in dirs and "freezer" not in dirs:
        for d in dirs.values():
            _rmdir_tree(d)
        return None
    return Hierarchy(1, dirs, frozenset(dirs))


def _detect_v2() -> Hierarchy | None:
    own = _own_paths().get("unified")
    if own is None:
        return None
    for mount, fstype, _ in _mounts():
        if fstype != "cgroup2":
            continue
        parent = Path(mount) / own.lstrip("/")
        d = _make_server_dir(parent)
        if d is None:
            return None
        if not (d / "cgroup.kill").exists():
            _rmdir_tree(d)
            return None
        available = set(_read(parent / "cgroup.subtree_control").split())
        ctrls = frozenset(c for c in ("pids", "memory", "cpu") if c in available)
        if ctrls:  # let workspace and command folders below ours have them too
            _write(d / "cgroup.subtree_control", " ".join(f"+{c}" for c in ctrls))
        return Hierarchy(2, {"unified": d}, ctrls)
    return None


_DETECTED: Hierarchy | None = None
_DETECT_DONE = False
_DETECT_LOCK = threading.Lock()


def mode() -> str:
    """The containment path asked for: ``auto`` (default), ``cgroup-v1``, ``cgroup-v2``, ``pidns``, ``session``."""
    return os.environ.get("MCP_IDE_CONTAINMENT", "auto").strip().lower() or "auto"


def detect() -> Hierarchy | None:
    """The cgroup hierarchy this server uses, made on first use (None: no writable cgroups)."""
    global _DETECTED, _DETECT_DONE
    with _DETECT_LOCK:
        if not _DETECT_DONE:
            _DETECT_DONE = True
            m = mode()
            if m in ("auto", "cgroup-v1"):
                _DETECTED = _detect_v1()
            if _DETECTED is None and m in ("auto", "cgroup-v2"):
                _DETECTED = _detect_v2()
            if _DETECTED is not None:
                atexit.register(kill_everything)
        return _DETECTED


def kill_everything() -> None:
    """Kill every process in every cgroup this server made and remove the folders (server exit)."""
    h = _DETECTED
    if h is not None:
        everything = Cgroup(h, dict(h.dirs))
        everything.kill()
        h.remove()


class Cgroup:
    """One cgroup (a workspace's or a command's), present in each hierarchy folder."""

    def __init__(self, hierarchy: Hierarchy, dirs: dict[str, Path]) -> None:
        self.hierarchy = hierarchy
        self.dirs = dirs

    @classmethod
    def create(cls, hierarchy: Hierarchy, name: str, parent: Cgroup | None = None) -> Cgroup | None:
        """Make the folder ``name`` under ``parent`` (default: the server's folder); None on failure."""
        base = parent.dirs if parent is not None else hierarchy.dirs
        dirs: dict[str, Path] = {}
        for key, d in base.items():
            path = d / name
            try:
                path.mkdir(exist_ok=True)
            except OSError:
                for made in dirs.values():
                    with contextlib.suppress(OSError):
                        made.rmdir()
                return None
            dirs[key] = path
        return cls(hierarchy, dirs)

    @property
    def procs_files(self) -> list[str]:
        """The ``cgroup.procs`` files a new member writes its pid into (every hierarchy)."""
        return [str(d / "cgroup.procs") for d in self.dirs.values()]

    def _dir(self, controller: str) -> Path | None:
        if self.hierarchy.version == 2:
            return self.dirs["unified"] if controller in self.hierarchy.controllers else None
        return self.dirs.get(controller)

    def set_limits(self, pids: int | None, memory: int | None, cpus: float | None = None) -> None:
        """Write ``pids.max``, the memory limit and the CPU bandwidth (``cpus`` cores: CFS quota
        over a 100 ms period) where the controllers exist (None: no limit)."""
        d = self._dir("cpu")
        if d is not None and cpus:
            quota = max(1000, int(cpus * CPU_PERIOD_US))
            if self.hierarchy.version == 2:
                _write(d / "cpu.max", f"{quota} {CPU_PERIOD_US}")
            else:
                _write(d / "cpu.cfs_period_us", str(CPU_PERIOD_US))
                _write(d / "cpu.cfs_quota_us", str(quota))
        d = self._dir("pids")
        if d is not None and pids:
            _write(d / "pids.max", str(pids))
        d = self._dir("memory")
        if d is not None and memory:
            name = "memory.max" if self.hierarchy.version == 2 else "memory.limit_in_bytes"
            _write(d / name, str(memory))

    def has(self, controller: str) -> bool:
        return self._dir(controller) is not None

    def pids(self) -> set[int]:
        """Every process in this cgroup and the cgroups below it."""
        found: set[int] = set()
        for d in self.dirs.values():
            # os.walk skips a child cgroup removed meanwhile (a command ending); Path.glob raised
            # FileNotFoundError, which ended the disk quota's watchdog thread under load.
            for folder, _children, _files in os.walk(d):
                for word in _read(Path(folder) / "cgroup.procs").split():
                    found.add(int(word))
        return found

    def kill(self, deadline_s: float = 5.0) -> None:
        """SIGKILL everything in the cgroup, whatever it does meanwhile (fork, setsid, drop tags)."""
        end = time.monotonic() + deadline_s
        if self.hierarchy.version == 2:
            _write(self.dirs["unified"] / "cgroup.kill", "1")
            while self.pids() and time.monotonic() < end:
                time.sleep(0.002)
            return
        freezer, pidsdir = self.dirs.get("freezer"), self.dirs.get("pids")
        if pidsdir is not None:
            _write(pidsdir / "pids.max", "0")  # no more forks, frozen or not
        while time.monotonic() < end:
            members = self.pids()
            if not members:
                return
            if freezer is not None:
                _write(freezer / "freezer.state", "FROZEN")
            for pid in self.pids():
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            if freezer is not None:
                _write(freezer / "freezer.state", "THAWED")  # a frozen process cannot die
            time.sleep(0.002)

    def pids_max(self) -> int | None:
        """This cgroup's ``pids.max`` (None: no limit, or no pids controller)."""
        d = self._dir("pids")
        value = _read(d / "pids.max").strip() if d is not None else ""
        return int(value) if value.isdigit() else None

    def counters(self) -> tuple[int, int]:
        """How often this cgroup's own limits were hit so far: (forks refused, out-of-memory kills)."""
        d = self._dir("pids")
        forks = _event(d / "pids.events", "max") if d is not None else 0
        d = self._dir("memory")
        kills = 0
        if d is not None:
            name = "memory.events" if self.hierarchy.version == 2 else "memory.oom_control"
            kills = _event(d / name, "oom_kill")
        return forks, kills

    def limit_hit(self, since: tuple[int, int] = (0, 0), whose: str = "") -> str | None:
        """What limit the command ran into, in words (``pids limit 1024 reached``), else None.

        ``since``: the :meth:`counters` before the command started (a workspace's cgroup counts
        for all its commands); ``whose``: put before the words (``workspace``)."""
        forks, kills = self.counters()
        prefix = f"{whose} " if whose else ""
        d = self._dir("pids")
        if d is not None and forks > since[0]:
            return f"{prefix}pids limit {_read(d / 'pids.max').strip()} reached (fork failed)"
        d = self._dir("memory")
        if d is not None and kills > since[1]:
            name = "memory.max" if self.hierarchy.version == 2 else "memory.limit_in_bytes"
            limit = _read(d / name).strip()
            return f"{prefix}memory limit {_human(limit)} reached (killed by the out-of-memory killer)"
        return None

    def remove(self) -> None:
        """Delete the cgroup folders (kills what is still inside first)."""
        if self.pids():
            self.kill()
        for d in self.dirs.values():
            _rmdir_tree(d)


def _human(value: str) -> str:
    try:
        n = int(value)
    except ValueError:
        return value
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} bytes"


def _event(path: Path, key: str) -> int:
    for line in _read(path).splitlines():
        name, _, value = line.partition(" ")
        if name == key:
            with contextlib.suppress(ValueError):
                return int(value)
    return 0


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _write(path: Path, value: str) -> bool:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        os.write(fd, value.encode())
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _rmdir_tree(d: Path) -> None:
    """rmdir ``d`` and the cgroups below it, deepest first (a cgroup folder holds only control files)."""
    with contextlib.suppress(OSError):
        for sub in sorted((p for p in d.glob("**/") if p != d), key=lambda p: -len(p.parts)):
            with contextlib.suppress(OSError):
                sub.rmdir()
    for _ in range(50):
        try:
            d.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.002)

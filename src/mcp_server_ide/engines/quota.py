"""A workspace's disk quota (``Policy.disk_quota``): the server refuses writes past it.

The workspace's bytes (the sizes of its regular files, ``.git`` included, each hard-linked file
once, no link followed) are counted by a walk, kept, moved by every write the server makes, and
counted again when the count is older than :data:`RECOUNT_S`, or was made while one of its commands
ran or started (they write too: a write right after a command ends counts what it left). A write
that would take the total past the quota is refused before any byte lands; one that shrinks a
file or keeps its size always passes, so a project over its quota can still be cleaned up.

Commands cannot go past it either with one file: their file size limit (``RLIMIT_FSIZE``) is at
most the quota (``limits.within_quota``), and their ``/tmp`` is a tmpfs no larger than it
(``processes.bubblewrap``). Nor with many: while a hosted workspace with a quota has commands
running, a watchdog thread counts its files again every :data:`WATCH_S` seconds (less often when
counting takes long: at most a tenth of one core) and, once they pass the quota, kills every
command of the workspace, each reporting ``limitHit: disk quota … reached``.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from .failures import ToolFailure
from .processes.limits import human_size

if TYPE_CHECKING:
    from ..workspace import Workspace

RECOUNT_S = 5.0
"""How old a count may be before a write counts the workspace again."""
WATCH_S = 0.5
"""How often the watchdog counts a workspace's files while its commands run (at the least)."""


def count_bytes(root: Path) -> int:
    """The sizes of the regular files under ``root``, each inode once, links not followed."""
    total = 0
    seen: set[tuple[int, int]] = set()
    for _, _, files, dir_fd in os.fwalk(root, follow_symlinks=False):
        for name in files:
            try:
                st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode):
                continue
            if st.st_nlink > 1:
                key = (st.st_dev, st.st_ino)
                if key in seen:
                    continue
                seen.add(key)
            total += st.st_size
    return total


class Usage:
    """The bytes a workspace's files take, counted and then kept up to date (a workspace service)."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._lock = threading.Lock()
        self._total: int | None = None
        self._counted_at = 0.0
        self._watching = False
        self._starts = 0
        """Commands started so far: a count is only kept when none started or ran while it was made."""

    def total(self) -> int:
        with self._lock:
            return self._current()

    def _current(self) -> int:
        now = time.monotonic()
        if self._total is None or now - self._counted_at > RECOUNT_S:
            self._total = sum(count_bytes(r) for r in self.ws.roots)
            self._counted_at = now
        return self._total

    def reserve(self, display: str, old_size: int, new_size: int) -> None:
        """Refuse (a ToolFailure) a write growing the files past the quota; else count it in."""
        quota = self.ws.policy.disk_quota
        if not quota:
            return
        with self._lock:
            used = self._current()
            after = used - old_size + new_size
            if new_size > old_size and after > quota:
                raise ToolFailure(
                    f"refused: writing {display!r} ({human_size(new_size)}) would take the project to "
                    f"{human_size(after)}, past its disk quota of {human_size(quota)} (rule: a project's "
                    f"files fit in its quota; it uses {human_size(used)} now). Delete or shrink files "
                    "first, or ask the operator for a larger quota.",
                    kind="too_large",
                )
            self._total = max(0, after)

    def watch(self) -> None:
        """A command starts: the count may go stale at once (the next write counts again); start the
        watchdog thread unless it runs (it ends when the workspace runs nothing)."""
        with self._lock:
            self._starts += 1
            self._counted_at = 0.0
            if self._watching:
                return
            self._watching = True
        threading.Thread(target=self._watch, name="mcp-ide-quota", daemon=True).start()

    def _watch(self) -> None:
        from .processes import containment

        try:
            idle = 0
            while idle < 3:
                with self._lock:
                    starts = self._starts
                busy = containment.workspace_busy(self.ws)
                started = time.monotonic()
                total = sum(count_bytes(r) for r in self.ws.roots)
                took = time.monotonic() - started
                with self._lock:
                    # A count made while a command ran (or started) may miss what it wrote last: the
                    # watchdog may use it, but a write counts again rather than trust it.
                    fresh = not busy and starts == self._starts
                    self._total, self._counted_at = total, (time.monotonic() if fresh else 0.0)
                quota = self.ws.policy.disk_quota
                if quota and total > quota:
                    containment.stop_workspace(
                        self.ws,
                        f"disk quota {human_size(quota)} reached (the project's files took "
                        f"{human_size(total)}; every command of the project was stopped)",
                    )
                idle = 0 if busy else idle + 1
                time.sleep(max(WATCH_S, took * 10))
        finally:
            with self._lock:
                self._watching = False

    def forget(self, size: int) -> None:
        """A file of ``size`` bytes was deleted."""
        with self._lock:
            if self._total is not None:
                self._total = max(0, self._total - size)


def reserve(ws: Workspace, display: str, old_size: int, new_size: int) -> None:
    """:meth:`Usage.reserve` on the workspace's usage (nothing without a quota)."""
    if ws.policy.disk_quota:
        ws.service(Usage).reserve(display, old_size, new_size)


def released(ws: Workspace, size: int) -> None:
    """A file of ``size`` bytes left the workspace (nothing without a quota)."""
    if ws.policy.disk_quota:
        ws.service(Usage).forget(size)


def watch(ws: Workspace) -> None:
    """Watch a workspace with a quota while its commands run (see the module's docstring)."""
    if ws.policy.disk_quota:
        ws.service(Usage).watch()

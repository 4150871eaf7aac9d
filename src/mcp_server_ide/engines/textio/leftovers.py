"""Our temp files left behind by killed writes, and sweeping them.

A write's temp file (``*.mcp-ide.tmp``, :data:`..sandbox.TEMP_MARK`) lives for milliseconds, and its
writer holds an exclusive ``flock`` on it until it has its final name (:func:`hold`); the kernel drops
the lock when the writer dies, so an unlocked temp file is a leftover, however young (a server killed
with ``kill -9`` and started again at once), and one older than a minute is one whatever its lock
(a writer without the lock). Sweeping deletes files, so only what may change the workspace does it:
a write (in the folder it writes) and the server's start-up (not under ``--read-only``). Listings
only leave our temp files out.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from pathlib import Path

from .. import sandbox

_MAX_SWEPT_FOLDERS = 4096
_swept: dict[tuple[int, int], int] = {}
"""Folder (device, inode) -> its mtime (ns) right after this process last wrote and swept there."""


_JUST_MADE = 1.0
"""An empty, unlocked temp file younger than this (seconds) may be a writer's between its ``open``
and its ``flock``: left for a later sweep."""


def hold(fd: int) -> None:
    """Lock a new temp file for its writer (released when the descriptor closes or the writer dies)."""
    fcntl.flock(fd, fcntl.LOCK_EX)


def sweep_temp_names(dir_fd: int, names: list[str]) -> int:
    """Remove our temp files left behind by a killed process, by name inside an open folder.

    A temp file no live writer holds (:func:`hold`) is a leftover, as is one older than a minute.
    Each name is looked at and removed relative to ``dir_fd`` without following links: a folder
    swapped for a link meanwhile cannot turn the sweep on anything outside. Returns how many were
    removed."""
    removed = 0
    now = _now()
    for name in names:
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode):
                continue
            if st.st_mtime < now - 60 or _unheld(dir_fd, name, st, now):
                os.unlink(name, dir_fd=dir_fd)
                removed += 1
        except OSError:
            pass
    return removed


def _unheld(dir_fd: int, name: str, st: os.stat_result, now: float) -> bool:
    """Whether no writer holds the temp file ``name`` (its lock is free)."""
    if st.st_size == 0 and st.st_mtime > now - _JUST_MADE:
        return False
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        if os.fstat(fd).st_ino != st.st_ino:
            return False  # replaced since it was looked at
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        return True
    finally:
        os.close(fd)


def sweep_leftovers(root: Path, timeout: float = 30.0) -> int:
    """Remove the temp files killed writes left anywhere under ``root`` (start-up; never under
    ``--read-only``). Ripgrep finds them; each is removed by :func:`sweep_temp_names` inside its
    folder reached beneath the root without following links. Returns how many were removed."""
    from .. import search

    folders: dict[str, list[str]] = {}
    for rel in search.list_temp_files(root, timeout=timeout):
        folder, _, name = rel.rpartition("/")
        folders.setdefault(folder, []).append(name)
    removed = 0
    for folder, names in folders.items():
        try:
            dir_fd = sandbox.open_folder_beneath(root, folder)
        except OSError:
            continue
        try:
            removed += sweep_temp_names(dir_fd, names)
        finally:
            os.close(dir_fd)
    return removed


def folder_stamp(dir_fd: int) -> tuple[tuple[int, int], int] | None:
    try:
        st = os.fstat(dir_fd)
    except OSError:
        return None
    return (st.st_dev, st.st_ino), st.st_mtime_ns


def sweep_after_write(folder_fd: int, before: tuple[tuple[int, int], int] | None) -> None:
    """After a write, remove stale temp leftovers from its folder (``folder_fd``, readable).

    The folder is scanned only when it changed since this process last wrote there (``before``,
    its stamp ahead of this write, differs from the one kept then): repeated writes in one folder
    cost an ``fstat``, not a scan."""
    if before is None:
        return
    key, mtime = before
    if _swept.get(key) != mtime:
        with os.scandir(folder_fd) as entries:
            names = [e.name for e in entries if sandbox.is_temp_name(e.name)]
        sweep_temp_names(folder_fd, names)
    after = folder_stamp(folder_fd)
    if after is not None:
        if len(_swept) >= _MAX_SWEPT_FOLDERS:
            _swept.clear()
        _swept[key] = after[1]


def _now() -> float:
    import time

    return time.time()

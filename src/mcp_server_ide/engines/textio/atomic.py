"""Atomic writes: a crash at any moment leaves the old bytes or the new ones.

A temp file in the same folder, fsync, rename (or link, for "create only if absent"), fsync of the
folder; the file's owner and mode are kept, a new file gets its folder's owner and ``0o666`` less
the umask. Workspace
files are written relative to their folder opened beneath the root, never following a link. Our
temp files are never listed; a writer holds a lock on its temp file, and unlocked ones (their writer
killed) are swept at start-up and by a write in their folder (:mod:`.leftovers`).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from .. import sandbox
from .leftovers import folder_stamp, hold, sweep_after_write
from .modes import default_mode


def atomic_write(
    path: Path,
    data: bytes,
    mode: int | None = None,
    *,
    exclusive: bool = False,
    root: Path | None = None,
    make_parents: bool = False,
    made: list[str] | None = None,
) -> None:
    """Write ``data`` to ``path`` so that any crash leaves the old bytes or the new ones.

    ``exclusive`` creates the file only if it does not exist (a hard link of the finished
    temp file, which fails on an existing name, a symlink included). With ``root`` (workspace
    files), the folder is reached beneath the root without following a symlink and every step
    happens relative to it, so a folder swapped for a link out meanwhile cannot redirect the write;
    ``make_parents`` then creates missing folders the same way (and lists them in ``made``).
    """
    if root is not None:
        rel_folder = path.parent.relative_to(root).as_posix()
        dir_fd = sandbox.open_folder_beneath(
            root, "" if rel_folder == "." else rel_folder, create=make_parents, made=made
        )
    else:
        dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        _write_beneath(dir_fd, path.name, data, mode, exclusive)
    finally:
        os.close(dir_fd)


def _write_beneath(dir_fd: int, name: str, data: bytes, mode: int | None, exclusive: bool) -> None:
    """:func:`atomic_write` relative to an open folder: temp file, fsync, rename (or link), fsync."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    folder_before = folder_stamp(dir_fd)
    for _ in range(100):
        # Named as tempfile.mkstemp names them (the sweep and the listings know the suffix).
        tmp = f".{name[:100]}.{secrets.token_hex(4)}{sandbox.TEMP_MARK}"
        try:
            fd = os.open(tmp, flags, 0o600, dir_fd=dir_fd)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError("no free temporary name")
    try:
        try:
            # Held until the temp file has its final name: a sweep takes only unlocked temp files,
            # those whose writer is gone (the kernel drops the lock of a killed process).
            hold(fd)
            _keep_owner(fd, None if exclusive else name, dir_fd)
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fchmod(fd, mode if mode is not None else default_mode())
            os.fsync(fd)
            if exclusive:
                os.link(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
                os.unlink(tmp, dir_fd=dir_fd)
            else:
                os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    with contextlib.suppress(OSError):
        folder_fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=dir_fd)
        try:
            os.fsync(folder_fd)
            sweep_after_write(folder_fd, folder_before)
        finally:
            os.close(folder_fd)


def _keep_owner(fd: int, path: Path | str | None, dir_fd: int) -> None:
    """Give the temp file the owner of the file it replaces, or for a new file (``path`` None or
    absent) its folder's (a server running as root must not hand the user's files, or a hosted
    project's, to root). Without the right to, the file keeps ours, as any editor's would."""
    try:
        st = os.stat(path, dir_fd=dir_fd, follow_symlinks=False) if path is not None else os.fstat(dir_fd)
    except FileNotFoundError:
        try:
            st = os.fstat(dir_fd)
        except OSError:
            return
    except OSError:
        return
    if (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
        with contextlib.suppress(OSError):
            os.fchown(fd, st.st_uid, st.st_gid)

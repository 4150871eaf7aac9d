"""Checking ripgrep's answer against the tree, reached from the root's descriptor without following links.

Ripgrep opens folders and files by path (``openat(AT_FDCWD, "./sub/x")``), following links: a folder
swapped for a link out while it walks leads it outside, and may be swapped back before it ends, so no
later ``lstat`` can tell. Its names and lines are therefore only candidates: each name is looked up
again one folder at a time from the root's descriptor with ``O_NOFOLLOW`` (:class:`Folders`), and a
content search reads each line again from the file opened that way (:mod:`.content`). What is not
there now, or reads differently, is left out: whatever ripgrep met on its way, the answer holds only
what is beneath the root.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path

_ROOT_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_CLOEXEC
_DIR_FLAGS = _ROOT_FLAGS | os.O_NOFOLLOW
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_LOOK_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_NOFOLLOW | os.O_CLOEXEC


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


_SYS_OPENAT2 = {"x86_64": 437, "aarch64": 437}.get(os.uname().machine) if hasattr(os, "uname") else None
_RESOLVE_NO_SYMLINKS, _RESOLVE_BENEATH = 0x04, 0x08


class _Openat2:
    """``openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`` (Linux 5.6+) through ``ctypes``: a file
    beneath a folder's descriptor in one system call, failing on any link on the way. Disabled for
    good on the first ENOSYS (an older kernel, a seccomp filter): :class:`Folders` then walks."""

    def __init__(self) -> None:
        self._syscall: Callable[..., int] | None = None
        if _SYS_OPENAT2 is not None and os.name == "posix":
            try:
                self._syscall = ctypes.CDLL(None, use_errno=True).syscall
            except (OSError, AttributeError):
                self._syscall = None
        resolve = _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS
        self._how = {False: _OpenHow(_FILE_FLAGS, 0, resolve), True: _OpenHow(_LOOK_FLAGS, 0, resolve)}
        self._size = ctypes.sizeof(_OpenHow)

    def open(self, dir_fd: int, path: str, *, look: bool = False) -> int | None:
        """The descriptor (with ``look``, an ``O_PATH`` one to ``fstat``), -1 when the file is not
        reachable that way, None when openat2 is not here."""
        if self._syscall is None:
            return None
        try:
            name = os.fsencode(path)
        except UnicodeError:
            return -1
        for _ in range(3):
            fd = self._syscall(_SYS_OPENAT2, dir_fd, name, ctypes.byref(self._how[look]), self._size)
            if fd >= 0:
                return fd
            err = ctypes.get_errno()
            if err == errno.EAGAIN:
                continue  # a rename raced the lookup: look again
            if err in (errno.ENOSYS, errno.EPERM):
                self._syscall = None
                return None
            return -1
        return -1


_openat2 = _Openat2()


class Folders:
    """Descriptors of the folders on one path from the root, each opened from its parent's with
    ``O_NOFOLLOW``. Ask for folders in sorted order (a folder's names are then together): each is
    opened once, and only the current path's folders are held open. Close it when done."""

    def __init__(self, root: Path) -> None:
        self._chain: list[tuple[str, int]] = [("", os.open(root, _ROOT_FLAGS))]

    def fd(self, folder: str) -> int | None:
        """The descriptor of ``folder`` (POSIX, relative, "" the root), or None when it is not a plain
        folder beneath the root now (a link, gone, not a folder)."""
        chain = self._chain
        while len(chain) > 1:
            rel = chain[-1][0]
            if folder == rel or folder.startswith(rel + "/"):
                break
            fd = chain.pop()[1]
            if fd >= 0:
                os.close(fd)
        rel, fd = chain[-1]
        if rel == folder:
            return fd if fd >= 0 else None
        if fd < 0:
            return None  # below a folder that failed
        for part in folder[len(rel) + 1 if rel else 0 :].split("/"):
            rel = rel + "/" + part if rel else part
            try:
                fd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except (OSError, ValueError):
                chain.append((rel, -1))
                return None
            chain.append((rel, fd))
        return fd

    def is_file(self, path: str) -> bool:
        """Whether ``path`` is a regular file beneath the root now (not a link)."""
        fd = _openat2.open(self._chain[0][1], path, look=True) if "\x00" not in path else -1
        if fd is not None:
            if fd < 0:
                return False
            try:
                return stat.S_ISREG(os.fstat(fd).st_mode)
            finally:
                os.close(fd)
        folder, _, name = path.rpartition("/")
        fd = self.fd(folder)
        if fd is None:
            return False
        try:
            return stat.S_ISREG(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
        except (OSError, ValueError):
            return False

    def open_file(self, path: str) -> int | None:
        """A readable descriptor of the regular file ``path`` beneath the root, or None."""
        file_fd = _openat2.open(self._chain[0][1], path) if "\x00" not in path else -1
        if file_fd is None:  # no openat2: one folder at a time
            folder, _, name = path.rpartition("/")
            fd = self.fd(folder)
            if fd is None:
                return None
            try:
                file_fd = os.open(name, _FILE_FLAGS, dir_fd=fd)
            except (OSError, ValueError):
                return None
        elif file_fd < 0:
            return None
        if not stat.S_ISREG(os.fstat(file_fd).st_mode):
            os.close(file_fd)
            return None
        return file_fd

    def close(self) -> None:
        for _, fd in self._chain:
            if fd >= 0:
                os.close(fd)
        self._chain = []

    def __enter__(self) -> Folders:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def present(root: Path, paths: list[str]) -> set[str]:
    """The ``paths`` (relative, POSIX) that are regular files beneath ``root`` now, reached without
    following a link: one ``fstatat`` a name, one ``open`` a folder."""
    with Folders(root) as folders:
        return {p for p in sorted(paths) if folders.is_file(p)}


def decoded_as_ripgrep(first: bytes) -> str | None:
    """The encoding ripgrep transcodes a file from, told by its first bytes (a UTF-16 byte order mark),
    or None when it searches the bytes as they are (a UTF-8 BOM it only drops)."""
    if first.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    return None

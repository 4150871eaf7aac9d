"""Checking ripgrep's answer against the tree, reached from the root's descriptor without following links.

Ripgrep opens folders and files by path (``openat(AT_FDCWD, "./sub/x")``), following links: a folder
swapped for a link out while it walks leads it outside, and may be swapped back before it ends, so no
later ``lstat`` can tell. Its names and lines are therefore only candidates: each name is looked up
again one folder at a time from the root's descriptor with ``O_NOFOLLOW`` (:class:`Folders`), and a
content search's lines are read again from the file opened that way (:func:`same_lines`). What is not
there now, or reads differently, is left out: whatever ripgrep met on its way, the answer holds only
what is beneath the root.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

_ROOT_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_CLOEXEC
_DIR_FLAGS = _ROOT_FLAGS | os.O_NOFOLLOW
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CHUNK = 1 << 16


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
        folder, _, name = path.rpartition("/")
        fd = self.fd(folder)
        if fd is None:
            return None
        try:
            file_fd = os.open(name, _FILE_FLAGS, dir_fd=fd)
        except (OSError, ValueError):
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


def read_lines(fd: int, wanted: list[int]) -> dict[int, bytes]:
    """Lines ``wanted`` (1-based, ascending) of the file open at ``fd``, without their line breaks
    (and a final ``\\r``); a line past the end is missing. Reads only as far as the last one."""
    found: dict[int, bytes] = {}
    buf, pos, line, eof = b"", 0, 1, False
    for n in wanted:
        while True:
            nl = buf.find(b"\n", pos)
            if nl < 0 and not eof:
                chunk = os.read(fd, _CHUNK)
                buf, pos, eof = buf[pos:] + chunk, 0, not chunk
                continue
            if line == n:
                if nl < 0 and pos >= len(buf):
                    return found  # past the end
                text = buf[pos : nl if nl >= 0 else len(buf)]
                found[n] = text[:-1] if text.endswith(b"\r") else text
                break
            if nl < 0:
                return found
            pos, line = nl + 1, line + 1
    return found


def decoded_as_ripgrep(first: bytes) -> str | None:
    """The encoding ripgrep transcodes a file from, told by its first bytes (a UTF-16 byte order mark),
    or None when it searches the bytes as they are (a UTF-8 BOM it only drops)."""
    if first.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    return None

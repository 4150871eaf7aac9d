"""Finding git and the repository: the ``git`` program (its version checked once), the git directory
that the root's ``.git`` names (a folder, or a ``gitdir:`` file for worktrees and submodules), and
the file stamps that tell when what was found, or read, may have changed.

A repository above the root is never used: only ``<root>/.git`` counts.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterable
from pathlib import Path

from ..failures import ToolFailure
from .messages import not_a_repository

MIN_VERSION: tuple[int, int] = (
    2,
    31,
)  # GIT_CONFIG_COUNT (2.31), --diff-merges (2.31), --end-of-options (2.24), switch (2.23)

_version: tuple[int, int] | None = None
_version_lock = threading.Lock()


def find_git() -> str:
    """The path of ``git``, or the seed's ``Git not available`` failure (missing, or older than 2.31)."""
    global _version
    path = shutil.which("git")
    if path is None:
        raise ToolFailure(
            "Git not available: the `git` command is not installed on this machine", kind="unavailable"
        )
    with _version_lock:
        if _version is None:
            out = subprocess.run(
                [path, "version"], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=10
            ).stdout
            _version = parse_version(out)
        version = _version
    if version < MIN_VERSION:
        raise ToolFailure(
            f"Git not available: git {'.'.join(map(str, MIN_VERSION))} or newer is needed "
            f"(found {'.'.join(map(str, version))})",
            kind="unavailable",
        )
    return path


def parse_version(text: str) -> tuple[int, int]:
    """(major, minor) from ``git version`` output such as ``git version 2.43.0``; (0, 0) when unreadable."""
    m = re.search(r"(\d+)\.(\d+)", text)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def dotgit_stamp(dotgit: Path) -> object | None:
    """The ``lstat`` of ``<root>/.git`` (None when there is none): when it changes, look again."""
    try:
        st = os.lstat(dotgit)
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def locate(root: Path, *, hosted: bool) -> tuple[Path, Path]:
    """(git directory, common directory) of the repository whose ``.git`` is at ``root``; a
    ``Git not available`` failure when it is broken, a refusal when hosted and it points outside."""
    gitdir = read_dotgit(root / ".git")
    if gitdir is None or not (gitdir / "HEAD").exists():
        raise not_a_repository(root, broken=True)
    commondir = gitdir
    with contextlib.suppress(OSError):
        text = (gitdir / "commondir").read_text().strip()
        if text:
            commondir = Path(os.path.realpath(gitdir / text))
    if hosted:
        for d in (gitdir, commondir):
            if not (d == root or d.is_relative_to(root)):
                raise ToolFailure(
                    "refused: the workspace's .git points outside the workspace (rule: in hosted mode the "
                    "repository must live inside the project)",
                    kind="refused",
                )
    return gitdir, commondir


def read_dotgit(dotgit: Path) -> Path | None:
    """The git directory named by ``<root>/.git`` (a folder, or a ``gitdir:`` file for worktrees)."""
    if dotgit.is_dir():
        return Path(os.path.realpath(dotgit))
    try:
        text = dotgit.read_text(errors="replace").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    target = Path(text[len("gitdir:") :].strip())
    if not target.is_absolute():
        target = dotgit.parent / target
    target = Path(os.path.realpath(target))
    return target if target.is_dir() else None


def stat_keys(paths: Iterable[str]) -> tuple[object, ...]:
    """The stamps of ``paths`` (see :func:`stat_key`)."""
    return tuple(stat_key(p) for p in paths)


def stat_key(path: str) -> object:
    """What tells that a file changed (modification time, size, inode), or that it is missing."""
    try:
        st = os.stat(path)
    except OSError:
        return (path, None)
    return (path, st.st_mtime_ns, st.st_size, st.st_ino)

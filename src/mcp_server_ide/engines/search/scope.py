"""What every search looks at: the ripgrep flags all searches share, and the check of its answer.

Ripgrep opens folders by path, so a folder swapped for a link out while it walks would lead it
outside: :func:`swapped` finds what it named under a folder (or, for a content search, a file)
that is not plain any more, for the searches to leave out.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from .globs import check_glob

ALWAYS_SKIPPED = (".git", "*.mcp-ide.tmp")
"""Never searched nor listed: the repository, and our own in-flight temp files (sandbox.TEMP_MARK)."""
SKIPPED_UNLESS_IGNORED = ("node_modules", "dist")


@dataclass(frozen=True)
class Filters:
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    include_ignored: bool = False


def common_args(filters: Filters) -> list[str]:
    # As VS Code searches by default: the workspace's own ignore files only, not those of folders
    # above it (a parent ignoring the workspace folder would hide everything) nor the user's global
    # excludes (answers must not depend on one person's git config).
    args = [
        "--no-config",
        "--hidden",
        "--no-messages",
        "--no-follow",
        "--no-ignore-parent",
        "--no-ignore-global",
    ]
    if filters.include_ignored:
        args.append("--no-ignore")
    else:
        args.append("--no-require-git")
    # Include globs are applied to ripgrep's answer (matches()), not given to it: a ripgrep --glob
    # overrides the ignore files, so '*.py' would bring back every ignored .py file (.venv...).
    for glob in filters.exclude:
        args += ["--glob", "!" + check_glob(glob).lstrip("!")]
    # Last, so they win over the caller's own globs (ripgrep: later globs take precedence).
    for name in ALWAYS_SKIPPED:
        args += ["--glob", f"!{name}"]
    if not filters.include_ignored:
        for name in SKIPPED_UNLESS_IGNORED:
            args += ["--glob", f"!{name}/"]
    return args


SWAPPED = "a folder became a link or vanished while the search ran; what ripgrep found under it was left out"


def swapped(root: Path, paths: list[str], *, files_too: bool) -> set[str]:
    """The ``paths`` under a folder that is not a plain folder now (a link, or gone), and with
    ``files_too`` those that are not a plain file now. Each folder is looked at once (``lstat``, never
    following a link), so the check costs one system call per folder of the answer."""
    state: dict[str, bool] = {"": True}
    base = os.path.join(root, "")  # joined as strings: a Path per name costs more than its lstat

    def plain_folder(folder: str) -> bool:
        unknown: list[str] = []  # the folder and its ancestors not looked at yet, deepest first
        while folder not in state:
            unknown.append(folder)
            folder = folder.rpartition("/")[0]
        known = state[folder]
        for name in reversed(unknown):  # from the top down: below a link or a gap nothing is plain
            if known:
                try:
                    known = stat.S_ISDIR(os.lstat(base + name).st_mode)
                except OSError:
                    known = False
            state[name] = known
        return known

    out: set[str] = set()
    for path in paths:
        if not plain_folder(path.rpartition("/")[0]):
            out.add(path)
        elif files_too:
            try:
                if not stat.S_ISREG(os.lstat(base + path).st_mode):
                    out.add(path)
            except OSError:
                out.add(path)
    return out

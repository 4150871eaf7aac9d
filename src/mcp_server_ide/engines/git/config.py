"""The repository's configuration as git sees it, read once and kept while none of its files changes.

``git config --list --show-scope --show-origin`` is read into a :class:`ConfigSnapshot`, stamped by
the stat of every file the configuration came from or may include (the repository's, the user's,
the system's, ``include.path`` targets, and ``HEAD`` for ``includeIf "onbranch:"``). The
containment uses it to empty every configured filter; a pull in an untrusted workspace asks it
which dangerous keys the repository's own configuration sets.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .discovery import stat_key, stat_keys

Entry = tuple[str, str, str | None]
"""(scope, key, value); value None for a key given without ``=`` (a boolean true)."""


@dataclass
class ConfigSnapshot:
    files: tuple[str, ...]  # every file the configuration came from or may include
    stamp: tuple[object, ...]  # their stat when it was read
    entries: list[Entry]
    filter_drivers: tuple[str, ...]

    def local_keys(self, patterns: Sequence[re.Pattern[str]]) -> list[str]:
        """Keys set by the repository's own configuration (local or worktree scope) matching a pattern."""
        found = [
            key
            for scope, key, value in self.entries
            if scope in ("local", "worktree") and value and any(p.fullmatch(key) for p in patterns)
        ]
        return sorted(set(found))


class ConfigCache:
    """One repository's :class:`ConfigSnapshot`, read again when one of its files changed."""

    def __init__(self) -> None:
        self._snapshot: ConfigSnapshot | None = None
        self._lock: threading.Lock = threading.Lock()

    def get(
        self, files: Callable[[], list[str]], read: Callable[[], tuple[list[Entry], list[str]]]
    ) -> ConfigSnapshot:
        """The snapshot; on a change, ``files()`` names the known files and ``read()`` runs ``git config``."""
        with self._lock:
            cached = self._snapshot
            if cached is not None and cached.stamp == stat_keys(cached.files):
                return cached
            base = files()
            seen = {
                f: stat_key(f) for f in base
            }  # taken before reading: a change while reading shows next time
            entries, origins = read()
            names = tuple(sorted(set(base) | set(origins)))
            stamp = tuple(seen[f] if f in seen else stat_key(f) for f in names)
            drivers = {
                key[len("filter.") : key.rindex(".")]
                for _, key, _ in entries
                if key.startswith("filter.") and key.count(".") >= 2
            }
            snap = ConfigSnapshot(names, stamp, entries, tuple(sorted(drivers)))
            self._snapshot = snap
            return snap


def config_files(gitdir: Path, commondir: Path | None) -> list[str]:
    """The files git reads configuration from, whether or not they exist (includes come from ``git config``)."""
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    files = [
        str(gitdir / "config"),
        str(gitdir / "config.worktree"),
        str(gitdir / "HEAD"),  # includeIf "onbranch:" depends on it
        os.environ.get("GIT_CONFIG_GLOBAL") or os.path.join(home, ".gitconfig"),
        os.path.join(xdg, "git", "config"),
        os.environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig",
    ]
    if commondir is not None:
        files.append(str(commondir / "config"))
    return files


def parse_config_list(data: bytes, root: Path) -> tuple[list[Entry], list[str]]:
    """``git config --list --show-scope --show-origin -z`` into entries and the files they came from
    (with the targets of ``include.path`` / ``includeIf.*.path``)."""
    tokens = data.split(b"\0")
    entries: list[Entry] = []
    files: list[str] = []
    for i in range(0, len(tokens) - 2, 3):
        scope = tokens[i].decode("utf-8", "replace")
        origin = tokens[i + 1].decode("utf-8", "replace")
        key, sep, value = tokens[i + 2].decode("utf-8", "replace").partition("\n")
        entries.append((scope, key, value if sep else None))
        if origin.startswith("file:"):
            path = origin[len("file:") :]
            path = path if os.path.isabs(path) else str(root / path)
            files.append(path)
            if (key == "include.path" or (key.startswith("includeif.") and key.endswith(".path"))) and value:
                target = os.path.expanduser(value)
                files.append(target if os.path.isabs(target) else os.path.join(os.path.dirname(path), target))
    return entries, sorted(set(files))

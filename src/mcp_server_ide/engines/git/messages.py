"""Git's own words, made fit for a caller: trimmed, without host paths or credentials, and the
failures every operation shares (not a repository, no commits yet).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..failures import ToolFailure


def listed_files(text: str) -> list[str]:
    """The files git lists (tab-indented) under 'would be overwritten' and similar errors."""
    return [line.strip() for line in text.splitlines() if line.startswith("\t")]


def tail_lines(text: str, limit: int = 1500) -> str:
    """The last ``limit`` characters of git's message, without blank lines and ``hint:`` lines."""
    lines = [ln for ln in text.strip().splitlines() if ln.strip() and not ln.startswith("hint:")]
    text = "\n".join(lines)
    return text if len(text) <= limit else "…" + text[-limit:]


_URL = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*)://([^\s'\"`]*)")
_ABS = re.compile(r"(?<![\w./~:-])(/[^\s'\"`:,;()<>]*)")


def redact(text: str, root: Path) -> str:
    """Replace host paths outside ``root`` (bare or as ``file://`` URLs) with a placeholder; strip
    credentials from URLs."""

    def inside(path: str) -> bool:
        try:
            return Path(os.path.normpath(path)).is_relative_to(root)
        except ValueError:
            return False

    def url(m: re.Match[str]) -> str:
        scheme, rest = m.group(1), m.group(2)
        if scheme.lower() == "file":
            return m.group(0) if inside(rest) else "file://<outside the workspace>"
        host, sep, tail = rest.partition("/")
        host = host.rpartition("@")[2]
        return f"{scheme}://{host}{sep}{tail}"

    text = _URL.sub(url, text)
    return _ABS.sub(
        lambda m: m.group(1) if inside(m.group(1)) or m.group(1) == os.devnull else "<outside the workspace>",
        text,
    )


def not_a_repository(root: Path, broken: bool = False) -> ToolFailure:
    """The seed's ``Git not available`` failure for a root without a (usable) repository."""
    if broken:
        return ToolFailure(
            f"Git not available: {root} has a .git entry but it is not a usable git repository "
            "(a broken or partial .git; check it with `git status` in that folder)",
            kind="unavailable",
        )
    return ToolFailure(
        f"Git not available: {root} is not a git repository (the workspace root has no .git). "
        "Run `git init` there, or open the repository's top folder as the workspace.",
        kind="unavailable",
    )


def no_commits() -> ToolFailure:
    """The failure for a question about HEAD in a repository without commits."""
    return ToolFailure(
        "not found: the repository has no commits yet (commit_changes makes the first one)", kind="not_found"
    )

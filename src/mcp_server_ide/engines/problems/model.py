"""What a problems source answers: problems by file, and whether it ran (or why it was skipped).

A problem is the same dict ``get_file_problems`` gives (``source, severity, code, message, line,
character, endLine, endCharacter``, 0-based, UTF-16 characters); files are keyed by their
root-relative POSIX path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Problem = dict[str, Any]
ByFile = dict[str, list[Problem]]

SEVERITIES = ("error", "warning", "information", "hint")
RANK = {name: i for i, name in enumerate(SEVERITIES)}


@dataclass
class SourceRun:
    """One source's answer over the whole project (``skipped`` set: it did not run, and why)."""

    source: str
    files: ByFile = field(default_factory=dict)
    skipped: str | None = None
    at: float = 0.0
    """``time.monotonic()`` when the run started: live diagnostics newer than this win."""
    key: str = ""
    """The tree state it ran on (see :mod:`.tree`)."""
    duration_ms: int = 0


def problem(
    source: str,
    severity: str,
    code: str,
    message: str,
    start: tuple[int, int],
    end: tuple[int, int] | None = None,
) -> Problem:
    end = end or start
    return {
        "source": source,
        "severity": severity if severity in RANK else "error",
        "code": code,
        "message": message,
        "line": start[0],
        "character": start[1],
        "endLine": end[0],
        "endCharacter": end[1],
    }


def sort_key(p: Problem) -> tuple[int, int, int]:
    return (p["line"], p["character"], RANK.get(p["severity"], 4))

"""Breakpoints: 0-based lines of files, kept by the editor model for the debug tools.

:class:`Breakpoints` is the set the headless model saves in its state file and moves through
this server's own edits (:meth:`Breakpoints.follow`); a debugger reads it as a list of
:class:`Breakpoint`. Keys are absolute, real paths inside the workspace.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .. import textio
from ..failures import ToolFailure
from .linemap import LineMapper
from .positions import split_lines


@dataclass(frozen=True)
class Breakpoint:
    path: Path
    line: int
    """0-based."""


class Breakpoints:
    """Breakpoints by file: path -> its 0-based lines (a file without breakpoints has no entry)."""

    def __init__(self, by_file: dict[str, set[int]] | None = None) -> None:
        self.by_file: dict[str, set[int]] = by_file if by_file is not None else {}

    def __contains__(self, key: str) -> bool:
        return key in self.by_file

    def files(self) -> list[str]:
        return list(self.by_file)

    def all(self) -> list[Breakpoint]:
        """Every breakpoint, by path then line."""
        return [Breakpoint(Path(p), n) for p in sorted(self.by_file) for n in sorted(self.by_file[p])]

    def toggle(self, key: str, line: int) -> bool:
        """Add a breakpoint at ``line`` of ``key``, or remove the one there. True when added."""
        lines = self.by_file.setdefault(key, set())
        if line in lines:
            lines.discard(line)
            if not lines:
                self.by_file.pop(key, None)
            return False
        lines.add(line)
        return True

    def clear(self) -> int:
        """Remove every breakpoint; returns how many there were."""
        count = sum(len(v) for v in self.by_file.values())
        self.by_file.clear()
        return count

    def forget(self, key: str) -> None:
        """Drop the breakpoints of ``key`` (the file was deleted)."""
        self.by_file.pop(key, None)

    def follow(self, key: str, mapper: LineMapper) -> None:
        """Move the breakpoints of ``key`` through an edit; those on deleted lines go."""
        lines = self.by_file.get(key)
        if lines:
            moved = {m for m in (mapper(n) for n in lines) if m is not None}
            if moved:
                self.by_file[key] = moved
            else:
                self.by_file.pop(key, None)

    def missing(self) -> bool:
        """True when a file with breakpoints is no longer on disk."""
        return any(not os.path.isfile(p) for p in self.by_file)

    def prune_missing(self) -> None:
        """Drop the breakpoints of files no longer on disk."""
        for key in list(self.by_file):
            if not os.path.isfile(key):
                self.by_file.pop(key, None)

    def snapshot(self) -> dict[str, frozenset[int]]:
        return {k: frozenset(v) for k, v in self.by_file.items()}

    def to_json(self) -> dict[str, list[int]]:
        return {path: sorted(lines) for path, lines in sorted(self.by_file.items()) if lines}

    @classmethod
    def from_json(cls, data: object) -> Breakpoints:
        """Read back :meth:`to_json`'s form; anything but a list of non-negative line numbers per file
        is skipped."""
        by_file: dict[str, set[int]] = {}
        for path, lines in data.items() if isinstance(data, dict) else ():
            if not isinstance(path, str) or not isinstance(lines, list):
                continue
            good = {n for n in lines if isinstance(n, int) and not isinstance(n, bool) and n >= 0}
            if good:
                by_file[path] = good
        return cls(by_file)


def check_line(tf: textio.TextFile, line: int, name: str) -> None:
    """Refuse a breakpoint ``line`` (0-based) past the end of the file ``name`` whose text is ``tf``."""
    total = len(split_lines(tf.text))
    if tf.text.endswith("\n") and total > 1:
        total -= 1  # the empty string after the final newline is not a line a person sees
    if line < 0 or line >= total:
        raise ToolFailure(
            f"invalid parameters: line {line + 1} is past the end of {name!r} "
            f"({total} lines; rule: breakpoints go on lines 1..{total})"
        )

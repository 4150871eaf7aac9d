"""Line mapping: where the lines of a text went after an edit (a line diff of before and after).

The editor model moves breakpoints and selections through it when this server's own tools edit
a file, so a breakpoint stays on its line when lines are inserted or deleted above it.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence

MAX_DIFF_CELLS = 4_000_000
"""Past this many (old lines x new lines) in the changed middle, it is mapped as one block, not diffed."""

LineMapper = Callable[[int], int | None]
"""A 0-based line of the old text -> its line in the new text, or None when it was deleted."""


def line_mapper(old: str, new: str) -> LineMapper:
    """How 0-based line numbers of ``old`` move in ``new``: the new line, or None when the line was deleted.

    Lines inside a changed block keep their offset in the block while the new block is long
    enough, and otherwise land on its last line; lines of a block that was only deleted are None.
    """
    a = old.split("\n")
    b = new.split("\n")
    prefix, suffix = common_ends(a, b)
    mid_a = a[prefix : len(a) - suffix]
    mid_b = b[prefix : len(b) - suffix]
    if not mid_a or not mid_b or len(mid_a) * len(mid_b) > MAX_DIFF_CELLS:
        opcodes = [
            ("replace" if mid_a and mid_b else "delete" if mid_a else "insert", 0, len(mid_a), 0, len(mid_b))
        ]
    else:
        opcodes = difflib.SequenceMatcher(None, mid_a, mid_b, autojunk=False).get_opcodes()
    delta = len(b) - len(a)
    end_a = len(a) - suffix

    def map_line(line: int) -> int | None:
        if line < prefix:
            return line
        if line >= end_a:
            return line + delta
        k = line - prefix
        for tag, i1, i2, j1, j2 in opcodes:
            if i1 <= k < i2:
                if tag == "equal":
                    return prefix + j1 + (k - i1)
                if tag == "replace" or (tag != "delete" and j2 > j1):
                    return prefix + j1 + min(k - i1, j2 - j1 - 1)
                return None
        return None

    return map_line


def block_start(old: str, new: str, line: int) -> int:
    """Where a deleted line's block now begins in ``new`` (the line that took its place)."""
    mapper = line_mapper(old, new)
    probe = line
    total = old.count("\n") + 1
    while probe < total:
        mapped = mapper(probe)
        if mapped is not None:
            return mapped
        probe += 1
    return max(new.count("\n"), 0)


def common_ends(a: Sequence[object], b: Sequence[object]) -> tuple[int, int]:
    """How many leading and (then) trailing items ``a`` and ``b`` share; they never overlap."""
    shortest = min(len(a), len(b))
    prefix = 0
    while prefix < shortest and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < shortest - prefix and a[len(a) - 1 - suffix] == b[len(b) - 1 - suffix]:
        suffix += 1
    return prefix, suffix

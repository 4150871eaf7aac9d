"""Positions and selections in a text, as VS Code has them, and the arithmetic on them.

Lines and characters are 0-based; characters count Unicode code points. A text's lines are
``text.split("\n")`` (:func:`split_lines`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..failures import ToolFailure

END_OF_LINE = -1
"""A character position meaning "the end of that line" in a selection request."""


@dataclass(frozen=True, order=True)
class Position:
    """A place in a text: 0-based line and character (Unicode code points), as VS Code's ``Position``."""

    line: int
    character: int


@dataclass(frozen=True)
class Selection:
    """``anchor`` is where the selection started, ``active`` where the cursor is (they are equal for a cursor)."""

    anchor: Position
    active: Position

    @classmethod
    def cursor(cls, line: int, character: int = 0) -> Selection:
        return cls(Position(line, character), Position(line, character))

    @property
    def start(self) -> Position:
        return min(self.anchor, self.active)

    @property
    def end(self) -> Position:
        return max(self.anchor, self.active)

    @property
    def is_empty(self) -> bool:
        return self.anchor == self.active


def split_lines(text: str) -> list[str]:
    return text.split("\n")


def offset(lines: list[str], pos: Position) -> int:
    """Where ``pos`` is in the text made of ``lines``, counted in characters from its start."""
    return sum(len(line) + 1 for line in lines[: pos.line]) + pos.character


def clamp(sel: Selection, lines: list[str]) -> Selection:
    """``sel`` with both ends moved into the text (the last line, the end of a line)."""

    def fit(pos: Position) -> Position:
        line = min(max(pos.line, 0), len(lines) - 1)
        return Position(line, min(max(pos.character, 0), len(lines[line])))

    return Selection(fit(sel.anchor), fit(sel.active))


def checked(sel: Selection, lines: list[str], name: str) -> Selection:
    """A requested selection made concrete (``END_OF_LINE`` resolved), or a clear refusal."""

    def concrete(pos: Position, which: str) -> Position:
        if pos.line < 0 or pos.line >= len(lines):
            raise ToolFailure(
                f"invalid parameters: {which} line {pos.line + 1} is outside 1..{len(lines)} for {name!r}"
            )
        length = len(lines[pos.line])
        character = length if pos.character == END_OF_LINE else pos.character
        if character < 0 or character > length:
            raise ToolFailure(
                f"invalid parameters: {which} character {pos.character} is outside 0..{length} on line {pos.line + 1} "
                f"of {name!r} (characters are 0-based; the line has {length})"
            )
        return Position(pos.line, character)

    return Selection(concrete(sel.anchor, "start"), concrete(sel.active, "end"))


def find_text(text: str, needle: str, name: str) -> Selection:
    """The selection of the only occurrence of ``needle`` in ``text`` (the file ``name``), or a clear refusal."""
    if not needle:
        raise ToolFailure("invalid parameters: selectText is empty; give the exact text to select")
    count = text.count(needle)
    if count != 1:
        raise ToolFailure(
            f"{'no match' if count == 0 else 'ambiguous'}: selectText occurs {count} times in {name!r}; "
            "nothing was selected (give text that occurs exactly once, or use startLine/endLine)",
            kind="conflict" if count else "not_found",
        )
    start = text.index(needle)
    head = text[:start].split("\n")
    tail = text[: start + len(needle)].split("\n")
    return Selection(Position(len(head) - 1, len(head[-1])), Position(len(tail) - 1, len(tail[-1])))

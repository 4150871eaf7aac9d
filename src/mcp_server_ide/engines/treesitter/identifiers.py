"""The identifier at (or nearest to) a position on a line, for tools that take a caller's position."""

from __future__ import annotations

import re

from .positions import utf16_len


def identifier_at(text: str, lang: str | None, line: int, character: int) -> tuple[int, int, int] | None:
    """The identifier on ``line`` at or nearest to ``character``: ``(line, start, end)`` in UTF-16 units.

    A caller's position a little off the identifier (on the space before it, on the ``(`` after it)
    snaps to the closest identifier on the same line; None when the line has none.
    """
    lines = text.split("\n")
    if line < 0 or line >= len(lines):
        return None
    row = lines[line]
    best: tuple[tuple[float, int], int, int] | None = None  # (score, start, end)
    for m in _IDENT.finditer(row):
        a = utf16_len(row[: m.start()])
        b = a + utf16_len(m.group(0))
        if a <= character < b:
            dist = 0.0
        elif character == b:
            dist = 0.5  # just after a name (on its `(`): that name, unless another starts right here
        else:
            dist = float(a - character if character < a else character - b)
        if m.group(0) in _KEYWORDS:
            dist += 1.5
        score = (dist, 0)
        if best is None or score < best[0]:
            best = (score, a, b)
    if best is None:
        return None
    return line, best[1], best[2]


_IDENT = re.compile(r"[^\W\d]\w*|\$\w*", re.UNICODE)
_KEYWORDS = {
    "def",
    "class",
    "function",
    "const",
    "let",
    "var",
    "return",
    "import",
    "from",
    "export",
    "async",
    "await",
    "new",
    "public",
    "private",
    "protected",
    "static",
    "self",
    "this",
    "fn",
    "func",
    "pub",
    "if",
    "else",
    "for",
    "while",
    "in",
    "of",
    "as",
    "is",
    "not",
    "and",
    "or",
    "lambda",
    "interface",
    "type",
}

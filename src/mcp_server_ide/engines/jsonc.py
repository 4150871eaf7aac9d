"""JSON with comments, as VS Code reads its settings, launch.json and tasks.json.

Accepts ``//`` and ``/* */`` comments and trailing commas before ``}`` or ``]``; an empty (or
all-comment) document is ``None``. Errors name the line and column, counted in the original text.
"""

from __future__ import annotations

import json
from typing import Any


class JsoncError(ValueError):
    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(f"{message} at line {line}, column {column}")
        self.line = line
        self.column = column


def strip(text: str) -> str:
    """The text with comments blanked out and trailing commas removed; line and column positions are kept."""
    out = list(text)
    n = len(text)
    i = 0
    last_comma: int | None = None  # index of a comma that may turn out to be trailing
    while i < n:
        ch = text[i]
        if ch == '"':
            last_comma = None
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            continue
        if ch == "/" and i + 1 < n and text[i + 1] == "/":
            while i < n and text[i] != "\n":
                out[i] = " "
                i += 1
            continue
        if ch == "/" and i + 1 < n and text[i + 1] == "*":
            end = text.find("*/", i + 2)
            if end < 0:
                line, column = _where(text, i)
                raise JsoncError("unterminated /* comment", line, column)
            for k in range(i, end + 2):
                if out[k] != "\n":
                    out[k] = " "
            i = end + 2
            continue
        if ch == ",":
            last_comma = i
        elif ch in "}]":
            if last_comma is not None:
                out[last_comma] = " "
            last_comma = None
        elif not ch.isspace():
            last_comma = None
        i += 1
    return "".join(out)


def loads(text: str) -> Any:
    if text.startswith("\ufeff"):
        text = text[1:]
    cleaned = strip(text)
    if not cleaned.strip():
        return None
    try:
        return json.loads(cleaned)
    except json.JSONDecodeError as exc:
        raise JsoncError(exc.msg, exc.lineno, exc.colno) from None


def _where(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1

"""Pure text edits shared by the file tools: exact-match replacement and line-range replacement."""

from __future__ import annotations

import re

from .failures import ToolFailure


def replace_exact(text: str, old: str, new: str, *, replace_all: bool, name: str) -> tuple[str, int]:
    """Replace ``old`` by ``new``; exactly one match unless ``replace_all``. Returns (text, count).

    0 matches, or 2+ without ``replace_all``, change nothing and say how many matched.
    """
    if old == "":
        raise ToolFailure(
            "invalid parameters: the text to search for is empty; give the exact text to replace"
        )
    count = text.count(old)
    if count == 0:
        hint = ""
        if _squash(old) and _squash(old) in _squash(text):
            hint = " (it does occur if whitespace and indentation are ignored: copy the exact text from a fresh read)"
        raise ToolFailure(
            f"no match: the search text occurs 0 times in {name!r}{hint}; nothing was changed "
            "(rule: an edit must match its text exactly)",
            kind="conflict",
        )
    if count > 1 and not replace_all:
        raise ToolFailure(
            f"ambiguous: the search text occurs {count} times in {name!r}; nothing was changed "
            "(rule: a single edit must match exactly once). Include more surrounding lines to make it "
            "unique, or pass replaceAll: true.",
            kind="conflict",
        )
    return text.replace(old, new), count


def _squash(text: str) -> str:
    return "".join(text.split())


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str) -> list[str]:
    """Lines with their own break kept (the last one may have none). Only ``\\n``, ``\\r\\n`` and
    ``\\r`` end a line, as in an editor: form feeds, U+2028 and the like are text inside a line."""
    return _LINE.findall(text)


def _line_break(line: str) -> str:
    return "\r\n" if line.endswith("\r\n") else line[-1:] if line.endswith(("\n", "\r")) else ""


def replace_lines(text: str, start: int, end: int, content: str, offset: int, *, name: str) -> str:
    """Replace lines ``start``..``end`` (1-based, inclusive) from column ``offset`` of the first line.

    ``end == start - 1`` inserts before line ``start``. The replaced region's final line break is
    kept when ``content`` has none, so the next line stays on its own line.
    """
    lines = split_lines(text)
    total = len(lines)
    if start < 1 or start > total + 1:
        raise ToolFailure(
            f"invalid parameters: startLine {start} is outside 1..{total + 1} for {name!r} ({total} lines)"
        )
    if end < start - 1 or end > total:
        raise ToolFailure(
            f"invalid parameters: endLine {end} must be between startLine - 1 ({start - 1}) and the last line ({total})"
        )
    first = lines[start - 1] if start <= total else ""
    first_body = first[: len(first) - len(_line_break(first))]
    if offset < 0 or offset > len(first_body):
        raise ToolFailure(
            f"invalid parameters: offset {offset} is outside 0..{len(first_body)} on line {start}"
        )
    head = "".join(lines[: start - 1]) + first[:offset]
    if start > total and head and not _line_break(head):
        head += "\n"
    if end >= start:
        tail = "".join(lines[end:])
        # The replaced lines' own final break stays (\r\n or \r in a file of mixed endings).
        ending = _line_break(lines[end - 1])
        if ending and not _line_break(content):
            content += ending
    else:
        tail = first[offset:] + "".join(lines[start:])
    return head + content + tail

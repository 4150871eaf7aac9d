"""Content search: every file with a line matching a text or a regular expression.

Output is read with ``--null`` separators (``path\\0line:column:text``), which parses four times
faster than ``--json`` here and is a third of its size (measured on a 340-file repository: 4.6 ms vs
18 ms for 5,200 matching lines). Paths may hold any byte but NUL; lines never hold a newline.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..failures import ToolFailure
from .globs import matcher
from .ripgrep import DEFAULT_TIMEOUT, MAX_OUTPUT, rel_name, rg_binary, run
from .scope import SWAPPED, Filters, common_args, swapped

MAX_COLUMNS = 2000
"""Longer lines (minified files) are cut by ripgrep after this many bytes; columns stay exact."""


@dataclass
class Match:
    line: int
    """1-based line number."""
    column: int
    """1-based byte column of the line's first match (ripgrep's); tools turn it into characters."""
    text: bytes
    """The line without its line break (cut after MAX_COLUMNS bytes)."""


@dataclass
class FileMatches:
    path: str
    """Relative to the root, POSIX separators."""
    matches: list[Match] = field(default_factory=list)
    line_count: int = 0
    """How many lines of the file match (``matches`` keeps only the first few)."""


@dataclass
class ContentResult:
    files: list[FileMatches]
    complete: bool = True
    reason: str | None = None


def search_content(
    root: Path,
    pattern: str,
    *,
    regex: bool = False,
    case_sensitive: bool = True,
    filters: Filters = Filters(),
    max_matches_per_file: int = 5,
    timeout: float = DEFAULT_TIMEOUT,
    max_output: int = MAX_OUTPUT,
) -> ContentResult:
    """Every file under ``root`` with a line matching ``pattern``, sorted by path."""
    if pattern == "":
        raise ToolFailure("invalid parameters: the search text is empty; give the text to look for")
    if "\x00" in pattern:
        raise ToolFailure("invalid parameters: the search text contains a NUL byte")
    args = [
        rg_binary(),
        *common_args(filters),
        "--null",
        "--line-number",
        "--column",
        "--no-heading",
        "--with-filename",
        "--color=never",
        f"--max-columns={MAX_COLUMNS}",
        "--max-columns-preview",
        "--case-sensitive" if case_sensitive else "--ignore-case",
    ]
    if not regex:
        args.append("--fixed-strings")
    args += ["--regexp", pattern, "--", "."]
    out, err, code, reason = run(args, root, timeout, max_output)
    if code == 2 and not out:
        message = err.decode("utf-8", "replace").strip()
        if "regex" in message or "error parsing" in message:
            raise ToolFailure(
                "invalid regular expression: " + _short(message, 600) + " (rule: isRegex uses ripgrep's Rust "
                "regex syntax; pass isRegex: false to search for the text as it is)"
            )
        if message:
            raise ToolFailure("search failed: " + _short(message, 600), kind="unavailable")
    files = _parse_matches(out, max_matches_per_file)
    wanted = matcher(filters.include)
    if wanted is not None:
        files = [f for f in files if wanted(f.path)]
    changed = swapped(root, [f.path for f in files], files_too=True)
    if changed:
        files = [f for f in files if f.path not in changed]
        reason = reason or SWAPPED
    files.sort(key=lambda f: f.path)
    return ContentResult(files=files, complete=reason is None, reason=reason)


def _parse_matches(data: bytes, keep: int) -> list[FileMatches]:
    """Parse ``path\\0line:column:text\\n`` records (ripgrep groups a file's lines together)."""
    files: dict[bytes, FileMatches] = {}
    find = data.find
    pos, end = 0, len(data)
    current: FileMatches | None = None
    current_key = b""
    while pos < end:
        nul = find(b"\x00", pos)
        if nul < 0:
            break
        c1 = find(b":", nul + 1)
        c2 = find(b":", c1 + 1) if c1 >= 0 else -1
        if c2 < 0:
            break
        nl = find(b"\n", c2 + 1)
        complete_line = nl >= 0
        if not complete_line:
            nl = end
        key = data[pos:nul]
        try:
            line_no = int(data[nul + 1 : c1])
            column = int(data[c1 + 1 : c2])
        except ValueError:
            pos = nl + 1
            continue
        if key != current_key or current is None:
            current = files.get(key)
            if current is None:
                current = files[key] = FileMatches(path=rel_name(key))
            current_key = key
        current.line_count += 1
        if len(current.matches) < keep:
            text = data[c2 + 1 : nl]
            if text.endswith(b"\r"):
                text = text[:-1]
            current.matches.append(Match(line_no, column, text))
        pos = nl + 1
    return list(files.values())


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"

"""Content search: every file with a line matching a text or a regular expression.

Output is read with ``--null`` separators (``path\\0line:column:offset:text``), which parses four times
faster than ``--json`` here and is a third of its size (measured on a 340-file repository: 4.6 ms vs
18 ms for 5,200 matching lines). Paths may hold any byte but NUL; lines never hold a newline.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..failures import ToolFailure
from .beneath import Folders, decoded_as_ripgrep
from .globs import matcher
from .ripgrep import DEFAULT_TIMEOUT, MAX_OUTPUT, rel_name, rg_binary, run
from .scope import SWAPPED, Filters, common_args

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
    offset: int = 0
    """Byte offset of the line's start in the file as ripgrep searched it (a UTF-16 file transcoded)."""


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
        "--byte-offset",
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
    files.sort(key=lambda f: f.path)
    files, changed = _as_beneath(root, files)
    if changed:
        reason = reason or SWAPPED
    return ContentResult(files=files, complete=reason is None, reason=reason)


def _as_beneath(root: Path, files: list[FileMatches]) -> tuple[list[FileMatches], bool]:
    """The ``files`` (sorted by path) that are regular files beneath ``root`` now, each with only the
    matches whose line reads the same from the file opened there (:mod:`.beneath`: ripgrep may have
    read a file beyond a folder swapped for a link); whether anything was left out. One ``pread`` a
    match, at the offset ripgrep gave."""
    kept: list[FileMatches] = []
    changed = False
    with Folders(root) as folders:
        for found in files:
            fd = folders.open_file(found.path)
            if fd is None:
                changed = True
                continue
            try:
                if found.matches:
                    same = [m for m in found.matches if _reads_the_same(fd, m)]
                    if len(same) < len(found.matches):
                        same = _as_transcoded(fd, found.matches) or same
                    if len(same) < len(found.matches):
                        changed = True
                        if not same:
                            continue
                        found.matches = same
            finally:
                os.close(fd)
            kept.append(found)
    return kept, changed


_LONG_LINE = b" [..."
"""How ripgrep's note begins after the first MAX_COLUMNS bytes of a longer line."""
_BOM = b"\xef\xbb\xbf"
_LINE_ENDS = (b"", b"\r", b"\r\n")
"""What may follow a line read at its offset besides a newline: the end of the file, or a CRLF."""


def _reads_the_same(fd: int, match: Match) -> bool:
    """Whether the file at ``fd`` holds the match's line at its offset (ripgrep drops a UTF-8 BOM
    before it counts offsets)."""
    text = match.text
    cut = text.rfind(_LONG_LINE) if len(text) > MAX_COLUMNS else -1
    if cut > 0:
        text = text[:cut]
    start = 3 if match.offset == 0 and os.pread(fd, 3, 0) == _BOM else match.offset
    data = os.pread(fd, len(text) + 2, start)
    if not data.startswith(text):
        return False
    rest = data[len(text) :]
    return cut > 0 or rest in _LINE_ENDS or rest.startswith(b"\n")


def _as_transcoded(fd: int, matches: list[Match]) -> list[Match] | None:
    """For a file ripgrep transcodes (UTF-16 with a byte order mark), the matches whose line reads the
    same once the file is decoded as ripgrep decodes it; None for other files."""
    encoding = decoded_as_ripgrep(os.pread(fd, 2, 0))
    if encoding is None:
        return None
    chunks = []
    offset = 0
    while chunk := os.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    text = b"".join(chunks).decode(encoding, "replace").encode("utf-8").split(b"\n")
    return [
        m
        for m in matches
        if m.line <= len(text)
        and text[m.line - 1].removesuffix(b"\r").startswith(m.text.partition(_LONG_LINE)[0])
    ]


def _parse_matches(data: bytes, keep: int) -> list[FileMatches]:
    """Parse ``path\\0line:column:offset:text\\n`` records (ripgrep groups a file's lines together)."""
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
        c3 = find(b":", c2 + 1) if c2 >= 0 else -1
        if c3 < 0:
            break
        nl = find(b"\n", c3 + 1)
        complete_line = nl >= 0
        if not complete_line:
            nl = end
        key = data[pos:nul]
        try:
            line_no = int(data[nul + 1 : c1])
            column = int(data[c1 + 1 : c2])
            offset = int(data[c2 + 1 : c3])
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
            text = data[c3 + 1 : nl]
            if text.endswith(b"\r"):
                text = text[:-1]
            current.matches.append(Match(line_no, column, text, offset))
        pos = nl + 1
    return list(files.values())


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"

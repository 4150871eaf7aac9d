"""Search tools (seed 000, "File Search"): find text in files and files by name, through ripgrep.

The seed's result is a JSON array of files; it stays the result. The total count, ``truncated``
and the next page's offset travel beside it (:class:`~..registry.PagedList`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from ..call import current, shaped
from ..engines import search
from ..registry import PagedList, ToolFailure, tool
from ..workspace import Workspace
from .lean import without

MAX_PAGE = 1000
PREVIEW_CHARS = 160
PREVIEW_BEFORE = 60

Globs = Annotated[
    str | list[str] | None,
    Field(description="Globs, gitignore-style ('*.py', 'src/**'); a list or comma-separated."),
]
ExcludeGlobs = Annotated[
    str | list[str] | None,
    Field(description="Globs to leave out, e.g. 'tests/**'."),
]
IncludeIgnored = Annotated[
    bool,
    Field(description="Also ignored files, node_modules and dist."),
]
MaxResults = Annotated[int, Field(ge=1, le=MAX_PAGE)]
Offset = Annotated[int, Field(ge=0, description="The previous answer's nextOffset.")]


class MatchLine(TypedDict):
    line: int
    """1-based line number."""
    column: int
    """1-based character column of the first match on the line."""
    preview: str
    """The line, trimmed, cut to about 160 characters around the match."""


class ContentHit(TypedDict):
    path: str
    absolutePath: NotRequired[str]
    """The REST door only (the seed's field); on MCP `path` says it."""
    matchCount: NotRequired[int]
    """How many lines of this file match; on MCP only when more than `matches` lists."""
    matches: list[MatchLine]
    """The first matching lines (maxMatchesPerFile of them)."""


# On MCP only `path` (the name and folder are in it); the REST door adds the seed's `name`,
# `directory` and `absolutePath`.
class FileHit(TypedDict):
    path: str
    name: NotRequired[str]
    directory: NotRequired[str]
    absolutePath: NotRequired[str]


@tool(
    "search",
    title="Search in files",
    read_only=True,
    example={"searchText": "function helper"},
    errors=("invalid regular expression", "empty search text", "ripgrep missing"),
)
def search_in_files_content(
    searchText: str,
    isRegex: Annotated[bool, Field(description="Rust regex syntax.")] = False,
    caseSensitive: bool = True,
    include: Globs = None,
    exclude: ExcludeGlobs = None,
    includeIgnored: IncludeIgnored = False,
    maxResults: MaxResults = 100,
    offset: Offset = 0,
    maxMatchesPerFile: Annotated[int, Field(ge=0, le=100, description="Matching lines listed per file.")] = 5,
) -> PagedList[ContentHit]:
    """Search file contents with ripgrep (plain text unless `isRegex`); lines and columns 1-based. Honours
    .gitignore; skips .git, node_modules, dist and binary files. Paged."""
    ws = current().workspace
    filters = search.Filters(_globs(include), _globs(exclude), includeIgnored)
    found: list[tuple[str, Path, search.FileMatches]] = []
    complete, reason = True, None
    for root, prefix in _roots(ws):
        result = search.search_content(
            root,
            searchText,
            regex=isRegex,
            case_sensitive=caseSensitive,
            filters=filters,
            max_matches_per_file=maxMatchesPerFile,
        )
        found += [(prefix + f.path, root, f) for f in result.files]
        if not result.complete:
            complete, reason = False, result.reason
            break
    page = found[offset : offset + maxResults]
    hits = [
        ContentHit(
            path=_host(rel),
            absolutePath=_absolute(root, f.path),
            matchCount=f.line_count,
            matches=[_match_line(m) for m in f.matches],
        )
        for rel, root, f in page
    ]
    hits = shaped(hits, _without_absolute)
    return _paged(hits, len(found), offset, complete, reason)


@tool(
    "search",
    title="Find files by name",
    read_only=True,
    example={"nameSubstring": "helper"},
    errors=("ripgrep missing",),
)
def find_files_by_name_substring(
    nameSubstring: Annotated[
        str,
        Field(description="With a '/', matched against the relative path."),
    ],
    caseSensitive: bool = False,
    include: Globs = None,
    exclude: ExcludeGlobs = None,
    includeIgnored: IncludeIgnored = False,
    maxResults: MaxResults = 100,
    offset: Offset = 0,
) -> PagedList[FileHit]:
    """Find files whose name (with a `/`: path) contains a text, case-insensitive, best matches first. Honours
    .gitignore; skips .git, node_modules, dist. Paged."""
    ws = current().workspace
    filters = search.Filters(_globs(include), _globs(exclude), includeIgnored)
    text = nameSubstring.replace("\\", "/")
    on_path = "/" in text
    needle = text if caseSensitive else text.casefold()
    ranked: list[tuple[int, str, str, Path, str]] = []
    complete, reason = True, None
    for root, prefix in _roots(ws):
        result = search.find_files(
            root, text, case_sensitive=caseSensitive, on_path=on_path, prefix=prefix, filters=filters
        )
        for rel in result.paths:  # each contains the text: rank them
            full = prefix + rel
            name = full.rsplit("/", 1)[-1]
            subject = full if on_path else name
            if not caseSensitive:
                subject = subject.casefold()
            if on_path:
                rank = 0 if subject.endswith(needle) else 1
            else:
                stem = os.path.splitext(subject)[0]
                rank = 0 if needle in (subject, stem) else 1 if subject.startswith(needle) else 2
            ranked.append((rank, full, name, root, rel))
        if not result.complete:
            complete, reason = False, result.reason
            break
    ranked.sort(key=lambda r: (r[0], r[1]))
    hits = []
    for _, full, name, root, rel in ranked[offset : offset + maxResults]:
        directory = full.rsplit("/", 1)[0] if "/" in full else "."
        hits.append(
            FileHit(
                path=_host(full), name=name, directory=_host(directory), absolutePath=_absolute(root, rel)
            )
        )
    return _paged(shaped(hits, _paths_only), len(ranked), offset, complete, reason)


def _paged(items: list, total: int, offset: int, complete: bool, reason: str | None) -> PagedList:
    end = offset + len(items)
    more = end < total
    return PagedList(
        items,
        total=total,
        truncated=more or not complete,
        next_offset=end if more else None,
        note=reason if not complete else None,
        offset=offset,
    )


def _roots(ws: Workspace) -> list[tuple[Path, str]]:
    """Each root with the prefix its paths get (secondary roots answer as '<root name>/...')."""
    return [(root, "" if i == 0 else root.name + "/") for i, root in enumerate(ws.roots)]


def _globs(value: str | list[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    items = value.split(",") if isinstance(value, str) else value
    globs = tuple(g.strip() for g in items if g and g.strip())
    for glob in globs:
        if "\x00" in glob:
            raise ToolFailure("invalid glob: it contains a NUL byte")
    return globs


def _without_absolute(hits: list[ContentHit]) -> list[ContentHit]:
    """Less the absolute path, and the match count where it is the number of lines listed."""
    return [without(h, "absolutePath", matchCount=len(h["matches"])) for h in hits]


def _paths_only(hits: list[FileHit]) -> list[FileHit]:
    return [FileHit(path=h["path"]) for h in hits]


def _host(rel: str) -> str:
    return rel.replace("/", os.sep) if os.sep != "/" else rel


def _absolute(root: Path, rel: str) -> str:
    return os.path.join(root, _host(rel))


_LONG_LINE_TAIL = b" [... omitted end of long line]"


def _match_line(m: search.Match) -> MatchLine:
    raw = m.text
    cut = raw.endswith(_LONG_LINE_TAIL)
    if cut:
        raw = raw[: -len(_LONG_LINE_TAIL)]
    before = raw[: m.column - 1]
    column = len(before.decode("utf-8", "replace")) + 1 + max(0, m.column - 1 - len(raw))
    line = raw.decode("utf-8", "replace")
    stripped = line.lstrip()
    at = column - 1 - (len(line) - len(stripped))
    if len(stripped) <= PREVIEW_CHARS and not cut:
        preview = stripped
    else:
        start = max(0, min(at - PREVIEW_BEFORE, len(stripped) - PREVIEW_CHARS))
        preview = ("…" if start > 0 else "") + stripped[start : start + PREVIEW_CHARS]
        if start + PREVIEW_CHARS < len(stripped) or cut:
            preview += "…"
    return MatchLine(line=m.line, column=column, preview=preview.rstrip())

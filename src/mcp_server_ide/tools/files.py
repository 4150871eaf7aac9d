"""File tools (seed 000, "File Read/Write"): read, write, create, list and edit workspace files."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from typing import Annotated, Any, Literal, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from ..call import current, shaped
from ..engines import edits, reads, sandbox, textio
from ..registry import PagedList, ToolFailure, tool
from .lean import short_hash, without
from .params import PathInProject

EntryKind = Literal["file", "directory", "symlink", "other"]
FOLDER_PAGE = 1000
"""Entries a folder listing answers at most by default (a 200,000-file folder was one 15 MB reply)."""
FolderPage = Annotated[int, Field(ge=1, le=10_000)]
FolderOffset = Annotated[int, Field(ge=0, description="The previous answer's nextOffset.")]
ExpectedHash = Annotated[
    str | None,
    Field(description="The `hash` a read returned: refused if the file changed since."),
]


# On MCP no absolute `path` (`relativePath` says it), `encoding` only when not utf-8 and
# `lineEnding` only when not LF; the REST door gives every field.
class FileText(TypedDict):
    content: str
    path: NotRequired[str]
    relativePath: str
    hash: NotRequired[str]
    encoding: NotRequired[str]
    lineEnding: NotRequired[str]
    totalLines: NotRequired[int]
    buffer: NotRequired[str]


# On MCP without the absolute `path` and `operationTimeMs`; the REST door gives the seed's fields.
class WriteResult(TypedDict):
    path: NotRequired[str]
    relativePath: str
    operationTimeMs: NotRequired[int]
    size: NotRequired[int]
    hash: NotRequired[str]
    created: NotRequired[bool]
    buffer: NotRequired[str]


class FolderEntry(TypedDict):
    name: str
    type: Literal["file", "directory", "symlink", "other"]
    path: str
    size: NotRequired[int]


# On MCP without the absolute `path` and `operationTimeMs`; the REST door gives the seed's fields.
class ReplaceResult(TypedDict):
    path: NotRequired[str]
    replacements: int
    operationTimeMs: NotRequired[int]
    relativePath: NotRequired[str]
    hash: NotRequired[str]
    buffer: NotRequired[str]


def _ms(start: float) -> int:
    return int((time.perf_counter() - start) * 1000)


def _lean_write(result: Any) -> Any:
    return short_hash(without(result, "path", "operationTimeMs", created=False))


def _lean_text(result: FileText) -> FileText:
    return short_hash(without(result, "path", encoding="utf-8", lineEnding="LF"))


def _line_ending(tf: textio.TextFile) -> str:
    return {"\r\n": "CRLF", "\r": "CR", "\n": "LF"}.get(tf.newline or "", "mixed")


def _written(
    resolved: sandbox.Resolved,
    data: bytes,
    start: float,
    created: bool | None = None,
    old: textio.TextFile | None = None,
) -> WriteResult:
    result = WriteResult(
        path=str(resolved.path),
        relativePath=resolved.display_rel,
        operationTimeMs=_ms(start),
        size=len(data),
        hash=textio.content_hash(data),
    )
    if created is not None:
        result["created"] = created
    if old is not None and old.unsaved:
        result["buffer"] = textio.EDITED
    return shaped(result, _lean_write)


INLINE_READ_BYTES = 256 * 1024
"""Reads of files up to this size run on the event loop (~0.1 ms here); a larger file is read on a
worker thread (a 15 MB read takes ~35 ms), so other requests are answered meanwhile."""


def small_file(argument: str) -> Callable[[dict[str, Any]], bool]:
    """An ``inline`` verdict for a tool that reads the file its ``argument`` names: inline when that
    file is at most :data:`INLINE_READ_BYTES` (one stat, ~25 µs); a path that is refused or names no
    regular file is answered inline too (the tool refuses it at once, without reading)."""

    def verdict(arguments: dict[str, Any]) -> bool:
        path = arguments.get(argument)
        if not isinstance(path, str):
            return True
        size = sandbox.regular_file_size(current().workspace, path)
        return size is None or size <= INLINE_READ_BYTES

    return verdict


@tool(
    "file",
    title="Read file",
    # JSON text only, no structuredContent: the content would travel twice and clients validate it
    # against the output schema (bench/bench_files.py: 0.90 ms a 64 KB read instead of 2.0 ms).
    structured=False,
    inline=small_file("pathInProject"),
    read_only=True,
    example={"pathInProject": "src/utils/helper.js"},
    errors=("not found", "outside the workspace", "binary file", "over the 16 MB whole-file limit"),
)
def get_file_text_by_path(pathInProject: PathInProject) -> FileText:
    """Read a whole text file. Its `hash` is the `expectedHash` of later edits; for a slice of a large
    file use `project_fs_read`."""
    ws = current().workspace
    resolved = sandbox.resolve(ws, pathInProject)
    tf = textio.read_current(ws, resolved)
    reads.note_read(ws, resolved.rel)
    text = FileText(
        content=tf.text,
        path=str(resolved.path),
        relativePath=resolved.display_rel,
        hash=tf.hash,
        encoding=tf.encoding_label,
        lineEnding=_line_ending(tf),
        totalLines=tf.line_count,
    )
    if tf.unsaved:
        text["buffer"] = textio.UNSAVED
    return shaped(text, _lean_text)


@tool(
    "file",
    title="Rewrite file",
    destructive=True,
    idempotent=True,
    example={"pathInProject": "src/utils/helper.js", "text": "function helper() { return 'Updated'; }\n"},
    errors=(
        "protected path",
        "outside the workspace",
        "stale expectedHash",
        "characters the file's encoding cannot hold",
    ),
)
def rewrite_file_content(
    pathInProject: PathInProject, text: str, expectedHash: ExpectedHash = None
) -> WriteResult:
    """Replace a file's whole content (creating it if missing), keeping its encoding and line endings. For
    part of a file use `replace_specific_text`."""
    start = time.perf_counter()
    ws = current().workspace
    resolved = sandbox.resolve_for_write(ws, pathInProject)
    if expectedHash is None and resolved.path.exists():
        reads.confirm_overwrite(ws, resolved)
    with textio.file_lock(resolved.path):
        if resolved.path.exists():
            old = textio.read_current(ws, resolved)
            textio.check_expected(old.raw, expectedHash, resolved)
            textio.refuse_truncated(text, old.text, resolved)
            data = textio.encode(textio.normalise_input(text, old), old, resolved.display_rel)
            if data != old.raw:
                textio.write_file(ws, resolved, data, before=old.raw, mode=old.mode)
            return _written(resolved, data, start, created=False, old=old)
        textio.check_expected(None, expectedHash, resolved)
        textio.refuse_truncated(text, "", resolved)
        data = textio.encode(text, None)
        textio.write_file(ws, resolved, data, before=None, mode=None, exclusive=True, make_parents=True)
        return _written(resolved, data, start, created=True)


@tool(
    "file",
    title="Create file",
    example={
        "pathInProject": "src/utils/newFile.js",
        "text": "// New file content\nfunction newFunc() { return true; }\n",
    },
    errors=("already exists", "protected path", "outside the workspace"),
)
def create_new_file_with_text(pathInProject: PathInProject, text: str) -> WriteResult:
    """Create a file with this text (and missing folders); refused when it already exists."""
    start = time.perf_counter()
    ws = current().workspace
    resolved = sandbox.resolve_for_write(ws, pathInProject)
    textio.refuse_truncated(text, "", resolved)
    data = textio.encode(text, None)
    with textio.file_lock(resolved.path):
        if os.path.lexists(resolved.path):
            raise ToolFailure(
                f"refused: {resolved.display_rel!r} already exists (rule: create never overwrites; "
                "use rewrite_file_content to replace it)",
                kind="conflict",
            )
        textio.write_file(ws, resolved, data, before=None, mode=None, exclusive=True, make_parents=True)
    return _written(resolved, data, start)


@tool(
    "file",
    title="List folder",
    # JSON text only, no structuredContent: the entries would travel twice and a client parses and
    # validates both (bench/bench_files.py: the listing is under the SDK's own no-op call this way).
    structured=False,
    inline=True,
    read_only=True,
    example={"pathInProject": "src/utils"},
    errors=("not found", "not a folder", "outside the workspace"),
)
def list_files_in_folder(
    pathInProject: PathInProject = "/", maxResults: FolderPage = FOLDER_PAGE, offset: FolderOffset = 0
) -> PagedList[FolderEntry]:
    """List a folder's entries, not recursive (`/` is the workspace root); folders first. Symlinks are
    never followed. Paged."""
    ws = current().workspace
    resolved = sandbox.resolve(ws, pathInProject)
    if not resolved.path.is_dir():
        if not resolved.path.exists():
            raise sandbox.not_found(resolved)
        raise ToolFailure(
            f"{resolved.display_rel!r} is a file, not a folder (read it with get_file_text_by_path)"
        )
    prefix = resolved.rel + "/" if resolved.rel else ""
    try:
        # Reached beneath the root without following links: a folder swapped for a link out since
        # resolve() cannot make this list a folder outside.
        listing_fd = sandbox.open_listing(resolved.root, resolved.rel)
    except OSError:
        raise sandbox.not_found(resolved) from None
    try:
        with os.scandir(listing_fd) as it:
            # Kinds for the order (from the directory entry, no stat); sizes only for the page.
            found: list[tuple[os.DirEntry[str], EntryKind]] = [
                (entry, _entry_kind(entry, resolved.root, resolved.path))
                for entry in it
                if not sandbox.is_temp_name(entry.name)  # in-flight temp files (stale ones are swept)
            ]
        found.sort(key=lambda e: (e[1] != "directory", e[0].name.casefold(), e[0].name))
        entries: list[FolderEntry] = []
        for entry, kind in found[offset : offset + maxResults]:
            item = FolderEntry(name=entry.name, type=kind, path=(prefix + entry.name).replace("/", os.sep))
            if kind == "file":
                with contextlib.suppress(OSError):
                    item["size"] = entry.stat().st_size
            entries.append(item)
    finally:
        os.close(listing_fd)
    end = offset + len(entries)
    if offset == 0 and end == len(found):
        return entries  # type: ignore[return-value]  # the whole folder: the seed's plain array on every door
    return PagedList(
        entries,
        total=len(found),
        truncated=end < len(found),
        next_offset=end if end < len(found) else None,
        offset=offset,
    )


def _entry_kind(entry: os.DirEntry[str], root: os.PathLike[str], folder: os.PathLike[str]) -> EntryKind:
    try:
        if entry.is_symlink():
            real = os.path.realpath(os.path.join(folder, entry.name))
            if not (real == str(root) or real.startswith(str(root) + os.sep)):
                return "symlink"
        if entry.is_dir():
            return "directory"
        if entry.is_file():
            return "file"
    except OSError:
        pass
    return "symlink" if entry.is_symlink() else "other"


@tool(
    "file",
    title="Replace lines",
    destructive=True,
    example={
        "pathInProject": "src/utils/helper.js",
        "startLine": 5,
        "endLine": 5,
        "content": "function helper() { return 'Updated'; }",
        "offset": 0,
    },
    errors=("line range outside the file", "protected path", "stale expectedHash"),
)
def replace_file_content_at_position(
    pathInProject: PathInProject,
    startLine: Annotated[int, Field(description="1-based.")],
    endLine: Annotated[
        int,
        Field(description="1-based, inclusive."),
    ],
    content: str,
    offset: Annotated[
        int,
        Field(description="Keep this many characters of startLine."),
    ] = 0,
    expectedHash: ExpectedHash = None,
) -> str:
    """Replace lines `startLine`..`endLine` (1-based, inclusive) with `content`; `endLine = startLine - 1`
    inserts."""
    ws = current().workspace
    resolved = sandbox.resolve_for_write(ws, pathInProject)

    def transform(tf: textio.TextFile) -> str:
        new = textio.normalise_input(content, tf)
        return edits.replace_lines(tf.text, startLine, endLine, new, offset, name=resolved.display_rel)

    old, _ = textio.edit_text(ws, resolved, transform, expected_hash=expectedHash)
    return f"ok ({textio.EDITED})" if old.unsaved else "ok"


@tool(
    "file",
    title="Append to file",
    example={
        "pathInProject": "src/utils/helper.js",
        "text": "\n// Appended content\nfunction newHelper() {}\n",
    },
    errors=("protected path", "outside the workspace", "stale expectedHash"),
)
def append_file_content(
    pathInProject: PathInProject, text: str, expectedHash: ExpectedHash = None
) -> WriteResult:
    """Append text to a file (created if missing), in the file's own encoding and line endings."""
    start = time.perf_counter()
    ws = current().workspace
    resolved = sandbox.resolve_for_write(ws, pathInProject)
    if not os.path.lexists(resolved.path):
        with textio.file_lock(resolved.path):
            textio.check_expected(None, expectedHash, resolved)
            textio.refuse_truncated(text, "", resolved)
            data = textio.encode(text, None)
            textio.write_file(ws, resolved, data, before=None, mode=None, exclusive=True, make_parents=True)
        return _written(resolved, data, start, created=True)
    old, data = textio.edit_text(
        ws, resolved, lambda tf: tf.text + textio.normalise_input(text, tf), expected_hash=expectedHash
    )
    return _written(resolved, data, start, old=old)


@tool(
    "file",
    title="Replace text",
    destructive=True,
    example={
        "pathInProject": "src/utils/helper.js",
        "searchText": "oldFunction",
        "replaceText": "newFunction",
        "replaceAll": True,
    },
    errors=("0 matches", "several matches without replaceAll", "protected path", "stale expectedHash"),
)
def replace_specific_text(
    pathInProject: PathInProject,
    searchText: Annotated[str, Field(description="Exact text, whitespace included.")],
    replaceText: str,
    replaceAll: bool = False,
    expectedHash: ExpectedHash = None,
) -> ReplaceResult:
    """Replace exact text in a file. Unless `replaceAll` it must occur once; otherwise nothing changes and the
    error gives the match count."""
    start = time.perf_counter()
    ws = current().workspace
    resolved = sandbox.resolve_for_write(ws, pathInProject)
    count = 0

    def transform(tf: textio.TextFile) -> str:
        nonlocal count
        old = textio.normalise_input(searchText, tf)
        new = textio.normalise_input(replaceText, tf)
        text, count = edits.replace_exact(
            tf.text, old, new, replace_all=replaceAll, name=resolved.display_rel
        )
        return text

    old, data = textio.edit_text(ws, resolved, transform, expected_hash=expectedHash)
    done = ReplaceResult(
        path=str(resolved.path),
        replacements=count,
        operationTimeMs=_ms(start),
        relativePath=resolved.display_rel,
        hash=textio.content_hash(data),
    )
    if old.unsaved:
        done["buffer"] = textio.EDITED
    return shaped(done, _lean_write)

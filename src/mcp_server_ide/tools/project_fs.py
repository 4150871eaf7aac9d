"""Sandbox file tools (seed 001, ``project_fs_*``): read, list, write and edit project files.

Paths are relative to the workspace root; ``/workspace/...`` names the root, as in the seed's
hosted service. Every path goes through the sandbox; every write through ``textio`` (atomic,
journaled, keeping encoding, BOM, line endings and mode).
"""

from __future__ import annotations

import os
import re
import stat
from typing import Annotated, Any, Literal, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from ..call import current
from ..engines import reads, sandbox, search, textio
from ..registry import ToolFailure, tool
from .files import small_file

READ_CAP = 200 * 1024
"""Bytes of content one read returns; longer content keeps its head and tail around a marker."""
STREAM_ABOVE = textio.MAX_TEXT_BYTES
"""Files bigger than this are read in a streaming pass (line counts, slices, head and tail)."""
ALWAYS_SKIPPED = frozenset({"node_modules", ".git", "dist"})
LIST_PAGE = 2000
MARKER = "…[{} bytes truncated]…"
_MARKER_RE = re.compile(r"…\[\d+ bytes truncated\]…")

SandboxPath = Annotated[
    str,
    Field(
        description="Path relative to the workspace root, e.g. 'src/app.ts' ('/workspace/src/app.ts' also works)."
    ),
]
ExpectedHash = Annotated[
    str | None,
    Field(
        description="Optional SHA-256 of the file's current bytes (the `hash` project_fs_read returned). "
        "When given and the file has changed since, nothing is written."
    ),
]


class ReadResult(TypedDict):
    path: str
    content: str
    totalLines: int
    returnedLines: int
    bytes: int
    truncated: bool
    startLine: NotRequired[int]
    endLine: NotRequired[int]
    omittedStartLine: NotRequired[int]
    omittedEndLine: NotRequired[int]
    hash: NotRequired[str]
    encoding: NotRequired[str]


class ListEntry(TypedDict):
    path: str
    type: Literal["file", "directory", "symlink", "other"]
    size: int


class ListResult(TypedDict):
    dir: str
    entries: list[ListEntry]
    count: int
    total: NotRequired[int]
    truncated: NotRequired[bool]
    nextOffset: NotRequired[int | None]


class WriteResult(TypedDict):
    path: str
    bytes: int
    created: bool
    hash: NotRequired[str]


class EditResult(TypedDict):
    path: str
    bytes: int
    line: int
    hash: NotRequired[str]


# ----------------------------------------------------------------------------- read


@tool(
    "project_fs",
    title="Read project file",
    inline=small_file("path"),
    read_only=True,
    example={"path": "src/app.ts", "startLine": 1, "endLine": 40},
    errors=("not found", "outside the workspace", "binary file", "startLine past the end"),
)
def project_fs_read(
    path: SandboxPath,
    startLine: Annotated[int | None, Field(ge=1, description="First line to return, 1-based.")] = None,
    endLine: Annotated[
        int | None, Field(ge=1, description="Last line to return, 1-based, inclusive (default: the end).")
    ] = None,
) -> ReadResult:
    """Read a file from the project's sandbox as text. Paths are relative to the workspace root
    (`/workspace/...` also names it); a path that leaves the workspace is refused by the sandbox path rules.
    Returns `{ path, content, totalLines, returnedLines, bytes, truncated }` (`bytes` is the file's size;
    line breaks come back as `\\n`) plus the file's `hash` (pass it as `expectedHash` to edits) — pass
    `startLine` / `endLine` (1-based, inclusive) to read a slice of a file that is too large for one call.
    A read over the 200 KB cap keeps the head and the tail with a `…[N bytes truncated]…` marker between them
    and sets `truncated`; `omittedStartLine`/`omittedEndLine` then name the lines left out, to read them
    as a slice. Never write truncated text back. Call `project_fs_list` to see what is in the tree, and
    `project_fs_edit` to change what you read."""
    ws = current().workspace
    resolved = sandbox.resolve(ws, path)
    if endLine is not None and startLine is not None and endLine < startLine:
        raise ToolFailure(f"invalid parameters: endLine {endLine} is before startLine {startLine}")
    fd = _open_file(resolved)
    try:
        st = os.fstat(fd)
        size = st.st_size
        if size > STREAM_ABOVE:
            result = _read_streaming(fd, resolved, size, startLine, endLine)
            reads.note_read(ws, resolved.rel)
            return result
        raw = _read_all(fd, size)
    finally:
        os.close(fd)
    tf = textio.decode(raw, stat.S_IMODE(st.st_mode), resolved.display_rel)
    reads.note_read(ws, resolved.rel)
    text = tf.text
    total = textio.count_lines(text)
    first, last = _clip(resolved, total, startLine, endLine)
    if startLine is None and endLine is None:
        selected = text
    elif last < first:
        selected = ""
    else:
        parts = text.split("\n", last)
        selected = "\n".join(parts[first - 1 : last]) + ("\n" if len(parts) > last else "")
    data = selected.encode("utf-8")
    result = _shape(resolved, _Bytes(data), len(data), total, first, last, size)
    result["hash"] = tf.hash
    result["encoding"] = tf.encoding_label
    return result


def _open_file(resolved: sandbox.Resolved) -> int:
    try:
        return sandbox.open_regular(resolved)
    except ToolFailure as exc:
        if resolved.path.is_dir():
            raise ToolFailure(
                f"{resolved.display_rel!r} is a folder, not a file (list it with project_fs_list)",
                kind="invalid",
            ) from None
        raise exc from None


def _read_all(fd: int, size: int) -> bytes:
    chunks = []
    while True:
        chunk = os.read(fd, max(size + 1, 1 << 16))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _clip(resolved: sandbox.Resolved, total: int, start: int | None, end: int | None) -> tuple[int, int]:
    """The 1-based inclusive line range to return (an empty file gives 1..0)."""
    first = start or 1
    if first > max(total, 1):
        raise ToolFailure(
            f"invalid parameters: startLine {first} is past the end of {resolved.display_rel!r}, "
            f"which has {total} lines"
        )
    last = total if end is None else min(end, total)
    return first, last


class _Bytes:
    """The selected text as UTF-8 bytes in memory."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def read(self, offset: int, n: int) -> bytes:
        return self.data[max(0, offset) : max(0, offset) + n]

    def text(self, raw: bytes) -> str:
        return raw.decode("utf-8")

    utf8 = True


class _FileSpan:
    """A byte range of an open file (huge files: only what is returned is ever read)."""

    def __init__(self, fd: int, start: int, codec: str) -> None:
        self.fd, self.start, self.codec = fd, start, codec
        self.utf8 = codec == "utf-8"

    def read(self, offset: int, n: int) -> bytes:
        return os.pread(self.fd, n, self.start + max(0, offset))

    def text(self, raw: bytes) -> str:
        return raw.decode(self.codec, "replace").replace("\r\n", "\n")


def _shape(
    resolved: sandbox.Resolved,
    source: _Bytes | _FileSpan,
    span: int,
    total: int,
    first: int,
    last: int,
    size: int,
) -> ReadResult:
    """The read result for the selected ``span`` bytes, cut to the cap around a marker when longer."""
    lines = max(0, last - first + 1)
    result = ReadResult(
        path=resolved.display_rel,
        content="",
        totalLines=total,
        returnedLines=lines,
        bytes=size,
        truncated=False,
        startLine=first,
        endLine=last,
    )
    if span <= READ_CAP:
        result["content"] = source.text(source.read(0, span))
        return result
    head_len, tail_start = plan_cut(source, span, READ_CAP, utf8=source.utf8)
    head = source.text(source.read(0, head_len))
    tail = source.text(source.read(tail_start, span - tail_start))
    at_line_start = source.read(tail_start - 1, 1) == b"\n"
    result["content"] = head + MARKER.format(tail_start - head_len) + ("\n" if at_line_start else "") + tail
    omitted_first = first + head.count("\n")
    tail_lines = tail.count("\n") + (0 if tail.endswith("\n") or not tail else 1)
    omitted_last = max(omitted_first, last - tail_lines + (0 if at_line_start else 1))
    result["truncated"] = True
    result["omittedStartLine"] = omitted_first
    result["omittedEndLine"] = omitted_last
    result["returnedLines"] = lines - (omitted_last - omitted_first + 1)
    return result


def plan_cut(source: _Bytes | _FileSpan, span: int, cap: int, *, utf8: bool) -> tuple[int, int]:
    """Where to cut ``span`` bytes to keep at most ``cap``: (bytes of head kept, offset where the tail starts).

    Each cut falls on a line break when one lies in the outer half of its budget, else on a
    character boundary.
    """
    half = cap // 2
    head = source.read(0, half + 1)
    nl = head.rfind(b"\n", 0, half)
    if nl >= half // 2:
        head_len = nl + 1
    else:
        head_len = half
        while utf8 and head_len > 0 and (head[head_len] & 0xC0) == 0x80:
            head_len -= 1
    tail_start = span - half
    tail = source.read(tail_start, half)
    nl = tail.find(b"\n", 0, half // 2)
    if 0 <= nl < len(tail) - 1:
        tail_start += nl + 1
    else:
        i = 0
        while utf8 and i < len(tail) and (tail[i] & 0xC0) == 0x80:
            i += 1
        tail_start += i
    return head_len, tail_start


def _read_streaming(
    fd: int, resolved: sandbox.Resolved, size: int, start: int | None, end: int | None
) -> ReadResult:
    """A file over 16 MB: one pass counts lines and finds the slice; only the bytes returned are decoded.

    Such files are read as UTF-8 (or Windows-1252 when their start is not UTF-8); the marker's N
    counts the file's own bytes left out.
    """
    probe = os.pread(fd, textio.BINARY_PROBE, 0)
    if any(probe.startswith(bom) for bom, enc in textio._BOMS if enc != "utf-8"):
        raise ToolFailure(
            f"refused: {resolved.display_rel!r} is a {size}-byte UTF-16/32 file, over the {STREAM_ABOVE}-byte "
            "limit for such files (rule: files this big are read as UTF-8 or single-byte text)",
            kind="too_large",
        )
    if b"\x00" in probe:
        raise ToolFailure(
            f"refused: {resolved.display_rel!r} is a binary file ({size} bytes; rule: text tools read text only)",
            kind="refused",
        )
    first = start or 1
    start_off = 0 if first == 1 else None
    end_off = None
    newlines = base = 0
    last_byte = b""
    while True:
        chunk = os.pread(fd, 1 << 22, base)
        if not chunk:
            break
        n = chunk.count(b"\n")
        if start_off is None and newlines + n >= first - 1:
            start_off = base + _nth(chunk, first - 1 - newlines) + 1
        if end is not None and end_off is None and newlines + n >= end:
            end_off = base + _nth(chunk, end - newlines) + 1
        newlines += n
        base += len(chunk)
        last_byte = chunk[-1:]
    total = newlines + (1 if base and last_byte != b"\n" else 0)
    if start_off is None or first > max(total, 1):
        raise ToolFailure(
            f"invalid parameters: startLine {first} is past the end of {resolved.display_rel!r}, "
            f"which has {total} lines"
        )
    end_off = base if end_off is None else end_off
    last = total if end is None else min(end, total)
    codec = "utf-8"
    head = os.pread(fd, 1 << 16, 0)
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not just a character cut by the probe's end
            codec = "cp1252"
    result = _shape(resolved, _FileSpan(fd, start_off, codec), end_off - start_off, total, first, last, base)
    result["encoding"] = codec
    return result


def _nth(chunk: bytes, n: int) -> int:
    """Index of the n-th (1-based) newline in ``chunk``."""
    idx = -1
    for _ in range(n):
        idx = chunk.index(b"\n", idx + 1)
    return idx


# ----------------------------------------------------------------------------- list


def _flat_listing(arguments: dict[str, Any]) -> bool:
    """One folder's entries is bounded local I/O (as ``list_files_in_folder``); a recursive walk is not."""
    return not arguments.get("recursive")


@tool(
    "project_fs",
    title="List project folder",
    read_only=True,
    inline=_flat_listing,
    example={"dir": "src", "recursive": True},
    errors=("not found", "not a folder", "outside the workspace"),
)
def project_fs_list(
    dir: Annotated[
        str | None, Field(description="Folder relative to the workspace root; omit it for the root.")
    ] = None,
    recursive: Annotated[bool, Field(description="Walk the whole tree below the folder.")] = False,
    includeIgnored: Annotated[
        bool,
        Field(
            description="With recursive: also list what .gitignore excludes (never .git, node_modules, dist)."
        ),
    ] = False,
    maxEntries: Annotated[
        int, Field(ge=1, le=20000, description="Entries per answer (1-20000).")
    ] = LIST_PAGE,
    offset: Annotated[
        int, Field(ge=0, description="Skip this many entries: pass the previous nextOffset.")
    ] = 0,
) -> ListResult:
    """List a directory in the project's sandbox. Paths are relative to the workspace root; `node_modules`,
    `.git`, and `dist` are always skipped, because a listing that walks them buries the source tree under
    build output. Returns `{ dir, entries, count }` where each entry is `{ path, type, size }` (`path`
    relative to the root, `type` file, directory, symlink or other, `size` in bytes for files, 0 otherwise),
    sorted by path. Omit `dir` for the workspace root, and pass `recursive: true` to walk the whole source
    tree (a recursive walk also leaves out what .gitignore excludes, unless `includeIgnored`). Symlinks are
    listed as `symlink` and never followed. Long listings are paged: `total`, `truncated` and `nextOffset`
    say what is left. Read a file with `project_fs_read`."""
    ws = current().workspace
    resolved = sandbox.resolve(ws, dir or "")
    if not resolved.path.is_dir():
        if not resolved.path.exists():
            raise ToolFailure(
                f"not found: {resolved.display_rel!r} does not exist in the workspace (list its parent with "
                "project_fs_list)",
                kind="not_found",
            )
        raise ToolFailure(f"{resolved.display_rel!r} is a file, not a folder (read it with project_fs_read)")
    entries, complete = _walk(resolved, recursive)
    if recursive and not includeIgnored:
        entries, filtered_complete = _without_ignored(resolved, entries)
        complete = complete and filtered_complete
    entries.sort(key=lambda e: e[0])
    page = entries[offset : offset + maxEntries]
    end = offset + len(page)
    more = end < len(entries)
    return ListResult(
        dir=resolved.display_rel,
        entries=[ListEntry(path=_host(rel), type=kind, size=size) for rel, kind, size in page],
        count=len(page),
        total=len(entries),
        truncated=more or not complete,
        nextOffset=end if more else None,
    )


_Entry = tuple[str, Literal["file", "directory", "symlink", "other"], int]
MAX_WALK = 500_000


def _walk(resolved: sandbox.Resolved, recursive: bool) -> tuple[list[_Entry], bool]:
    """Entries below the folder (paths relative to the root, POSIX), never following a symlink."""
    entries: list[_Entry] = []
    prefix = resolved.rel + "/" if resolved.rel else ""
    stack = [(resolved.rel, prefix)]
    seen: set[tuple[int, int]] = set()
    while stack:
        folder, base = stack.pop()
        try:
            # Beneath the root without following links: a folder swapped for a link out since
            # resolve() cannot make the walk list a folder outside.
            folder_fd = sandbox.open_listing(resolved.root, folder)
        except OSError:
            continue
        try:
            it = os.scandir(folder_fd)
        except OSError:
            os.close(folder_fd)
            continue
        with it:
            for entry in it:
                name = entry.name
                if sandbox.is_temp_name(name):
                    continue  # our in-flight temp files (a write or start-up sweeps stale ones)
                if name in ALWAYS_SKIPPED:
                    continue
                rel = base + name
                kind: Literal["file", "directory", "symlink", "other"] = "other"
                size = 0
                try:
                    if entry.is_symlink():
                        kind = "symlink"
                    elif entry.is_dir(follow_symlinks=False):
                        kind = "directory"
                        if recursive:
                            st = entry.stat(follow_symlinks=False)
                            key = (st.st_dev, st.st_ino)
                            if key not in seen:  # a bind mount looping back is walked once
                                seen.add(key)
                                stack.append((rel, rel + "/"))
                    elif entry.is_file(follow_symlinks=False):
                        kind = "file"
                        size = entry.stat(follow_symlinks=False).st_size
                except OSError:
                    pass
                entries.append((rel, kind, size))
                if len(entries) >= MAX_WALK:
                    os.close(folder_fd)
                    return entries, False
        os.close(folder_fd)
    return entries, True


def _without_ignored(resolved: sandbox.Resolved, entries: list[_Entry]) -> tuple[list[_Entry], bool]:
    """Drop what .gitignore excludes, by ripgrep's own rules (the same as the search tools').

    ripgrep names the files it keeps; a folder is kept when it holds a kept file, or no file at all
    (an empty folder cannot be told apart), and only inside a kept folder; a symlink or other entry is
    kept when its folder is.
    """
    prefix = resolved.rel + "/" if resolved.rel else ""
    listed = search.list_files(resolved.root, under=resolved.rel)
    kept_files = set(listed.paths)
    has_kept: set[str] = set()
    has_files: set[str] = set()
    for rel, kind, _ in entries:
        if kind != "file":
            continue
        marks = has_kept if rel in kept_files else None
        parent = rel.rpartition("/")[0]
        while parent and len(parent) >= len(prefix.rstrip("/")):
            if parent in has_files and (marks is None or parent in has_kept):
                break
            has_files.add(parent)
            if marks is not None:
                marks.add(parent)
            parent = parent.rpartition("/")[0]
    top = prefix.rstrip("/")
    kept_dirs = {top}
    out: list[_Entry] = []
    for rel, kind, size in sorted(entries, key=lambda e: e[0].count("/")):
        parent = rel.rpartition("/")[0]
        if parent not in kept_dirs:
            continue
        if kind == "file":
            if rel in kept_files:
                out.append((rel, kind, size))
        elif kind == "directory":
            if rel in has_kept or rel not in has_files:
                kept_dirs.add(rel)
                out.append((rel, kind, size))
        else:
            out.append((rel, kind, size))
    return out, listed.complete


def _host(rel: str) -> str:
    return rel.replace("/", os.sep) if os.sep != "/" else rel


# ----------------------------------------------------------------------------- write and edit


def _refuse_truncated(new_text: str, old_text: str, resolved: sandbox.Resolved) -> None:
    """Refuse text carrying a read's truncation marker that the file itself does not hold."""
    for found in _MARKER_RE.finditer(new_text):
        if found.group(0) not in old_text:
            raise ToolFailure(
                f"refused: the new text for {resolved.display_rel!r} contains the marker {found.group(0)!r} "
                "of a truncated read (rule: truncated text is never written back). Read the omitted lines with "
                "project_fs_read startLine/endLine and edit only the region you mean with project_fs_edit.",
                kind="refused",
            )


def _not_a_folder(resolved: sandbox.Resolved) -> None:
    if resolved.path.is_dir():
        raise ToolFailure(f"{resolved.display_rel!r} is a folder, not a file; name a file inside it")


@tool(
    "project_fs",
    title="Write project file",
    destructive=True,
    idempotent=True,
    example={"path": "src/hello.ts", "content": "export const hello = 'world';\n"},
    errors=("protected path", "outside the workspace", "stale expectedHash", "truncation marker in content"),
)
def project_fs_write(
    path: SandboxPath,
    content: Annotated[str, Field(description="The whole new text of the file.")],
    expectedHash: ExpectedHash = None,
) -> WriteResult:
    """Write a file in the project's sandbox, replacing it wholesale (or creating it and its folders).
    Paths are relative to the workspace root. The sandbox path rules refuse a write under `node_modules`,
    `.git`, or a protected path configured with `--protect` (for example `--protect src/brand
    --protect src/onchain`), and the refusal names the rule. Returns `{ path, bytes, created }` plus the new `hash`
    — `created` is `false` when you overwrote a file that already existed, so read before you replace (over
    MCP, replacing a file this session never read, without `expectedHash`, asks the person first). An
    existing file keeps its encoding, BOM, line endings and mode; a new one is UTF-8. Text holding a
    `…[N bytes truncated]…` marker from a read is refused. For a change to one region of a file, use
    `project_fs_edit`, which fails when its match is missing or ambiguous."""
    ws = current().workspace
    resolved = sandbox.resolve_for_write(ws, path)
    _not_a_folder(resolved)
    if expectedHash is None and resolved.path.exists():
        reads.confirm_overwrite(ws, resolved)  # a file never read in this session: ask the person first
    with textio.file_lock(resolved.path):
        if os.path.lexists(resolved.path):
            old = textio.read_text(resolved)
            textio.check_expected(old.raw, expectedHash, resolved)
            _refuse_truncated(content, old.text, resolved)
            data = textio.encode(textio.normalise_input(content, old), old, resolved.display_rel)
            if data != old.raw:
                textio.write_file(ws, resolved, data, before=old.raw, mode=old.mode)
            created = False
        else:
            textio.check_expected(None, expectedHash, resolved)
            _refuse_truncated(content, "", resolved)
            data = content.encode("utf-8")
            textio.write_file(ws, resolved, data, before=None, mode=None, exclusive=True, make_parents=True)
            created = True
    reads.note_read(ws, resolved.rel)  # the assistant knows what it wrote
    return WriteResult(
        path=resolved.display_rel, bytes=len(data), created=created, hash=textio.content_hash(data)
    )


@tool(
    "project_fs",
    title="Edit project file",
    destructive=True,
    example={"path": "src/app.ts", "oldText": "const port = 3000;", "newText": "const port = 8080;"},
    errors=(
        "oldText matches 0 times",
        "oldText matches several times",
        "protected path",
        "stale expectedHash",
    ),
)
def project_fs_edit(
    path: SandboxPath,
    oldText: Annotated[
        str,
        Field(
            description="The exact text to replace, whitespace and line breaks included; it must occur once."
        ),
    ],
    newText: Annotated[str, Field(description="The text to put in its place.")],
    expectedHash: ExpectedHash = None,
) -> EditResult:
    """Edit one region of a file in the project's sandbox: replace `oldText`, which must occur exactly once
    in the file, with `newText`. When `oldText` occurs 0 times or more than once nothing is changed and the
    error says how many times it matched: copy it exactly from a fresh `project_fs_read`, adding
    neighbouring lines until it is unique. Paths are relative to the workspace root; the write rules of
    `project_fs_write` apply (protected paths refused, the file keeps its encoding, BOM, line endings and
    mode). Returns `{ path, bytes, line }` — `line` is the 1-based line where the replaced region starts —
    plus the new `hash`."""
    ws = current().workspace
    resolved = sandbox.resolve_for_write(ws, path)
    _not_a_folder(resolved)
    if oldText == "":
        raise ToolFailure("invalid parameters: oldText is empty; give the exact text to replace")
    where = 0

    def transform(tf: textio.TextFile) -> str:
        nonlocal where
        old = textio.normalise_input(oldText, tf)
        new = textio.normalise_input(newText, tf)
        text = tf.text
        count = _occurrences(text, old)
        if count != 1:
            raise _match_failure(count, old, text, resolved)
        _refuse_truncated(new, text, resolved)
        at = text.index(old)
        where = text.count("\n", 0, at) + 1
        return text[:at] + new + text[at + len(old) :]

    try:
        _, data = textio.edit_text(ws, resolved, transform, expected_hash=expectedHash)
    except ToolFailure as exc:
        if exc.kind == "not_found":
            raise ToolFailure(
                f"not found: {resolved.display_rel!r} does not exist in the workspace (create it with "
                "project_fs_write)",
                kind="not_found",
            ) from None
        raise
    reads.note_read(ws, resolved.rel)
    return EditResult(path=resolved.display_rel, bytes=len(data), line=where, hash=textio.content_hash(data))


def _occurrences(text: str, needle: str) -> int:
    """How many times ``needle`` occurs, overlapping ones included ('aa' is twice in 'aaa')."""
    count, at = 0, text.find(needle)
    while at >= 0:
        count += 1
        at = text.find(needle, at + 1)
    return count


def _match_failure(count: int, old: str, text: str, resolved: sandbox.Resolved) -> ToolFailure:
    if count == 0:
        hint = ""
        squashed = "".join(old.split())
        if squashed and squashed in "".join(text.split()):
            hint = " (it does occur if whitespace and indentation are ignored: copy the exact text from a fresh read)"
        return ToolFailure(
            f"no match: oldText occurs 0 times in {resolved.display_rel!r}{hint}; nothing was changed "
            "(rule: an edit must match its text exactly once)",
            kind="conflict",
        )
    return ToolFailure(
        f"ambiguous: oldText occurs {count} times in {resolved.display_rel!r}; nothing was changed (rule: an "
        "edit must match its text exactly once). Include neighbouring lines in oldText to make it unique.",
        kind="conflict",
    )

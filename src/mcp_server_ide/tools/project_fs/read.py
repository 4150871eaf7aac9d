"""``project_fs_read``: a file of the project's sandbox as text, whole or a slice of lines.

A read over the cap keeps its head and tail around a ``…[N bytes truncated]…`` marker (:data:`MARKER`;
the write tools refuse text carrying one); a file over ``STREAM_ABOVE`` is read in one streaming pass
that decodes only the bytes returned.
"""

from __future__ import annotations

import os
import re
import stat
from typing import Annotated, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from ...call import current, shaped
from ...engines import reads, sandbox, textio
from ...registry import ToolFailure, tool
from ..files import small_file
from ..lean import short_hash, without
from .params import SandboxPath

READ_CAP = 200 * 1024
"""Bytes of content one read returns; longer content keeps its head and tail around a marker."""
STREAM_ABOVE = textio.MAX_TEXT_BYTES
"""Files bigger than this are read in a streaming pass (line counts, slices, head and tail)."""
MARKER = "…[{} bytes truncated]…"
MARKER_RE = re.compile(r"…\[\d+ bytes truncated\]…")


class ReadResult(TypedDict):
    path: NotRequired[str]
    """On MCP only when it differs from the `path` asked for."""
    content: str
    totalLines: int
    returnedLines: NotRequired[int]
    """On MCP only for a truncated read (else it is endLine - startLine + 1)."""
    bytes: int
    truncated: NotRequired[bool]
    """On MCP only when true."""
    startLine: NotRequired[int]
    """The lines returned; on MCP only when not the ones asked for (default: 1 to the last)."""
    endLine: NotRequired[int]
    omittedStartLine: NotRequired[int]
    omittedEndLine: NotRequired[int]
    hash: NotRequired[str]
    encoding: NotRequired[str]
    """On MCP only when not UTF-8."""
    buffer: NotRequired[str]
    """"unsaved": the text of the file's unsaved buffer in VS Code, not the file's."""


def _lean_read(result: ReadResult) -> ReadResult:
    """The MCP read: less what the caller just gave (the path, the line range asked for, absent ones
    being 1 and the last line) and what equals its default."""
    asked = current().arguments
    lean: ReadResult = without(result, encoding="utf-8", truncated=False)
    if result.get("path") == asked.get("path"):
        del lean["path"]
    if not result.get("truncated"):
        lean.pop("returnedLines", None)
    if result.get("startLine") == (asked.get("startLine") or 1):
        lean.pop("startLine", None)
    if result.get("endLine") == (asked.get("endLine") or result["totalLines"]):
        lean.pop("endLine", None)
    return short_hash(lean)


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
    startLine: Annotated[int | None, Field(ge=1, description="1-based.")] = None,
    endLine: Annotated[int | None, Field(ge=1, description="1-based, inclusive.")] = None,
) -> ReadResult:
    """Read a text file (paths relative to the workspace root), with its `hash`. Over 200 KB keeps head and
    tail around a `…[N bytes truncated]…` marker: read the rest by `startLine`/`endLine`, never write it
    back."""
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
            return shaped(result, _lean_read)
        raw = _read_all(fd, size)
    finally:
        os.close(fd)
    tf = textio.with_buffer(ws, resolved, textio.decode(raw, stat.S_IMODE(st.st_mode), resolved.display_rel))
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
    result = _shape(
        resolved, _Bytes(data), len(data), total, first, last, len(tf.raw) if tf.unsaved else size
    )
    result["hash"] = tf.hash
    result["encoding"] = tf.encoding_label
    if tf.unsaved:
        result["buffer"] = textio.UNSAVED
    return shaped(result, _lean_read)


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
    if any(probe.startswith(bom) for bom, enc in textio.BOMS if enc != "utf-8"):
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

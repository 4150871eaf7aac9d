"""``project_fs_write`` and ``project_fs_edit``: replace a file of the project's sandbox wholesale, or one
region of it matched exactly once.

Both follow the write rules (protected paths, atomic and journaled writes that keep encoding, BOM, line
endings and mode), take an optional ``expectedHash``, and refuse text carrying a truncated read's marker.
"""

from __future__ import annotations

import os
from typing import Annotated, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from ...call import current, shaped
from ...engines import reads, sandbox, textio
from ...registry import ToolFailure, tool
from ..lean import short_hash
from .params import ExpectedHash, SandboxPath
from .read import MARKER_RE


class WriteResult(TypedDict):
    path: str
    bytes: int
    created: bool
    hash: NotRequired[str]
    buffer: NotRequired[str]


class EditResult(TypedDict):
    path: str
    bytes: int
    line: int
    hash: NotRequired[str]
    buffer: NotRequired[str]


def _refuse_truncated(new_text: str, old_text: str, resolved: sandbox.Resolved) -> None:
    """Refuse text carrying a read's truncation marker that the file itself does not hold."""
    for found in MARKER_RE.finditer(new_text):
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
    content: str,
    expectedHash: ExpectedHash = None,
) -> WriteResult:
    """Write a whole file, creating it and its folders. Refused under .git, node_modules and `--protect`
    paths; replacing a file never read, without `expectedHash`, asks first. For one region:
    `project_fs_edit`."""
    ws = current().workspace
    resolved = sandbox.resolve_for_write(ws, path)
    _not_a_folder(resolved)
    if expectedHash is None and resolved.path.exists():
        reads.confirm_overwrite(ws, resolved)  # a file never read in this session: ask the person first
    with textio.file_lock(resolved.path):
        if os.path.lexists(resolved.path):
            old = textio.read_current(ws, resolved)
            textio.check_expected(old.raw, expectedHash, resolved)
            _refuse_truncated(content, old.text, resolved)
            data = textio.encode(textio.normalise_input(content, old), old, resolved.display_rel)
            if data != old.raw:
                textio.write_file(ws, resolved, data, before=old.raw, mode=old.mode)
            created = False
            unsaved = old.unsaved
        else:
            textio.check_expected(None, expectedHash, resolved)
            _refuse_truncated(content, "", resolved)
            data = content.encode("utf-8")
            textio.write_file(ws, resolved, data, before=None, mode=None, exclusive=True, make_parents=True)
            created, unsaved = True, False
    reads.note_read(ws, resolved.rel)  # the assistant knows what it wrote
    written = WriteResult(
        path=resolved.display_rel, bytes=len(data), created=created, hash=textio.content_hash(data)
    )
    if unsaved:
        written["buffer"] = textio.EDITED
    return shaped(written, short_hash)


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
        Field(description="Exact text, whitespace included."),
    ],
    newText: str,
    expectedHash: ExpectedHash = None,
) -> EditResult:
    """Replace `oldText`, which must occur exactly once in the file, with `newText`; otherwise nothing changes
    and the error gives the match count."""
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
        old, data = textio.edit_text(ws, resolved, transform, expected_hash=expectedHash)
    except ToolFailure as exc:
        if exc.kind == "not_found":
            raise ToolFailure(
                f"not found: {resolved.display_rel!r} does not exist in the workspace (create it with "
                "project_fs_write)",
                kind="not_found",
            ) from None
        raise
    reads.note_read(ws, resolved.rel)
    done = EditResult(path=resolved.display_rel, bytes=len(data), line=where, hash=textio.content_hash(data))
    if old.unsaved:
        done["buffer"] = textio.EDITED
    return shaped(done, short_hash)


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

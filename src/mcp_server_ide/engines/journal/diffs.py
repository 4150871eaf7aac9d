"""Unified diffs of journaled contents: between two stored states, or a checkpoint's and now."""

from __future__ import annotations

import difflib

from ...workspace import Workspace
from ..failures import ToolFailure
from .blobs import BlobStore
from .paths import read_current
from .records import UNREADABLE, UNREADABLE_FILE, FileState

MAX_DIFF_CHARS = 40_000


def stored_diff(
    store: BlobStore, path: str, before: str, after: str, limit: int = MAX_DIFF_CHARS
) -> tuple[str, bool]:
    """A unified diff between two stored states of ``path``; (text, truncated)."""
    return unified_diff(path, store.get(before), store.get(after), limit)


def state_diff(
    ws: Workspace, store: BlobStore, state: FileState, limit: int = MAX_DIFF_CHARS
) -> tuple[str, bool]:
    """A unified diff from a file's checkpoint bytes to its current bytes; (text, truncated)."""
    if state.current == UNREADABLE:
        return f"(no diff: {state.path} cannot be read now)\n", False
    try:
        old = store.get(state.target)
    except ToolFailure as exc:
        return f"(no diff: {exc})\n", False
    now = read_current(ws, state.path)
    if now is UNREADABLE_FILE:
        return f"(no diff: {state.path} cannot be read now)\n", False
    return unified_diff(state.path, old, now, limit)


def unified_diff(
    path: str, old: bytes | None, new: bytes | None, limit: int = MAX_DIFF_CHARS
) -> tuple[str, bool]:
    """A git-style unified diff of two byte strings (None = no file); binary files get one line."""
    from ..textio import decode

    a = f"a/{path}" if old is not None else "/dev/null"
    b = f"b/{path}" if new is not None else "/dev/null"
    texts: list[str] = []
    for data in (old, new):
        if data is None:
            texts.append("")
            continue
        try:
            texts.append(decode(data, name=path).text)
        except ToolFailure:
            size_a = len(old) if old is not None else 0
            size_b = len(new) if new is not None else 0
            return f"Binary file {path} changed ({size_a} -> {size_b} bytes)\n", False
    if old is not None and new is not None and texts[0] == texts[1]:
        return f"File {path}: only the encoding, byte order mark or line endings changed\n", False
    lines = difflib.unified_diff(
        texts[0].splitlines(keepends=True), texts[1].splitlines(keepends=True), fromfile=a, tofile=b, n=3
    )
    out: list[str] = []
    size = 0
    for line in lines:
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        size += len(line)
        if size > limit:
            out.append(f"…[diff truncated at {limit} characters]…\n")
            return "".join(out), True
        out.append(line)
    return "".join(out), False

"""Edits that span files (renames, extractions, formatting): planned, previewed, applied together.

A plan is the new full text of each file. It is built from an LSP ``WorkspaceEdit`` (``changes``
or ``documentChanges``, with UTF-16 line/character ranges) or from whole new contents (rope).
Every target goes through the sandbox (``resolve_for_write``): a plan touching a file outside the
workspace or under a protected path is refused whole, before anything is written.

``preview`` renders the unified diff of every file and writes nothing. ``apply`` takes every
file's lock, checks each file still has the bytes the plan was made from (else nothing is
written), then writes each one atomically through :mod:`.textio` (journaled and announced, so
language servers get ``didChange``).
"""

from __future__ import annotations

import difflib
import os
import re
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..workspace import Workspace
from . import sandbox, textio
from .failures import ToolFailure


@dataclass
class FilePlan:
    resolved: sandbox.Resolved
    old: textio.TextFile | None
    """None when the plan creates the file."""
    new_text: str

    @property
    def old_text(self) -> str:
        return self.old.text if self.old is not None else ""

    @property
    def changed(self) -> bool:
        return self.old is None or self.new_text != self.old.text


def offset_of(text: str, line: int, character: int, starts: list[int] | None = None) -> int:
    """The index in ``text`` of a 0-based (line, UTF-16 character) position, clamped to the line."""
    starts = starts if starts is not None else line_starts(text)
    if line >= len(starts):
        return len(text)
    if line < 0:
        return 0
    start = starts[line]
    end = starts[line + 1] - 1 if line + 1 < len(starts) else len(text)
    row = text[start:end]
    if row.isascii():
        return start + min(character, len(row))
    units = 0
    for i, ch in enumerate(row):
        if units >= character:
            return start + i
        units += 2 if ord(ch) > 0xFFFF else 1
    return start + len(row)


def position_of(text: str, offset: int, starts: list[int] | None = None) -> tuple[int, int]:
    """The 0-based (line, UTF-16 character) of an index in ``text``."""
    import bisect

    starts = starts if starts is not None else line_starts(text)
    line = bisect.bisect_right(starts, offset) - 1
    prefix = text[starts[line] : offset]
    return line, len(prefix) if prefix.isascii() else len(prefix.encode("utf-16-le")) // 2


def line_starts(text: str) -> list[int]:
    starts = [0]
    find = text.find
    i = find("\n")
    while i != -1:
        starts.append(i + 1)
        i = find("\n", i + 1)
    return starts


def apply_text_edits(text: str, edits: list[tuple[int, int, int, int, str]]) -> str:
    """Apply (startLine, startChar, endLine, endChar, newText) edits, all relative to ``text``."""
    starts = line_starts(text)
    spans = []
    for sl, sc, el, ec, new in edits:
        a = offset_of(text, sl, sc, starts)
        b = offset_of(text, el, ec, starts)
        spans.append((a, b, new))
    spans.sort(key=lambda s: (s[0], s[1]))
    out = []
    last = 0
    for a, b, new in spans:
        if a < last:
            raise ToolFailure(
                "the language server sent overlapping edits; nothing was changed", kind="conflict"
            )
        out.append(text[last:a])
        out.append(new.replace("\r\n", "\n"))
        last = b
    out.append(text[last:])
    return "".join(out)


def _resolve_target(ws: Workspace, path: Path, outside: list[str]) -> sandbox.Resolved | None:
    try:
        return sandbox.resolve_for_write(ws, str(path))
    except ToolFailure as exc:
        if "outside" in str(exc):
            outside.append(path.name)
            return None
        raise


def plan_workspace_edit(ws: Workspace, edit: Any) -> list[FilePlan]:
    """Plans from an lsprotocol ``WorkspaceEdit``."""
    from lsprotocol import types as lsp

    from .lsp import path_of

    per_uri: dict[str, list[tuple[int, int, int, int, str]]] = {}
    creates: list[str] = []
    if edit.document_changes:
        for change in edit.document_changes:
            if isinstance(change, lsp.TextDocumentEdit):
                bucket = per_uri.setdefault(change.text_document.uri, [])
                for e in change.edits:
                    r = e.range
                    text = snippet_text(e.snippet.value) if isinstance(e, lsp.SnippetTextEdit) else e.new_text
                    bucket.append((r.start.line, r.start.character, r.end.line, r.end.character, text))
            elif isinstance(change, lsp.CreateFile):
                creates.append(change.uri)
            else:
                raise ToolFailure(
                    "refused: the refactoring would rename or delete files (rule: this tool only edits file "
                    "contents); do it with the file tools",
                    kind="refused",
                )
    elif edit.changes:
        for uri, edits in edit.changes.items():
            bucket = per_uri.setdefault(uri, [])
            for e in edits:
                r = e.range
                bucket.append((r.start.line, r.start.character, r.end.line, r.end.character, e.new_text))
    outside: list[str] = []
    plans: list[FilePlan] = []
    for uri in creates:
        path = path_of(uri)
        if path is None:
            continue
        resolved = _resolve_target(ws, path, outside)
        if resolved is not None and not resolved.path.exists():
            plans.append(FilePlan(resolved, None, ""))
    by_path = {p.resolved.path: p for p in plans}
    for uri, edits in per_uri.items():
        path = path_of(uri)
        if path is None:
            raise ToolFailure(
                f"the language server sent an edit for a non-file document ({uri[:60]})", "unavailable"
            )
        resolved = _resolve_target(ws, path, outside)
        if resolved is None:
            continue
        plan = by_path.get(resolved.path)
        if plan is None:
            old = textio.read_text(resolved)
            plan = FilePlan(resolved, old, old.text)
            plans.append(plan)
            by_path[resolved.path] = plan
        plan.new_text = apply_text_edits(plan.new_text, edits)
    if outside:
        names = ", ".join(sorted(set(outside))[:5])
        raise ToolFailure(
            f"refused: the refactoring would also change {len(outside)} file(s) outside the workspace ({names}) "
            "(rule: tools only write inside the workspace root); nothing was changed",
            kind="refused",
        )
    return [p for p in plans if p.changed]


def plan_contents(ws: Workspace, contents: dict[Path, str]) -> list[FilePlan]:
    """Plans from whole new texts per absolute path (rope's results)."""
    plans = []
    outside: list[str] = []
    for path, new_text in contents.items():
        resolved = _resolve_target(ws, path, outside)
        if resolved is None:
            continue
        old = textio.read_text(resolved) if resolved.path.exists() else None
        plans.append(FilePlan(resolved, old, textio.normalise_input(new_text, old)))
    if outside:
        raise ToolFailure(
            f"refused: the refactoring would also change {len(outside)} file(s) outside the workspace; nothing was changed",
            kind="refused",
        )
    return [p for p in plans if p.changed]


def preview(plans: list[FilePlan]) -> str:
    """The unified diff of every planned file (paths relative to the root, git style)."""
    chunks = []
    for plan in sorted(plans, key=lambda p: p.resolved.rel):
        rel = plan.resolved.rel
        old_lines = plan.old_text.splitlines(keepends=True)
        new_lines = plan.new_text.splitlines(keepends=True)
        for lines in (old_lines, new_lines):
            if lines and not lines[-1].endswith("\n"):
                lines[-1] += "\n\\ No newline at end of file\n"
        diff = difflib.unified_diff(
            old_lines,
            new_lines,
            fromfile="/dev/null" if plan.old is None else f"a/{rel}",
            tofile=f"b/{rel}",
        )
        chunks.append("".join(diff))
    return "".join(chunks)


def apply(ws: Workspace, plans: list[FilePlan]) -> list[str]:
    """Write every plan, or none if any file changed since it was planned. Returns the relative paths."""
    ordered = sorted(plans, key=lambda p: str(p.resolved.path))
    with ExitStack() as stack:
        for plan in ordered:
            stack.enter_context(textio.file_lock(plan.resolved.path))
        encoded: list[tuple[FilePlan, bytes]] = []
        for plan in ordered:
            if plan.old is None:
                if os.path.lexists(plan.resolved.path):
                    raise ToolFailure(
                        f"conflict: {plan.resolved.display_rel!r} appeared while the refactoring was planned; "
                        "nothing was changed, run it again",
                        kind="conflict",
                    )
                encoded.append((plan, textio.encode(plan.new_text, None)))
                continue
            now, _ = textio.read_bytes(plan.resolved)
            if now != plan.old.raw:
                raise ToolFailure(
                    f"conflict: {plan.resolved.display_rel!r} changed while the refactoring was planned; "
                    "nothing was changed, run it again",
                    kind="conflict",
                )
            encoded.append((plan, textio.encode(plan.new_text, plan.old, plan.resolved.display_rel)))
        for plan, data in encoded:
            if plan.old is None:
                textio.write_file(
                    ws, plan.resolved, data, before=None, mode=None, exclusive=True, make_parents=True
                )
            elif data != plan.old.raw:
                textio.write_file(ws, plan.resolved, data, before=plan.old.raw, mode=plan.old.mode)
    return [p.resolved.display_rel for p in ordered]


_PLACEHOLDER = re.compile(r"\$\{\d+:((?:[^}\\]|\\.)*)\}|\$\{\d+\}|\$\d+|\\([$}\\])")


def snippet_text(snippet: str) -> str:
    """The text a snippet edit inserts with each placeholder at its default (``${1:name}`` -> ``name``,
    ``$0`` -> nothing, ``\\$`` -> ``$``): there is no person here to fill the tab stops in."""

    def default(m: re.Match[str]) -> str:
        if m.group(1) is not None:
            return re.sub(r"\\(.)", r"\1", m.group(1))
        return m.group(2) or ""

    return _PLACEHOLDER.sub(default, snippet)

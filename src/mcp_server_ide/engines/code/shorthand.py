"""Following a JS/TS symbol through shorthand properties (``module.exports = { helper }``).

tsserver answers references and rename of ``function helper`` with its own uses, the shorthand
``{ helper }`` among them, but not the uses of the *property* that shorthand creates: the
``const { helper } = require('./helper')`` and ``helper()`` of every importer. Asked at the shorthand
itself it does not either (it scopes the property to the file); asked at an importer's use it
answers both files. With prefix/suffix text off (our setting), its rename of the function also
renames the shorthand, so the exported name changes: left alone, every importer would break.

:func:`shorthands` finds the object-literal shorthands among an answer's locations;
:func:`linked_uses` finds, among the whole-word uses of the name in other JS/TS files, those whose
own references include the shorthand (tsserver's word, not a guess), one per file, for the caller to
ask there and merge (:func:`merge_edits`), a few hops at most (:func:`importer_uses` walks them).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from .. import treesitter
from ..lsp import path_of

MAX_HOPS = 4
"""Re-exports followed (``{ helper }`` exported again by an importer) before stopping."""

MAX_CHECKS = 200
"""References requests spent looking for an exported shorthand's importers."""
SUFFIXES = ("*.js", "*.mjs", "*.cjs", "*.jsx", "*.ts", "*.mts", "*.cts", "*.tsx")

SHORTHAND = "shorthand_property_identifier"
"""tree-sitter-javascript/typescript's node for ``helper`` in an object literal ``{ helper }``
(a destructuring ``{ helper } = ...`` is ``shorthand_property_identifier_pattern``, not followed:
tsserver already answers for both its sides)."""


def shorthands(
    spots: Iterable[tuple[str, lsp.Range]], read: Callable[[Path], str | None]
) -> list[tuple[str, lsp.Position]]:
    """The (uri, start) of every spot that is an object-literal shorthand in a JS/TS file."""
    found: list[tuple[str, lsp.Position]] = []
    trees: dict[str, tuple[bytes, object] | None] = {}
    for uri, rng in spots:
        path = path_of(uri)
        if path is None:
            continue
        lang = treesitter.language_for(path)
        if lang not in ("javascript", "typescript", "tsx"):
            continue
        if uri not in trees:
            text = read(path)
            trees[uri] = None if text is None else _parse(text, lang)
        parsed = trees[uri]
        if parsed is None:
            continue
        src, tree = parsed
        point = _point(src, rng.start)
        if point is None:
            continue
        node = tree.root_node.descendant_for_point_range(point, point)  # type: ignore[attr-defined]
        if node is not None and node.type == SHORTHAND:
            found.append((uri, rng.start))
    return found


def linked_uses(
    root: Path,
    uri: str,
    pos: lsp.Position,
    name: str,
    read: Callable[[Path], str | None],
    references: Callable[[str, lsp.Position], list[Any]],
) -> tuple[list[tuple[str, lsp.Position]], str | None]:
    """One use per other JS/TS file of ``name`` whose references (``references(uri, position)``)
    include the shorthand at (``uri``, ``pos``), and why that list may miss some (None when it cannot)."""
    from .. import search

    found = search.search_content(
        root,
        rf"\b{re.escape(name)}\b",
        regex=True,
        filters=search.Filters(include=SUFFIXES),
        max_matches_per_file=1,
    )
    word = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")
    out: list[tuple[str, lsp.Position]] = []
    checks = 0
    for fm in found.files:
        path = root / fm.path
        other = path.as_uri()
        if other == uri:
            continue
        text = read(path)
        if text is None:
            continue
        for row, line in enumerate(text.split("\n")):
            hits = [m.start() for m in word.finditer(line)]
            for col in hits:
                if checks >= MAX_CHECKS:
                    return out, too_many(name)
                checks += 1
                at = lsp.Position(line=row, character=len(line[:col].encode("utf-16-le")) // 2)
                refs = references(other, at)
                if any(r.uri == uri and r.range.start == pos for r in refs):
                    out.append((other, at))
                    break
            else:
                continue
            break
    return out, None if found.complete else too_many(name)


def importer_uses(
    root: Path,
    spots: Callable[[], Iterable[tuple[str, lsp.Range]]],
    read: Callable[[Path], str | None],
    references: Callable[[str, lsp.Position], list[Any]],
) -> Iterator[tuple[str, list[tuple[str, lsp.Position]], str | None]]:
    """For each shorthand among ``spots()`` not yet followed: its name, its :func:`linked_uses` and
    why they may miss some; up to :data:`MAX_HOPS` hops, ``spots()`` asked again at each (the
    caller grows what it answers with what it found at the importers)."""
    asked: set[tuple[str, int, int]] = set()
    for _hop in range(MAX_HOPS):
        found = [
            (uri, pos)
            for uri, pos in shorthands(spots(), read)
            if (uri, pos.line, pos.character) not in asked
        ]
        if not found:
            return
        for uri, pos in found:
            asked.add((uri, pos.line, pos.character))
            name = name_at(read, uri, pos)
            uses, why = linked_uses(root, uri, pos, name, read, references)
            yield name, uses, why


def too_many(name: str) -> str:
    return (
        f"{name!r} is exported as a shorthand property ({{ {name} }}) and used in more places than the "
        f"{MAX_CHECKS} checked for importers, so some importers may be missing"
    )


def name_at(read: Callable[[Path], str | None], uri: str, rng: lsp.Range | lsp.Position) -> str:
    """The identifier starting at a position (ASCII-safe enough for the search that follows)."""
    path = path_of(uri)
    text = read(path) if path is not None else None
    start = rng.start if isinstance(rng, lsp.Range) else rng
    if text is None:
        return ""
    lines = text.split("\n")
    if start.line >= len(lines):
        return ""
    m = re.match(r"[\w$]+", lines[start.line][start.character :])
    return m.group(0) if m else ""


def _parse(text: str, lang: str) -> tuple[bytes, object]:
    src = text.encode("utf-8")
    return src, treesitter.parser_for(lang).parse(src)


def _point(src: bytes, pos: lsp.Position) -> tuple[int, int] | None:
    """The tree-sitter (row, byte column) of an LSP (line, UTF-16 character) position."""
    lines = src.split(b"\n")
    if pos.line >= len(lines):
        return None
    line = lines[pos.line].decode("utf-8", "replace")
    units = 0
    for i, ch in enumerate(line):
        if units >= pos.character:
            return pos.line, len(line[:i].encode("utf-8"))
        units += 2 if ord(ch) > 0xFFFF else 1
    return pos.line, len(line.encode("utf-8"))


def edit_spots(edit: lsp.WorkspaceEdit) -> list[tuple[str, lsp.Range]]:
    """(uri, range) of every text edit of a workspace edit."""
    spots: list[tuple[str, lsp.Range]] = []
    for uri, edits in (edit.changes or {}).items():
        spots += [(uri, e.range) for e in edits]
    for change in edit.document_changes or []:
        if isinstance(change, lsp.TextDocumentEdit):
            spots += [(change.text_document.uri, e.range) for e in change.edits]
    return spots


def merge_edits(first: lsp.WorkspaceEdit, more: lsp.WorkspaceEdit) -> lsp.WorkspaceEdit | None:
    """One edit with the text edits of both (identical ones once); None when they cannot be merged
    (file operations, or two different edits of the same range)."""
    out: dict[str, dict[tuple[int, int, int, int], str]] = {}
    for edit in (first, more):
        if edit.document_changes and any(
            not isinstance(c, lsp.TextDocumentEdit) for c in edit.document_changes
        ):
            return None
        pairs: list[tuple[str, lsp.TextEdit]] = [(u, e) for u, es in (edit.changes or {}).items() for e in es]
        for change in edit.document_changes or []:
            assert isinstance(change, lsp.TextDocumentEdit)
            pairs += [(change.text_document.uri, e) for e in change.edits if isinstance(e, lsp.TextEdit)]
        for uri, e in pairs:
            r = e.range
            key = (r.start.line, r.start.character, r.end.line, r.end.character)
            known = out.setdefault(uri, {})
            if known.get(key, e.new_text) != e.new_text:
                return None
            known[key] = e.new_text
    return lsp.WorkspaceEdit(
        changes={
            uri: [
                lsp.TextEdit(
                    range=lsp.Range(
                        start=lsp.Position(line=a, character=b), end=lsp.Position(line=c, character=d)
                    ),
                    new_text=text,
                )
                for (a, b, c, d), text in sorted(edits.items())
            ]
            for uri, edits in out.items()
        }
    )

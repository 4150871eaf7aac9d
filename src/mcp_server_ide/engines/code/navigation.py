"""References and definitions of the symbol at a position, through the file's language server.

References come first with the declaration, deduplicated, and count (not list) hits outside the
workspace; with no server for the language they fall back to whole-word text matches, marked
partial. A definition outside the workspace gives only the file name.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
from typing import Any

from lsprotocol import types as lsp

from ...workspace import Workspace
from .. import sandbox, textio
from ..failures import ToolFailure
from ..lsp import LanguageServer, Unavailable, path_of, uri_of
from . import shorthand
from .query import (
    display,
    doc_text,
    locations,
    need_file,
    partial,
    prepare,
    read_for,
    references_at,
    server_for,
    snap,
    unavailable,
)


def references(ws: Workspace, resolved: sandbox.Resolved, line: int, character: int) -> dict[str, Any]:
    """``{references, symbol, outsideWorkspace?, partial?, reason?}`` for the symbol at (line, character)."""
    need_file(resolved)
    server = server_for(ws, resolved)
    if server is None:
        return _text_references(ws, resolved, line, character)
    reason = prepare(ws, resolved, server)
    text = doc_text(server, resolved)
    row, start, _end = snap(text, resolved.path, line, character)
    position = lsp.Position(line=row, character=start)
    doc = lsp.TextDocumentIdentifier(uri=uri_of(resolved.path))
    try:
        refs: list[lsp.Location] | None = server.request(
            "textDocument/references",
            lsp.ReferenceParams(
                text_document=doc, position=position, context=lsp.ReferenceContext(include_declaration=True)
            ),
            timeout=120,
        )
        defs = locations(
            server.request(
                "textDocument/definition",
                lsp.DefinitionParams(text_document=doc, position=position),
                timeout=60,
            )
        )
        found, missing = _through_shorthands(ws, server, list(refs or []))
    except Unavailable as exc:
        raise unavailable(exc) from None
    if reason is None and server.loading():
        reason = server.wait_ready(0) or None
    reason = reason or missing
    declared = {(u, r.start.line, r.start.character) for u, r in defs}
    out: list[dict[str, Any]] = []
    external = 0
    seen: set[tuple[str, int, int]] = set()
    for loc in found:
        path = path_of(loc.uri)
        shown = display(ws, path) if path is not None else None
        if shown is None:
            external += 1
            continue
        key = (shown, loc.range.start.line, loc.range.start.character)
        if key in seen:
            continue
        seen.add(key)
        item: dict[str, Any] = {
            "path": shown,
            "line": loc.range.start.line,
            "character": loc.range.start.character,
            "endLine": loc.range.end.line,
            "endCharacter": loc.range.end.character,
        }
        if (loc.uri, loc.range.start.line, loc.range.start.character) in declared:
            item["isDeclaration"] = True
        out.append(item)
    out.sort(key=lambda r: (not r.get("isDeclaration", False), r["path"], r["line"], r["character"]))
    result: dict[str, Any] = {"references": out, "symbol": text.split("\n")[row][start:_end]}
    if external:
        result["outsideWorkspace"] = external
    return partial(result, reason)


def grouped_references(result: dict[str, Any]) -> dict[str, Any]:
    """``references`` grouped by file, the compact shape: ``[{path, locations: [{line, character,
    isDeclaration?, endLine?, endCharacter?}]}]`` in the same order. The end is left out where it is the
    symbol's name on the same line (``character`` + the name's length), as it nearly always is."""
    width = len(str(result.get("symbol", "")).encode("utf-16-le")) // 2
    groups: dict[str, list[dict[str, Any]]] = {}
    for ref in result["references"]:
        at: dict[str, Any] = {"line": ref["line"], "character": ref["character"]}
        if ref.get("isDeclaration"):
            at["isDeclaration"] = True
        if ref["endLine"] != ref["line"] or ref["endCharacter"] != ref["character"] + width:
            at["endLine"], at["endCharacter"] = ref["endLine"], ref["endCharacter"]
        groups.setdefault(ref["path"], []).append(at)
    out = dict(result)
    out["references"] = [{"path": path, "locations": found} for path, found in groups.items()]
    return out


def lean_definition(result: dict[str, Any]) -> dict[str, Any]:
    """The compact definition: each end left out where it is the symbol's name on the same line
    (``character`` + the name's length), as in :func:`grouped_references`."""
    width = len(str(result.get("symbol", "")).encode("utf-16-le")) // 2
    out = dict(result)
    out["definitions"] = [
        {k: v for k, v in d.items() if k not in ("endLine", "endCharacter")}
        if d["endLine"] == d["line"] and d["endCharacter"] == d["character"] + width
        else d
        for d in result["definitions"]
    ]
    return out


def _through_shorthands(
    ws: Workspace, server: LanguageServer, refs: list[lsp.Location]
) -> tuple[list[lsp.Location], str | None]:
    """``refs`` plus the references of the importers of every object-literal shorthand among them
    (``module.exports = { helper }``; see :mod:`.shorthand`), and why importers may be missing."""

    def spots() -> list[tuple[str, lsp.Range]]:  # what ``refs`` holds by then
        return [(r.uri, r.range) for r in refs]

    missing: str | None = None
    for _name, uses, why in shorthand.importer_uses(
        ws.root,
        spots,
        functools.partial(read_for, ws, server),
        functools.partial(references_at, server),
    ):
        missing = missing or why
        for other, at in uses:
            refs = refs + references_at(server, other, at)
    return refs, missing


def _text_references(ws: Workspace, resolved: sandbox.Resolved, line: int, character: int) -> dict[str, Any]:
    """No language server for this language: whole-word matches of the identifier, marked partial."""
    from .. import search

    text = textio.read_text(resolved).text
    row, start, end = snap(text, resolved.path, line, character)
    name = text.split("\n")[row][start:end]
    suffix = resolved.path.suffix
    refs: list[dict[str, Any]] = []
    pattern = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")
    found = search.search_content(
        ws.root,
        rf"\b{re.escape(name)}\b",
        regex=True,
        filters=search.Filters(include=(f"*{suffix}",) if suffix else ()),
        max_matches_per_file=1,
    )
    hits: list[tuple[str, int, int]] = []
    for fm in found.files:
        try:
            other = textio.read_text(sandbox.resolve(ws, fm.path)).text
        except ToolFailure:
            continue
        for i, row_text in enumerate(other.split("\n")):
            for m in pattern.finditer(row_text):
                hits.append(
                    (fm.path.replace("/", os.sep), i, len(row_text[: m.start()].encode("utf-16-le")) // 2)
                )
        if len(hits) > 5000:
            break
    for path, ln, col in hits:
        refs.append(
            {"path": path, "line": ln, "character": col, "endLine": ln, "endCharacter": col + len(name)}
        )
    reason = (
        f"no language server handles {suffix or 'this file'} files here, so these are whole-word text matches "
        "of the name (configure one in lsp.json for exact references)"
    )
    return partial({"references": refs, "symbol": name}, reason)


def definition(ws: Workspace, resolved: sandbox.Resolved, line: int, character: int) -> dict[str, Any]:
    """``{symbol, definitions, partial?, reason?}`` for the symbol at (line, character)."""
    need_file(resolved)
    server = server_for(ws, resolved)
    if server is None:
        raise ToolFailure(
            f"unavailable: no language server handles {resolved.path.suffix or 'this'} files here "
            "(Python and TypeScript/JavaScript are built in; configure others in lsp.json)",
            kind="unavailable",
        )
    reason = prepare(ws, resolved, server)
    text = doc_text(server, resolved)
    row, start, end = snap(text, resolved.path, line, character)
    doc = lsp.TextDocumentIdentifier(uri=uri_of(resolved.path))
    try:
        result = server.request(
            "textDocument/definition",
            lsp.DefinitionParams(text_document=doc, position=lsp.Position(line=row, character=start)),
            timeout=60,
        )
    except Unavailable as exc:
        raise unavailable(exc) from None
    out: list[dict[str, Any]] = []
    for uri, rng in locations(result):
        path = path_of(uri)
        shown = display(ws, path) if path is not None else None
        item: dict[str, Any] = {
            "line": rng.start.line,
            "character": rng.start.character,
            "endLine": rng.end.line,
            "endCharacter": rng.end.character,
        }
        if shown is None:
            item["path"] = path.name if path is not None else uri.rsplit("/", 1)[-1]
            item["outsideWorkspace"] = True
        else:
            item["path"] = shown
            with contextlib.suppress(Exception):
                item["lineText"] = textio.read_text(sandbox.resolve(ws, str(path))).text.split("\n")[
                    rng.start.line
                ][:300]
        out.append(item)
    return partial({"symbol": text.split("\n")[row][start:end], "definitions": out}, reason)

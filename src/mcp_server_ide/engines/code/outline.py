"""A file's symbols: the tree-sitter outline, refined by the language server when one is already idle.

The outline never starts or waits for a server: it stays a fast tree-sitter answer, and a running,
idle server's ``textDocument/documentSymbol`` only adds kinds and details (``enrichedBy``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lsprotocol import types as lsp

from ...workspace import Workspace
from .. import sandbox, textio, treesitter
from ..failures import ToolFailure
from ..lsp import LanguageServers, uri_of
from .query import need_file


def symbols(ws: Workspace, resolved: sandbox.Resolved, *, ranges: bool = True) -> dict[str, Any]:
    """``{symbols, enrichedBy?}``: the nested outline of a file in any language tree-sitter knows.

    ``ranges``: each symbol in the seed's shape, with its LSP ranges (:meth:`Symbol.to_seed`);
    otherwise the compact outline of :func:`compact`."""
    need_file(resolved)
    lang = treesitter.language_for(resolved.path)
    if lang is None:
        raise ToolFailure(
            f"no outline for {resolved.display_rel!r}: no tree-sitter grammar matches its name "
            f"(supported: {len(treesitter.supported_languages())} languages by file extension)",
            kind="invalid",
        )
    raw, _ = textio.read_bytes(resolved)
    tf = textio.decode(raw, name=resolved.display_rel)
    outline = treesitter.outline(tf.text, lang)
    result: dict[str, Any] = {"symbols": [s.to_seed() for s in outline]}
    enriched_by = _enrich(ws, resolved, result["symbols"])
    if enriched_by:
        result["enrichedBy"] = enriched_by
    if not ranges:
        result["symbols"] = [compact(s) for s in result["symbols"]]
    return result


def compact(symbol: dict[str, Any]) -> dict[str, Any]:
    """A seed-shaped symbol as the compact outline gives it: ``{name, kind, line, character, endLine?,
    startLine?, detail?, children?}``, all 0-based. ``line``/``character`` are where the name is (what
    ``find_references`` and ``refactor_code_at_location`` take); ``endLine`` is the symbol's last line,
    left out when that is ``line``; ``startLine`` only when the symbol starts on an earlier line than its
    name (decorators, attributes); ``detail`` only when there is one."""
    name_at, span = symbol["selectionRange"], symbol["range"]
    out: dict[str, Any] = {
        "name": symbol["name"],
        "kind": symbol["kind"],
        "line": name_at["startLine"],
        "character": name_at["startCharacter"],
    }
    if span["endLine"] != name_at["startLine"]:
        out["endLine"] = span["endLine"]
    if span["startLine"] != name_at["startLine"]:
        out["startLine"] = span["startLine"]
    if symbol["detail"]:
        out["detail"] = symbol["detail"]
    if symbol.get("children"):
        out["children"] = [compact(c) for c in symbol["children"]]
    return out


def _kind_name(kind: lsp.SymbolKind) -> str:
    return treesitter.SYMBOL_KINDS[int(kind) - 1] if 0 < int(kind) <= 26 else ""


def _enrich(ws: Workspace, resolved: sandbox.Resolved, symbols: list[dict[str, Any]]) -> str | None:
    """Kinds and details from the file's language server, only when one is already running and idle.

    Never starts a server and never waits for one: the outline stays a fast tree-sitter answer.
    """
    manager = next((s for s in ws.services() if isinstance(s, LanguageServers)), None)
    server = manager.running_for(resolved.path) if manager is not None else None
    if server is None or server.loading() or not server.supports("document_symbol_provider"):
        return None
    try:
        server.sync_document(resolved.path)
        found: Sequence[lsp.DocumentSymbol | lsp.SymbolInformation] | None = server.request(
            "textDocument/documentSymbol",
            lsp.DocumentSymbolParams(text_document=lsp.TextDocumentIdentifier(uri=uri_of(resolved.path))),
            timeout=2,
        )
    except Exception:
        return None
    known: dict[tuple[str, int], tuple[str, str]] = {}

    def collect(items: Sequence[lsp.DocumentSymbol | lsp.SymbolInformation] | None) -> None:
        for item in items or []:
            if isinstance(item, lsp.DocumentSymbol):
                known[(item.name, item.selection_range.start.line)] = (
                    _kind_name(item.kind),
                    item.detail or "",
                )
                collect(item.children)
            elif isinstance(item, lsp.SymbolInformation):
                known.setdefault((item.name, item.location.range.start.line), (_kind_name(item.kind), ""))

    collect(found)
    if not known:
        return None

    def apply(items: list[dict[str, Any]]) -> None:
        for sym in items:
            hit = known.get((sym["name"], sym["selectionRange"]["startLine"]))
            if hit is not None:
                kind, detail = hit
                # The server's kind wins, except its plain "Variable" over a more precise outline kind.
                if kind and (kind != "Variable" or sym["kind"] == "Variable"):
                    sym["kind"] = kind
                if detail and not sym["detail"]:
                    sym["detail"] = detail
            apply(sym.get("children", []))

    apply(symbols)
    return server.adapter.server_name

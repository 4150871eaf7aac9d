"""A file's problems: ruff for Python, the language server's diagnostics, tree-sitter syntax errors.

Python gets ruff's findings plus the server's; any language with a server gets its complete diagnostics
of the file's current text, pulled where it offers pulls, else published (partial when none came in time); a file no tool handles
gets tree-sitter's syntax errors only. Problems are sorted by position, then severity.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...workspace import Workspace
from .. import sandbox, textio, treesitter
from ..lsp.adapters.base import env_float
from ..problems import for_file, record_file
from ..problems.sources import relative
from .query import need_file, partial, prepare, server_for
from .ruff import ruff_problems

if TYPE_CHECKING:
    from tree_sitter import Node

SEVERITY = {1: "error", 2: "warning", 3: "information", 4: "hint"}
"""LSP ``DiagnosticSeverity`` values by name."""


def problems(ws: Workspace, resolved: sandbox.Resolved) -> dict[str, Any]:
    """``{path, problems, errors, warnings, sources, partial?, reason?}`` for one file."""
    need_file(resolved)
    text = textio.read_text(resolved).text
    found: list[dict[str, Any]] = []
    sources: list[str] = []
    reason: str | None = None
    if resolved.path.suffix in (".py", ".pyi", ".pyw"):
        linted = ruff_problems(ws, resolved, text)
        found.extend(linted)
        sources.append("ruff")
        record_file(ws, resolved.path, "ruff", linted)  # the workspace's problems view shows it too
    server = server_for(ws, resolved)
    if server is not None:
        reason = prepare(ws, resolved, server, cross_file=False)
        doc = server.sync_document(resolved.path)
        diags = server.wait_diagnostics(doc, env_float("MCP_IDE_DIAGNOSTICS_TIMEOUT", 30))
        sources.append(server.adapter.server_name)
        if diags is None:
            reason = reason or f"{server.adapter.server_name} sent no diagnostics in time"
        for d in diags or []:
            found.append(
                {
                    "source": d.source or server.adapter.server_name,
                    "severity": SEVERITY.get(int(d.severity or 1), "error"),
                    "code": str(d.code) if d.code is not None else "",
                    "message": d.message,
                    "line": d.range.start.line,
                    "character": d.range.start.character,
                    "endLine": d.range.end.line,
                    "endCharacter": d.range.end.character,
                }
            )
    elif not sources:
        found.extend(_syntax_problems(text, resolved.path))
        sources.append("tree-sitter (syntax only)")
    rel = relative(ws, str(resolved.path))
    if rel is not None:  # what other providers (VS Code) know of the file, without duplicates
        extra = for_file(ws, rel, found)
        found.extend(extra)
        sources.extend(sorted({p["source"] for p in extra}))
    order = {"error": 0, "warning": 1, "information": 2, "hint": 3}
    found.sort(key=lambda p: (p["line"], p["character"], order.get(p["severity"], 4)))
    counts = {k: sum(1 for p in found if p["severity"] == k) for k in ("error", "warning")}
    result: dict[str, Any] = {
        "path": resolved.display_rel,
        "problems": found,
        "errors": counts["error"],
        "warnings": counts["warning"],
        "sources": sources,
    }
    return partial(result, reason)


def _syntax_problems(text: str, path: Path) -> list[dict[str, Any]]:
    """Tree-sitter's ERROR and missing nodes (at most 50), for files no linter or server handles."""
    lang = treesitter.language_for(path)
    if lang is None:
        return []
    src = text.encode("utf-8")
    tree = treesitter.parser_for(lang).parse(src)
    if not tree.root_node.has_error:
        return []
    out: list[dict[str, Any]] = []
    pos = treesitter.Positions(src)

    def walk(node: Node) -> None:
        if len(out) >= 50:
            return
        if node.is_missing or node.type == "ERROR":
            sl, sc = pos.char(node.start_point)
            el, ec = pos.char(node.end_point)
            what = f"missing {node.type}" if node.is_missing else "syntax error"
            out.append(
                {
                    "source": "tree-sitter",
                    "severity": "error",
                    "code": "syntax",
                    "message": what,
                    "line": sl,
                    "character": sc,
                    "endLine": el,
                    "endCharacter": ec,
                }
            )
            return
        if node.has_error:
            for child in node.children:
                walk(child)

    walk(tree.root_node)
    return out

"""The steps every code query shares: the file, its language server made ready, positions, partial marks.

A query names a file that must exist (:func:`need_file`), finds the file's language server
(:func:`server_for`, None when no server handles the language), syncs the documents and waits
until the server has loaded the project (:func:`prepare`, which returns why an answer may be
partial), snaps the caller's position to an identifier (:func:`snap`), turns the server's
locations into workspace-relative paths (:func:`locations`, :func:`display`) and marks the
result partial with the reason (:func:`partial`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from ...workspace import Workspace
from .. import sandbox, textio, treesitter
from ..failures import ToolFailure
from ..lsp import LanguageServer, Unavailable, servers, uri_of
from ..lsp.adapters.base import env_float

LocationAnswer = lsp.Location | lsp.LocationLink | list[lsp.Location] | list[lsp.LocationLink] | None
"""What ``textDocument/definition`` (and its kin) answers: one location, a list, or nothing."""


def ready_timeout() -> float:
    return env_float("MCP_IDE_LSP_READY_TIMEOUT", 90)


def unavailable(exc: Unavailable) -> ToolFailure:
    return ToolFailure(f"unavailable: {exc}", kind="unavailable")


def server_for(ws: Workspace, resolved: sandbox.Resolved) -> LanguageServer | None:
    try:
        return servers(ws).server_for(resolved.path)
    except Unavailable as exc:
        raise unavailable(exc) from None


def prepare(
    ws: Workspace, resolved: sandbox.Resolved, server: LanguageServer, cross_file: bool = True
) -> str | None:
    """Sync documents and wait for the project; the reason an answer may be partial, or None."""
    try:
        view = server.adapter.project_view(server, resolved.path)
    except Unavailable as exc:
        raise unavailable(exc) from None
    try:
        server.refresh_open_documents()
        server.sync_document(resolved.path)
    except OSError as exc:
        raise ToolFailure(f"cannot read {resolved.display_rel!r}: {exc.strerror}", kind="not_found") from None
    reason = server.wait_ready(ready_timeout())
    if cross_file and reason is None:
        reason = view
    if cross_file and reason is None:
        try:
            reason = server.adapter.probe(server, resolved.path)
        except Unavailable as exc:
            raise unavailable(exc) from None
        if reason is None:
            reason = server.wait_ready(ready_timeout())
    return reason


def need_file(resolved: sandbox.Resolved) -> None:
    if not resolved.path.is_file():
        if not resolved.path.exists():
            raise sandbox.not_found(resolved)
        raise ToolFailure(f"{resolved.display_rel!r} is a folder; name a source file", kind="invalid")


def display(ws: Workspace, path: Path) -> str | None:
    """A workspace-relative display path, or None when ``path`` is outside every root."""
    real = Path(os.path.realpath(path))
    for root in ws.roots:
        if real == root or real.is_relative_to(root):
            rel = real.relative_to(ws.root) if real.is_relative_to(ws.root) else real.relative_to(root)
            return str(rel).replace("/", os.sep)
    return None


def snap(text: str, path: Path, line: int, character: int) -> tuple[int, int, int]:
    """The identifier at or nearest (line, character) on that line: (line, start, end)."""
    if line < 0 or character < 0:
        raise ToolFailure("line and character are 0-based and cannot be negative", kind="invalid")
    hit = treesitter.identifier_at(text, treesitter.language_for(path), line, character)
    if hit is None:
        lines = text.count("\n") + 1
        if line >= lines:
            raise ToolFailure(
                f"line {line} is past the end of the file ({lines} lines, 0-based)", kind="invalid"
            )
        raise ToolFailure(f"no identifier on line {line} (0-based); point at a symbol's name", kind="invalid")
    return hit


def doc_text(server: LanguageServer | None, resolved: sandbox.Resolved) -> str:
    """The text the server sees for the file (its open document), else the disk's."""
    if server is not None:
        doc = server.documents.get(uri_of(resolved.path))
        if doc is not None:
            return doc.text
    return textio.read_text(resolved).text


def read_for(ws: Workspace, server: LanguageServer, path: Path) -> str | None:
    """The text of a workspace file as ``server`` sees it, opening it there (a follow-up request on it
    needs it open); None for a file outside the workspace or unreadable."""
    if display(ws, path) is None:
        return None
    try:
        return server.sync_document(path).text
    except (OSError, ValueError):
        return None


def locations(result: LocationAnswer) -> list[tuple[str, lsp.Range]]:
    """(uri, range) pairs of a location answer; a link gives its target's selection range."""
    if result is None:
        return []
    items = result if isinstance(result, list) else [result]
    out: list[tuple[str, lsp.Range]] = []
    for item in items:
        if isinstance(item, lsp.LocationLink):
            out.append((item.target_uri, item.target_selection_range or item.target_range))
        elif isinstance(item, lsp.Location):
            out.append((item.uri, item.range))
    return out


def partial(result: dict[str, Any], reason: str | None) -> dict[str, Any]:
    """Mark ``result`` as ``partial`` with the ``reason`` when there is one."""
    if reason:
        result["partial"] = True
        result["reason"] = reason
    return result


def references_at(server: LanguageServer, uri: str, pos: lsp.Position) -> list[lsp.Location]:
    """The server's references (declaration included) to the symbol at ``pos`` of ``uri``."""
    answer = server.request(
        "textDocument/references",
        lsp.ReferenceParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            position=pos,
            context=lsp.ReferenceContext(include_declaration=True),
        ),
        timeout=120,
    )
    return list(answer or [])

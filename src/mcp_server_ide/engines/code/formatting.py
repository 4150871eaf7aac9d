"""Formatting a file: ruff format for Python, the language server's ``textDocument/formatting`` otherwise.

:func:`format_plan` returns the formatted text as a :class:`..multiedit.FilePlan` (None when the
file is already formatted), so a tool can preview it as a diff; :func:`format_file` writes it.
The file's encoding and line endings are kept; nothing is written over a syntax error.
"""

from __future__ import annotations

from lsprotocol import types as lsp

from ...workspace import Workspace
from .. import multiedit, sandbox, textio
from ..failures import ToolFailure
from ..lsp import Unavailable, uri_of
from .query import doc_text, need_file, prepare, server_for, unavailable
from .ruff import run_ruff


def format_plan(ws: Workspace, resolved: sandbox.Resolved) -> multiedit.FilePlan | None:
    """The formatted text of a file as a plan (None when it is already formatted)."""
    need_file(resolved)
    old = textio.read_text(resolved)
    if resolved.path.suffix in (".py", ".pyi", ".pyw"):
        done = run_ruff(ws, resolved, ["format", "--no-cache"], old.text)
        if done.returncode != 0:
            msg = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise ToolFailure(
                f"cannot format {resolved.display_rel!r}: {(msg[-1] if msg else 'ruff failed')[:300]} (fix the syntax first)",
                kind="invalid",
            )
        new_text = done.stdout.decode("utf-8")
    else:
        server = server_for(ws, resolved)
        if server is None or not server.supports("document_formatting_provider"):
            suffix = resolved.path.suffix
            kind = f"{suffix} files" if suffix else "files without an extension"
            raise ToolFailure(
                f"unavailable: no formatter for {kind} here "
                "(ruff formats Python; the TypeScript server formats TS/JS; configure others in lsp.json)",
                kind="unavailable",
            )
        prepare(ws, resolved, server, cross_file=False)
        text = doc_text(server, resolved)
        size, tabs = textio.indentation(text)
        try:
            edits: list[lsp.TextEdit] | None = server.request(
                "textDocument/formatting",
                lsp.DocumentFormattingParams(
                    text_document=lsp.TextDocumentIdentifier(uri=uri_of(resolved.path)),
                    options=lsp.FormattingOptions(
                        tab_size=size,
                        insert_spaces=not tabs,
                        trim_trailing_whitespace=True,
                        insert_final_newline=True,
                    ),
                ),
                timeout=60,
            )
        except Unavailable as exc:
            raise unavailable(exc) from None
        new_text = multiedit.apply_text_edits(
            text,
            [
                (
                    e.range.start.line,
                    e.range.start.character,
                    e.range.end.line,
                    e.range.end.character,
                    e.new_text,
                )
                for e in edits or []
            ],
        )
    new_text = textio.normalise_input(new_text, old)
    if new_text == old.text:
        return None
    return multiedit.FilePlan(resolved, old, new_text)


def format_file(ws: Workspace, resolved: sandbox.Resolved) -> bool:
    """Format a file in place (ruff for Python, the language server otherwise). True when it changed."""
    plan = format_plan(ws, resolved)
    if plan is None:
        return False
    multiedit.apply(ws, [plan])
    return True

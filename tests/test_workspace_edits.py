"""Planning a language server's ``WorkspaceEdit`` (what rename and code actions apply)."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types as lsp

from mcp_server_ide.engines import multiedit
from mcp_server_ide.workspace import Workspace


def test_a_snippet_edit_inserts_its_placeholders_defaults(tmp_path: Path) -> None:
    """A server may answer with snippet edits (LSP 3.18): tab stops are dropped, a placeholder
    becomes its default text and escapes are undone; the plan never holds snippet syntax."""
    (tmp_path / "a.ts").write_text("const x = 1;\n")
    ws = Workspace.open(tmp_path)
    uri = (tmp_path / "a.ts").as_uri()
    whole = lsp.Range(lsp.Position(0, 0), lsp.Position(0, 12))
    edit = lsp.WorkspaceEdit(
        document_changes=[
            lsp.TextDocumentEdit(
                text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None),
                edits=[
                    lsp.SnippetTextEdit(
                        range=whole,
                        snippet=lsp.StringValue(value="const ${1:total} = ${2:1};$0 // \\$5 ${3:a\\}b}"),
                    )
                ],
            )
        ]
    )
    try:
        (plan,) = multiedit.plan_workspace_edit(ws, edit)
        assert plan.new_text == "const total = 1; // $5 a}b\n"
    finally:
        ws.close()

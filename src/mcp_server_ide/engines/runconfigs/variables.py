"""Variables in run configurations: ``${...}`` resolved as VS Code does, when a configuration runs.

``${workspaceFolder}``, ``${workspaceFolder:name}``, ``${workspaceFolderBasename}``, ``${file}``,
``${relativeFile}``, ``${relativeFileDirname}``, ``${fileBasename}``, ``${fileBasenameNoExtension}``,
``${fileExtname}``, ``${fileDirname}``, ``${fileDirnameBasename}``, ``${fileWorkspaceFolder}``,
``${lineNumber}``, ``${selectedText}`` (from the editor's active file), ``${cwd}``,
``${pathSeparator}`` / ``${/}``, ``${env:NAME}``, ``${config:section.key}`` (from
``.vscode/settings.json``) and ``${input:id}`` (an input's ``default``). A variable that cannot be
resolved fails the run and is named.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, overload

from ...workspace import Workspace
from ..failures import ToolFailure
from .configs import SETTINGS, JsonObject, read_jsonc

_VAR = re.compile(r"\$\{([^}]*)\}")


class Variables:
    """Resolves ``${...}`` as VS Code does, for one run."""

    def __init__(self, ws: Workspace, inputs: dict[str, JsonObject]) -> None:
        self.ws = ws
        self.inputs = inputs
        self._settings: JsonObject | None = None
        self._editor: tuple[Path | None, int, str] | None = None

    def settings(self) -> JsonObject:
        if self._settings is None:
            try:
                self._settings = read_jsonc(self.ws, SETTINGS) or {}
            except ToolFailure:
                self._settings = {}
        return self._settings

    def _active(self) -> tuple[Path | None, int, str]:
        if self._editor is None:
            from ..editor import editor_for

            backend = editor_for(self.ws)
            doc = None
            try:
                doc = backend.active()
            except ToolFailure:
                doc = None
            if doc is None:
                self._editor = (None, 0, "")
            else:
                sel = doc.selection
                lines = doc.text.split("\n")
                start = sum(len(x) + 1 for x in lines[: sel.start.line]) + sel.start.character
                end = sum(len(x) + 1 for x in lines[: sel.end.line]) + sel.end.character
                self._editor = (doc.path, sel.active.line + 1, doc.text[start:end])
        return self._editor

    def _file(self, name: str) -> Path:
        path = self._active()[0]
        if path is None:
            raise ToolFailure(
                f"cannot resolve ${{{name}}}: no file is open in the editor (open one with open_file_in_editor, "
                "as VS Code needs an open editor for this variable)",
                kind="invalid",
            )
        return path

    def _root_of(self, path: Path) -> Path:
        return next((r for r in self.ws.roots if path.is_relative_to(r)), self.ws.root)

    def value(self, name: str) -> str:
        ws = self.ws
        if name == "workspaceFolder" or name == "workspaceRoot":
            return str(ws.root)
        if name.startswith("workspaceFolder:"):
            wanted = name.split(":", 1)[1]
            for root in ws.roots:
                if root.name == wanted:
                    return str(root)
            raise ToolFailure(
                f"cannot resolve ${{{name}}}: no workspace folder is named {wanted!r}", kind="invalid"
            )
        if name == "workspaceFolderBasename":
            return ws.root.name
        if name in ("cwd",):
            return str(ws.root)
        if name in ("pathSeparator", "/"):
            return os.sep
        if name == "execPath":
            return sys.executable
        if name == "defaultBuildTask":
            raise ToolFailure(f"cannot resolve ${{{name}}} headless", kind="invalid")
        if name.startswith("env:"):
            # The environment a child would see: the server's own secrets never reach a command line.
            from ..processes import child_env

            return child_env().get(name[4:], "")
        if name.startswith("config:"):
            key = name[7:]
            settings = self.settings()
            if key in settings:
                return as_text(settings[key])
            node: Any = settings
            for part in key.split("."):
                if not isinstance(node, dict) or part not in node:
                    raise ToolFailure(
                        f"cannot resolve ${{{name}}}: {key!r} is not set in {SETTINGS}", kind="invalid"
                    )
                node = node[part]
            return as_text(node)
        if name.startswith("input:"):
            item = self.inputs.get(name[6:])
            if item is None:
                raise ToolFailure(
                    f"cannot resolve ${{{name}}}: no input has the id {name[6:]!r}", kind="invalid"
                )
            if "default" in item:
                return as_text(item["default"])
            if item.get("type") == "pickString" and item.get("options"):
                first = item["options"][0]
                return as_text(first.get("value") if isinstance(first, dict) else first)
            raise ToolFailure(
                f'cannot resolve ${{{name}}}: the input asks a person and has no default (give it a "default")',
                kind="invalid",
            )
        if name.startswith("command:"):
            raise ToolFailure(
                f"cannot resolve ${{{name}}}: VS Code commands are not available headless "
                "(replace it with a value or an ${input:...} with a default)",
                kind="invalid",
            )
        if name == "lineNumber":
            self._file(name)
            return str(self._active()[1])
        if name == "selectedText":
            self._file(name)
            return self._active()[2]
        if name in _FILE_VARIABLES:
            path = self._file(name)
            root = self._root_of(path)
            return _FILE_VARIABLES[name](path, root)
        raise ToolFailure(f"cannot resolve ${{{name}}}: unknown variable", kind="invalid")

    @overload
    def resolve(self, value: str) -> str: ...
    @overload
    def resolve(self, value: JsonObject) -> JsonObject: ...
    @overload
    def resolve(self, value: Any) -> Any: ...
    def resolve(self, value: Any) -> Any:
        """``value`` (a JSON value) with every ``${...}`` in its strings resolved."""
        if isinstance(value, str):
            return _VAR.sub(lambda m: self.value(m.group(1)), value)
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if isinstance(value, dict):
            return {k: self.resolve(v) for k, v in value.items()}
        return value


def _rel_dir(path: Path, root: Path) -> str:
    rel = os.path.relpath(path.parent, root)
    return "" if rel == "." else rel


_FILE_VARIABLES: dict[str, Callable[[Path, Path], str]] = {
    "file": lambda p, r: str(p),
    "fileWorkspaceFolder": lambda p, r: str(r),
    "relativeFile": lambda p, r: os.path.relpath(p, r),
    "relativeFileDirname": _rel_dir,
    "fileBasename": lambda p, r: p.name,
    "fileBasenameNoExtension": lambda p, r: p.stem if p.suffix else p.name,
    "fileExtname": lambda p, r: p.suffix,
    "fileDirname": lambda p, r: str(p.parent),
    "fileDirnameBasename": lambda p, r: p.parent.name,
}


def as_text(value: object) -> str:
    """A setting's or input's value as the text VS Code puts in its place (JSON for lists and objects)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value) if isinstance(value, (list, dict)) else str(value)

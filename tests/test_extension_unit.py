"""The VS Code extension's own checks, in the default suite so CI runs them: ``tsc`` over its sources
(against ``@types/vscode`` 1.101, the lowest VS Code it declares) and its node unit tests (the pure
parts: the bridge protocol against a real Unix socket, columns, settings -> arguments). Nothing of
``vscode`` is mocked: those parts do not import it. The real extension runs in tests/e2e/test_vscode.py."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.extension import EXTENSION, typecheck, unit_tests


def test_extension_typechecks() -> None:
    typecheck()


def test_extension_unit_tests_pass(tmp_path: Path) -> None:
    out = unit_tests(tmp_path / "out")
    assert "# fail 0" in out, out
    assert "# pass 0" not in out, out


def test_extension_declares_what_code_server_accepts() -> None:
    manifest = json.loads((EXTENSION / "package.json").read_text())
    wanted = manifest["engines"]["vscode"]
    assert wanted.startswith("^1.")
    assert 101 <= int(wanted.split(".")[1]) <= 139  # code-server 4.139.1 is VS Code 1.139.1
    assert manifest["contributes"]["mcpServerDefinitionProviders"][0]["id"] == "mcpServerIde"
    assert manifest["devDependencies"]["@types/vscode"] == "1.101.0"

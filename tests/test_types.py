"""The source type-checks: ``basedpyright`` (the venv's, a real process) on ``src/`` with the
``[tool.basedpyright]`` settings of ``pyproject.toml`` (level ``standard``; unneeded ignore comments
are errors too), and the extension API has one typed signature.

The check reads every module of the package, so a failure lists each error as ``path:line: message``.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASEDPYRIGHT = Path(sys.executable).with_name("basedpyright")

INSTALL_SIGNATURE = {
    "server": "MCPServer",
    "runner": "ToolRunner",
    "workspace_for": "WorkspaceFor",
    "options": "ServerOptions",
}
"""``extensions.Install``: what every ``install`` hook of the surface is annotated with."""


def test_basedpyright_finds_no_error_in_src() -> None:
    assert BASEDPYRIGHT.is_file(), f"basedpyright is a dependency of the package; missing at {BASEDPYRIGHT}"
    done = subprocess.run(
        [str(BASEDPYRIGHT), "--outputjson"], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    report = json.loads(done.stdout)
    errors = [d for d in report["generalDiagnostics"] if d["severity"] == "error"]
    shown = [
        f"{Path(d['file']).relative_to(ROOT)}:{d['range']['start']['line'] + 1}: {d['message'].splitlines()[0]}"
        f" ({d.get('rule', '')})"
        for d in errors
    ]
    assert report["summary"]["filesAnalyzed"] > 100, report["summary"]  # the whole package was read
    assert shown == [], f"{len(shown)} type errors:\n" + "\n".join(shown)


def test_every_surface_install_has_the_typed_signature() -> None:
    from mcp_server_ide import surface

    found = []
    for info in pkgutil.iter_modules(surface.__path__):
        module = importlib.import_module(f"{surface.__name__}.{info.name}")
        install = getattr(module, "install", None)
        if install is None:
            continue
        params = inspect.signature(install).parameters
        found.append(info.name)
        assert {n: p.annotation for n, p in params.items()} == INSTALL_SIGNATURE, info.name
        assert inspect.signature(install).return_annotation == "None", info.name
    assert len(found) >= 12, found

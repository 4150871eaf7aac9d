"""The workspace's test runners: pytest (or unittest), npm test, go test, cargo test.

A runner is offered only when the project has tests for it and its tool is installed: a Python
project with ``test_*.py`` files (pytest when the project's interpreter has it), a ``package.json``
with a real ``test`` script, a ``go.mod``, a ``Cargo.toml``.

Finding them runs nothing the workspace controls when it is untrusted (or hosted): whether the
project's interpreter has pytest is then read from its ``site-packages`` folders, never by running
it (the interpreter is the workspace's ``.venv`` or whatever ``.vscode/settings.json`` names).
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import time
from pathlib import Path

from ...workspace import Workspace
from .. import runconfigs
from ..failures import ToolFailure

SKIP_DIRS = frozenset(
    {".git", "node_modules", "dist", "build", ".venv", "venv", "env", "__pycache__", ".tox", ".nox",
     "site-packages", ".mypy_cache", ".ruff_cache", ".pytest_cache", "target", ".idea", ".vscode"}
)  # fmt: skip
NPM_PLACEHOLDER_TEST = 'echo "Error: no test specified" && exit 1'


def _has_python_tests(root: Path, limit: int = 20000) -> bool:
    seen = 0
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > limit:
                return False
            name = entry.name
            if entry.is_dir(follow_symlinks=False):
                if name not in SKIP_DIRS and not name.startswith("."):
                    stack.append(Path(entry.path))
            elif name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")):
                return True
    return False


_import_cache: dict[tuple[str, str], tuple[float, bool]] = {}


def python_can_import(ws: Workspace, python: str, module: str) -> bool:
    """Whether the project's interpreter has ``module`` (cached for a minute). In an untrusted or hosted
    workspace the interpreter is not run: its ``site-packages`` are looked at (:func:`installed_beside`)."""
    from ..processes import run

    if not ws.policy.trusted or ws.policy.hosted:
        return installed_beside(python, module)
    key = (python, module)
    hit = _import_cache.get(key)
    if hit is not None and time.monotonic() - hit[0] < 60:
        return hit[1]
    try:
        result = run(
            [
                python,
                "-c",
                f"import importlib.util,sys; sys.exit(importlib.util.find_spec({module!r}) is None)",
            ],
            ws=ws,
            timeout_s=15,
        )
        ok = result.exit_code == 0
    except ToolFailure:
        ok = False
    _import_cache[key] = (time.monotonic(), ok)
    return ok


def installed_beside(python: str, module: str) -> bool:
    """Whether ``module`` is installed in the ``site-packages``/``dist-packages`` of the prefix that
    holds the interpreter ``python`` (``<prefix>/bin/python``), read from the disk without running it."""
    prefix = glob.escape(str(Path(python).parent.parent))
    return any(os.path.isdir(p) for p in glob.glob(f"{prefix}/lib/python3*/*-packages/{glob.escape(module)}"))


def test_runners(ws: Workspace) -> list[runconfigs.Step]:
    """The test commands of the workspace's projects: pytest (or unittest), npm test, go test, cargo test."""
    root = ws.root
    cwd = str(root)
    steps: list[runconfigs.Step] = []
    python_markers = ("pyproject.toml", "setup.py", "setup.cfg", "pytest.ini", "tox.ini", "conftest.py")
    python_project = any((root / m).exists() for m in python_markers) or (root / "tests").is_dir()
    if python_project and _has_python_tests(root):
        python = runconfigs.project_python(ws)
        if python_can_import(ws, python, "pytest"):
            steps.append(runconfigs.Step("pytest", cwd, argv=[python, "-m", "pytest"]))
        else:
            steps.append(runconfigs.Step("unittest", cwd, argv=[python, "-m", "unittest", "discover", "-v"]))
    package = root / "package.json"
    if package.is_file() and shutil.which("npm"):
        try:
            scripts: object = json.loads(package.read_text(encoding="utf-8")).get("scripts") or {}
        except (OSError, ValueError, AttributeError):
            scripts = {}
        test: object = scripts.get("test") if isinstance(scripts, dict) else None
        if isinstance(test, str) and test.strip() and test.strip() != NPM_PLACEHOLDER_TEST:
            steps.append(runconfigs.Step("npm test", cwd, argv=["npm", "test"]))
    if (root / "go.mod").is_file() and shutil.which("go"):
        steps.append(runconfigs.Step("go test", cwd, argv=["go", "test", "./..."]))
    if (root / "Cargo.toml").is_file() and shutil.which("cargo"):
        steps.append(runconfigs.Step("cargo test", cwd, argv=["cargo", "test"]))
    return steps

"""The project's Python interpreter, chosen as the VS Code Python extension would choose it."""

from __future__ import annotations

import shutil
import sys

from ...workspace import Workspace
from .variables import Variables


def project_python(ws: Workspace, variables: Variables | None = None) -> str:
    """The project's Python, as the VS Code Python extension would pick it: the configured interpreter
    (``python.defaultInterpreterPath``), else the workspace's ``.venv`` / ``venv``, else ``python3`` on PATH."""
    variables = variables or Variables(ws, {})
    settings = variables.settings()
    configured = settings.get("python.defaultInterpreterPath") or settings.get("python.pythonPath")
    if isinstance(configured, str) and configured:
        return variables.resolve(configured)
    for rel in (".venv/bin/python", "venv/bin/python", ".venv/Scripts/python.exe"):
        candidate = ws.root / rel
        if candidate.exists():
            return str(candidate)
    return shutil.which("python3") or shutil.which("python") or sys.executable

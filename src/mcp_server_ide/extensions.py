"""The MCP surface beyond tools (resources, prompts, completion, subscriptions, roots...).

Each module of the ``mcp_server_ide.surface`` package may define
``install(server, runner, workspace_for, options)``; :func:`apply_all` calls them all, so
adding a feature never means editing the server module.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any


def apply_all(server: Any, runner: Any, workspace_for: Any, options: Any) -> None:
    from . import surface as package

    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        install = getattr(module, "install", None)
        if callable(install):
            install(server, runner, workspace_for, options)

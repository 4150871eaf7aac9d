"""The MCP surface beyond tools (resources, prompts, completion, subscriptions, roots...).

Each module of the ``mcp_server_ide.surface`` package may define an ``install`` with the
:class:`Install` signature; :func:`apply_all` calls them all, so adding a feature never means
editing the server module. A ``--plugin`` module may define one too (see :mod:`.plugin`).
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import TYPE_CHECKING, Protocol, cast

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from .runner import ToolRunner
    from .server import ServerOptions, WorkspaceFor


class Install(Protocol):
    """``install(server, runner, workspace_for, options)``: add to a server once it is built.

    - ``server``: the SDK's ``MCPServer`` (``.resource``, ``.prompt``, ``.add_resource``, ``.middleware``...);
    - ``runner``: the :class:`~.runner.ToolRunner` (``.specs``, the enabled tools by name;
      ``.patch_tools`` adjusts each SDK ``Tool`` as it is built; ``.read_only``);
    - ``workspace_for``: the workspace of a request, from its ``Context`` (:data:`~.server.WorkspaceFor`);
    - ``options``: the :class:`~.server.ServerOptions` the server was built with.
    """

    def __call__(
        self, server: MCPServer, runner: ToolRunner, workspace_for: WorkspaceFor, options: ServerOptions, /
    ) -> None: ...


def install_of(module: object) -> Install | None:
    """The module's ``install`` hook, if it has one (taken on trust: a module's attribute has no static
    type; ``tests/test_types.py`` checks every surface module's signature)."""
    install = getattr(module, "install", None)
    return cast("Install", install) if callable(install) else None


def apply_all(
    server: MCPServer, runner: ToolRunner, workspace_for: WorkspaceFor, options: ServerOptions
) -> None:
    from . import surface as package

    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        install = install_of(importlib.import_module(f"{package.__name__}.{info.name}"))
        if install is not None:
            install(server, runner, workspace_for, options)

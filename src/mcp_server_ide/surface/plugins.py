"""``--plugin MODULE``: the plugin's tools are already in the registry (the server imported the
module before building the tool table); here its resources and prompts join the server and its
own ``install(server, runner, workspace_for, options)`` runs. See :mod:`mcp_server_ide.plugin`."""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING

from ..extensions import install_of

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from ..runner import ToolRunner
    from ..server import ServerOptions, WorkspaceFor

log = logging.getLogger(__name__)


def install(
    server: MCPServer, runner: ToolRunner, workspace_for: WorkspaceFor, options: ServerOptions
) -> None:
    from .. import plugin

    own = tuple(options.plugins)
    for reg in plugin.REGISTRATIONS:
        module = getattr(reg.fn, "__module__", "")
        if not any(module == p or module.startswith(p + ".") for p in own):
            continue  # loaded by another server in this process, not one of this server's plugins
        if reg.kind == "resource":
            server.resource(reg.uri, **reg.kwargs)(reg.fn)
        else:
            server.prompt(reg.name, **reg.kwargs)(reg.fn)
    for name in options.plugins:
        hook = install_of(importlib.import_module(name))
        if hook is not None:
            hook(server, runner, workspace_for, options)

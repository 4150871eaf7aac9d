"""``--plugin MODULE``: the plugin's tools are already in the registry (the server imported the
module before building the tool table); here its resources and prompts join the server and its
own ``install(server, runner, workspace_for, options)`` runs. See :mod:`mcp_server_ide.plugin`."""

from __future__ import annotations

import importlib
import logging
from typing import Any

log = logging.getLogger(__name__)


def install(server: Any, runner: Any, workspace_for: Any, options: Any) -> None:
    from .. import plugin

    own = tuple(getattr(options, "plugins", None) or [])
    for reg in plugin.REGISTRATIONS:
        module = getattr(reg.fn, "__module__", "")
        if not any(module == p or module.startswith(p + ".") for p in own):
            continue  # loaded by another server in this process, not one of this server's plugins
        if reg.kind == "resource":
            server.resource(*reg.args, **reg.kwargs)(reg.fn)
        elif reg.kind == "prompt":
            server.prompt(*reg.args, **reg.kwargs)(reg.fn)
    for name in getattr(options, "plugins", None) or []:
        module = importlib.import_module(name)
        hook = getattr(module, "install", None)
        if callable(hook):
            hook(server, runner, workspace_for, options)

"""What the surface keeps for one server: typed state of ours, never attributes set on SDK objects.

One :class:`ServerState` per ``MCPServer``, held in a weak mapping (it goes when the server goes).
Surface modules fill in what they own (the connected clients, the resource subscriptions, the
tool re-check discovery runs after a change of roots); others read it here instead of reaching
into each other's ``install``.

No ``install`` here: :func:`~mcp_server_ide.extensions.apply_all` only imports this module.
"""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp.server import MCPServer
    from mcp.server.context import ServerMiddleware
    from mcp_types import ClientCapabilities

    from ..workspace import Workspace
    from .clients import Clients
    from .subscriptions import Subscriptions


@dataclass(eq=False)
class ServerState:
    clients: Clients | None = None
    """Who is connected (:mod:`.clients`), made on first use."""
    subscriptions: Subscriptions | None = None
    """Who is subscribed to which resource (:mod:`.subscriptions`), once installed."""
    recheck_tools: Callable[[Workspace], Awaitable[None]] | None = None
    """Re-detect a workspace's features and announce ``tools/list_changed`` if the visible tools
    changed (:mod:`.discovery`); :mod:`.roots` calls it after the client's roots changed."""
    transparent: list[ServerMiddleware[object]] = field(default_factory=list)
    """Middlewares of ours that only observe: the stdio direct lane may answer without them."""
    start_warmup: Callable[[ClientCapabilities | None, bool], None] | None = None
    """Start the warm-up (:mod:`.warmup`) with the client's capabilities, on the 2026 era or not;
    set until it started: the direct lane calls it at a tool call it answers itself."""
    list_changed_advertised: bool = False
    """``listChanged`` is advertised on the 2025 era (:func:`.lowlevel.advertise_list_changed`)."""


_STATES: weakref.WeakKeyDictionary[MCPServer, ServerState] = weakref.WeakKeyDictionary()


def state_of(server: MCPServer) -> ServerState:
    """The surface state of ``server``, made empty the first time it is asked for."""
    found = _STATES.get(server)
    if found is None:
        found = _STATES[server] = ServerState()
    return found

"""``logging/setLevel`` and the log messages tools send (``notifications/message``).

On the 2025 era the client picks a minimum level per connection with ``logging/setLevel``
(default ``info``); tools log through ``call.reporter.log``, which asks :func:`wanted`. On the
2026-07-28 era each request opts in through its ``_meta`` and the SDK filters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, get_args

from mcp_types import EmptyResult, LoggingLevel, SetLevelRequestParams

from . import lowlevel

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from ..runner import ToolRunner
    from ..server import ServerOptions, WorkspaceFor
    from .lowlevel import AnyContext, RequestContext

LEVELS: tuple[LoggingLevel, ...] = get_args(LoggingLevel)
"""The protocol's levels, least severe first."""
DEFAULT_LEVEL: LoggingLevel = "info"
STATE_KEY = "mcp_server_ide.log_level"


def as_level(level: str) -> LoggingLevel | None:
    """``level`` as a protocol level (None: not one; a message at it is not sent)."""
    for known in LEVELS:
        if known == level:
            return known
    return None


def wanted(ctx: AnyContext, level: LoggingLevel) -> bool:
    """Whether a log message at ``level`` should be sent to this request's client."""
    if lowlevel.is_modern(ctx):
        return True  # the SDK applies the request's own opt-in
    state = lowlevel.connection_state(ctx)
    minimum = as_level(str((state or {}).get(STATE_KEY, DEFAULT_LEVEL))) or DEFAULT_LEVEL
    return LEVELS.index(level) >= LEVELS.index(minimum)


def install(
    server: MCPServer, runner: ToolRunner, workspace_for: WorkspaceFor, options: ServerOptions
) -> None:
    async def set_level(ctx: RequestContext, params: SetLevelRequestParams) -> EmptyResult:
        state = lowlevel.connection_state(ctx)
        if state is not None:
            state[STATE_KEY] = params.level
        return EmptyResult()

    lowlevel.replace_request(server, "logging/setLevel", SetLevelRequestParams, lambda previous: set_level)

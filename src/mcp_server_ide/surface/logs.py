"""``logging/setLevel`` and the log messages tools send (``notifications/message``).

On the 2025 era the client picks a minimum level per connection with ``logging/setLevel``
(default ``info``); tools log through ``call.reporter.log``, which asks :func:`wanted`. On the
2026-07-28 era each request opts in through its ``_meta`` and the SDK filters.
"""

from __future__ import annotations

from typing import Any

from mcp_types import EmptyResult, SetLevelRequestParams

from . import lowlevel

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
DEFAULT_LEVEL = "info"
STATE_KEY = "mcp_server_ide.log_level"


def wanted(ctx: Any, level: str) -> bool:
    """Whether a log message at ``level`` should be sent to this request's client."""
    if lowlevel.is_modern(ctx):
        return True  # the SDK applies the request's own opt-in
    state = lowlevel.connection_state(ctx)
    minimum = (state or {}).get(STATE_KEY, DEFAULT_LEVEL)
    try:
        return LEVELS.index(level) >= LEVELS.index(minimum)
    except ValueError:
        return True


def install(server: Any, runner: Any, workspace_for: Any, options: Any) -> None:
    async def set_level(ctx: Any, params: SetLevelRequestParams) -> EmptyResult:
        state = lowlevel.connection_state(ctx)
        if state is not None:
            state[STATE_KEY] = params.level
        return EmptyResult()

    lowlevel.replace_request(server, "logging/setLevel", SetLevelRequestParams, lambda previous: set_level)

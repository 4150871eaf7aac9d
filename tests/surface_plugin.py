"""A small ``--plugin`` module for the surface tests: a slow tool (progress heartbeat), a tool that
stops when cancelled, and a tool that logs at several levels."""

from __future__ import annotations

import threading
import time

from mcp_server_ide import plugin

STOPPED = threading.Event()
STARTED = threading.Event()


@plugin.tool(read_only=True, structured=False)
def slow_sleep(seconds: float = 2.5) -> str:
    """Sleeps without reporting progress itself (the server's heartbeat reports it)."""
    time.sleep(seconds)
    return "slept"


@plugin.tool(read_only=True, structured=False)
def spin_until_cancelled(limit: float = 30.0) -> str:
    """Loops, checking the call's cancellation flag, like engines do."""
    call = plugin.current()
    STARTED.set()
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if call.cancelled.is_set():
            STOPPED.set()
            return "stopped"
        time.sleep(0.02)
    return "ran to the end"


@plugin.tool(read_only=True, structured=False)
async def log_levels() -> str:
    """Logs one message at debug, info and error."""
    for level in ("debug", "info", "error"):
        await plugin.log(level, f"a {level} message")
    return "logged"

"""What terminals and jobs answer alike: output read from an offset of their output log (and waiting
for more), input sent, and times.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, NotRequired

import anyio
from typing_extensions import TypedDict

from ...call import current
from ...lazy import LazyModule
from ..lean import without

if TYPE_CHECKING:
    from ...engines import processes
    from ...engines.regex import Regex
else:
    processes = LazyModule("mcp_server_ide.engines.processes")


# Output read from an offset. On MCP each field is left out at its default: `output` when empty,
# `offset` when it is the offset asked for, `skippedBytes` 0, `hasMore` false.
class OutputChunk(TypedDict):
    output: NotRequired[str]
    offset: NotRequired[int]
    """Where `output` starts (later than the offset asked for when older output was dropped)."""
    nextOffset: int
    """Pass this as offset next time to read only what is new."""
    skippedBytes: NotRequired[int]
    """Bytes between the offset asked for and `offset` that are no longer kept."""
    hasMore: NotRequired[bool]
    """More output is already there past nextOffset (maxBytes was reached)."""


def lean_chunk(asked: int, *echoed: str) -> Callable[[Any], Any]:
    """The compact form of an output chunk read from offset ``asked``: no field at its default, no
    ``echoed`` parameter (the id the caller named), no duration."""
    return lambda chunk: without(
        chunk, *echoed, "durationMs", output="", offset=asked, skippedBytes=0, hasMore=False, exitCode=None
    )


class InputSent(TypedDict):
    bytesSent: int
    outputOffset: int
    terminalId: NotRequired[str]
    jobId: NotRequired[str]


def iso(ts: float) -> str:
    """A Unix time as ISO 8601 UTC with milliseconds (``2025-01-01T12:00:00.000Z``)."""
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


async def wait_until(
    done: Callable[[], bool],
    log: processes.OutputLog,
    offset: int,
    wait_s: float,
    pattern: Regex | None,
) -> bool | None:
    """Wait until ``done()`` or ``pattern`` matches the output after ``offset``; True when it matched."""
    if wait_s <= 0:
        return None if pattern is None else matches(log, offset, pattern)
    call = current()
    start = time.monotonic()
    deadline = start + wait_s
    next_report = start + 1.0
    seen = -1
    pause = 0.001
    while True:
        if pattern is not None and log.version != seen:
            seen = log.version
            if matches(log, offset, pattern):
                return True
        if done():
            return None if pattern is None else matches(log, offset, pattern)
        now = time.monotonic()
        if now >= deadline:
            return None if pattern is None else False
        if now >= next_report:
            next_report = now + 1.0
            await call.reporter.progress(round(now - start, 1), wait_s, "waiting for output")
        # Short commands answer within milliseconds; long ones are polled 20 times a second.
        await anyio.sleep(min(pause, deadline - now))
        pause = min(pause * 1.5, 0.05)


def matches(log: processes.OutputLog, offset: int, pattern: Regex) -> bool:
    data, _, _, _ = log.read(max(offset, log.end - 256_000), 256_000, final=True)
    return pattern.search(processes.decode(data)) is not None

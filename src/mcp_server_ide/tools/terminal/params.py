"""The parameters the terminal tools share: their limits, their schema types and their checks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from ...lazy import LazyModule
from ...registry import ToolFailure
from ..params import RELATIVE

if TYPE_CHECKING:
    from ...engines import processes
    from ...engines.regex import Regex
else:
    processes = LazyModule("mcp_server_ide.engines.processes")

MAX_WAIT_MS = 600_000
DEFAULT_RUN_TIMEOUT_MS = 60_000
MAX_RUN_TIMEOUT_MS = int(processes.MAX_TIMEOUT_S * 1000)
DEFAULT_MAX_OUTPUT = 200_000
MAX_READ_BYTES = 1_000_000

Command = Annotated[str, Field(description="bash syntax.")]
Cwd = Annotated[str | None, Field(description=RELATIVE)]
Env = Annotated[
    dict[str, str] | None,
    Field(description="Extra environment variables."),
]
TimeoutMs = Annotated[
    float | None,
    Field(description=f"Milliseconds (default {DEFAULT_RUN_TIMEOUT_MS})."),
]
MaxOutput = Annotated[
    int | None,
    Field(
        ge=0,
        description=f"Per stream (default {DEFAULT_MAX_OUTPUT}); longer output keeps head and tail.",
    ),
]
Offset = Annotated[
    int,
    Field(
        ge=0,
        description="0, or the previous nextOffset (or a command's outputOffset).",
    ),
]
MaxBytes = Annotated[
    int,
    Field(
        ge=1,
        le=MAX_READ_BYTES,
    ),
]
WaitMs = Annotated[
    float,
    Field(
        ge=0,
        description="Wait up to this long for the end or untilPattern.",
    ),
]
UntilPattern = Annotated[
    str | None,
    Field(description="A regex that ends the wait, e.g. 'listening on|error'."),
]


def timeout_s(timeout_ms: float | None) -> float:
    """A command's timeout in seconds (the default when not given, capped at the maximum)."""
    if timeout_ms is None:
        return DEFAULT_RUN_TIMEOUT_MS / 1000
    if timeout_ms <= 0:
        raise ToolFailure("invalid timeout: give the limit in milliseconds, more than 0 (e.g. 30000)")
    return min(float(timeout_ms), MAX_RUN_TIMEOUT_MS) / 1000


def wait_s(wait_ms: float) -> float:
    """A ``waitMs`` in seconds, capped at ``MAX_WAIT_MS``."""
    return min(max(0.0, float(wait_ms)), MAX_WAIT_MS) / 1000


def until_pattern(text: str | None) -> Regex | None:
    """``untilPattern`` compiled on RE2, linear time (None when not given)."""
    if not text:
        return None
    from ...engines.regex import compile_linear

    return compile_linear(text, what="untilPattern")

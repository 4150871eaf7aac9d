"""The parameters the terminal tools share: their limits, their schema types and their checks."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from ...lazy import LazyModule
from ...registry import ToolFailure

if TYPE_CHECKING:
    from ...engines import processes
else:
    processes = LazyModule("mcp_server_ide.engines.processes")

MAX_WAIT_MS = 600_000
DEFAULT_RUN_TIMEOUT_MS = 60_000
MAX_RUN_TIMEOUT_MS = int(processes.MAX_TIMEOUT_S * 1000)
DEFAULT_MAX_OUTPUT = 200_000
MAX_READ_BYTES = 1_000_000

Command = Annotated[
    str, Field(description="The shell command to run (bash syntax; /bin/sh where bash is missing).")
]
Cwd = Annotated[
    str | None,
    Field(
        description="Working directory, relative to the workspace root (default: the root). Must stay inside it."
    ),
]
Env = Annotated[
    dict[str, str] | None,
    Field(
        description="Extra environment variables for the command. The command does not see the server's own "
        "secrets; it gets PATH, HOME, LANG and similar, plus these."
    ),
]
TimeoutMs = Annotated[
    float | None,
    Field(
        description=f"Stop the command after this many milliseconds (default {DEFAULT_RUN_TIMEOUT_MS}, at most "
        f"{MAX_RUN_TIMEOUT_MS}). On timeout the whole process tree is killed and timedOut is true."
    ),
]
MaxOutput = Annotated[
    int | None,
    Field(
        ge=0,
        description=f"Bytes of stdout and of stderr to return, each (default {DEFAULT_MAX_OUTPUT}). Longer output "
        "keeps its beginning and end around a '…[N bytes truncated]…' marker, with truncated true.",
    ),
]
Offset = Annotated[
    int,
    Field(
        ge=0,
        description="Byte offset to read from: 0 for everything kept, or the nextOffset of your previous read "
        "(or the outputOffset a command returned) to get only what is new.",
    ),
]
MaxBytes = Annotated[
    int,
    Field(
        ge=1,
        le=MAX_READ_BYTES,
        description="Read at most this many bytes (default 100000); hasMore tells if more is there.",
    ),
]
WaitMs = Annotated[
    float,
    Field(
        ge=0,
        description=f"Wait up to this many milliseconds (at most {MAX_WAIT_MS}) for it to finish, or for "
        "untilPattern to appear, before answering. 0 answers at once.",
    ),
]
UntilPattern = Annotated[
    str | None,
    Field(
        description="With waitMs: stop waiting as soon as the output after offset matches this regular expression "
        "(e.g. 'listening on|error')."
    ),
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


def until_pattern(text: str | None) -> re.Pattern[str] | None:
    """``untilPattern`` compiled (None when not given)."""
    if not text:
        return None
    try:
        return re.compile(text)
    except re.error as exc:
        raise ToolFailure(f"invalid untilPattern: {exc} (give a Python regular expression)") from None

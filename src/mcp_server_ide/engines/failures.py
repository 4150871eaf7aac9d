"""The failure engines and tools raise when the caller can act on it: :class:`ToolFailure`.

Its message names the rule that was broken and how to fix the call; its ``kind`` says what sort
of failure it is. This module imports nothing of the server and not the MCP SDK, so any layer may
raise it; the registry translates it where it meets the SDK (:func:`~..registry.sdk_error`), and
the REST door maps ``kind`` to an HTTP status (``registry.HTTP_STATUS``).
"""

from __future__ import annotations

from typing import Literal

FailureKind = Literal["invalid", "refused", "not_found", "conflict", "unavailable", "too_large"]


class ToolFailure(Exception):
    """A failure the caller can act on. The message names the rule and the fix.

    ``kind`` chooses the HTTP status on the REST door; MCP always answers ``isError: true``.
    """

    def __init__(self, message: str, kind: FailureKind = "invalid") -> None:
        super().__init__(message)
        self.kind: FailureKind = kind

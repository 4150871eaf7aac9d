"""The context of one tool call, whatever door it came through.

Doors set it before a tool runs; tools and engines read it with :func:`current`.
It carries the workspace the call acts on and the ways to talk back to the caller
(progress, log messages, confirmation through elicitation). A door that cannot do one
of these (the REST door has no channel back) gives a reporter that does nothing, and
``confirm`` answers ``None`` ("could not ask") so the workspace policy decides.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from .workspace import Workspace


_T = TypeVar("_T")


class Reporter(Protocol):
    async def progress(self, done: float, total: float | None = None, message: str | None = None) -> None: ...

    async def log(self, level: str, message: str) -> None: ...

    async def confirm(self, message: str) -> bool | None:
        """True/False is the person's answer; None means the client cannot be asked."""
        ...


class SilentReporter:
    """For doors with no channel back to the caller (REST, CLI)."""

    async def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        return None

    async def log(self, level: str, message: str) -> None:
        return None

    async def confirm(self, message: str) -> bool | None:
        return None


@dataclass
class Call:
    workspace: Workspace
    door: str
    reporter: Reporter = field(default_factory=SilentReporter)
    tool: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    session_id: str | None = None
    structured: bool = False
    """The result goes out as ``structuredContent`` too (``--structured-content``): JSON data, never a
    tool's plain-text form."""
    cancelled: threading.Event = field(default_factory=threading.Event, compare=False)
    """Set when the caller cancels the call: long loops and the process engine stop on it."""
    on_session_end: Callable[[Callable[[], object]], bool] | None = field(default=None, compare=False)
    """Run a callback when the caller's session ends (an HTTP session's DELETE, a closed connection);
    False or None: the door has no such end (REST, stateless HTTP)."""
    grants: frozenset[str] | None = None
    """The scopes the caller's bearer token carries (hosted mode: read, write, run); None: no token
    scopes apply (local mode), every tool may run."""

    def check_cancelled(self) -> None:
        """Raise if the caller cancelled this call (for loops in sync tools and engines)."""
        if self.cancelled.is_set():
            from .engines.failures import ToolFailure

            raise ToolFailure("cancelled: the caller cancelled this call", kind="conflict")


def grants_of(request: object) -> frozenset[str] | None:
    """The token scopes of an HTTP request (a Starlette request, or an MCP ``Context`` of one) that an
    authentication backend let in (the SDK's ``AuthenticatedUser`` in ``scope["user"]``); None when
    no such authentication ran (local mode)."""
    inner = getattr(getattr(request, "request_context", None), "request", None)
    scope = getattr(inner if inner is not None else request, "scope", None)
    if not isinstance(scope, dict):
        return None
    access = getattr(scope.get("user"), "access_token", None)
    scopes = getattr(access, "scopes", None)
    return frozenset(scopes) if isinstance(scopes, list) else None


_CURRENT: ContextVar[Call | None] = ContextVar("mcp_server_ide_call", default=None)


def current() -> Call:
    call = _CURRENT.get()
    if call is None:
        raise RuntimeError("no tool call is in progress (a door must wrap tool calls in `calling`)")
    return call


def current_or_none() -> Call | None:
    return _CURRENT.get()


SEED_SHAPE_DOORS = frozenset({"rest"})
"""Doors whose callers expect the seed's example result shapes in full (field for field, as seed 000
shows them). Every other door (MCP, the CLI) gets the compact shapes: no field equal to its default,
no data twice, no absolute path beside the relative one unless asked."""


def seed_shapes() -> bool:
    """Whether the running call answers in the seed's full example shapes (the REST door) rather than the
    compact ones. The one rule tools and engines consult for it; with no call running (an engine used
    directly), the full shape."""
    call = _CURRENT.get()
    return call is None or call.door in SEED_SHAPE_DOORS


def shaped(full: _T, compact: Callable[[_T], _T]) -> _T:
    """``full`` (the seed's shape) on a seed-shape door, else ``compact(full)``: how a tool whose MCP answer
    is leaner than the seed's says so, without a test of the door of its own."""
    return full if seed_shapes() else compact(full)


@contextmanager
def calling(call: Call) -> Iterator[Call]:
    token = _CURRENT.set(call)
    try:
        yield call
    finally:
        _CURRENT.reset(token)

"""The direct lane: stdio calls of small read-only tools answered without the SDK's per-request machinery.

Every request the SDK serves passes through JSON-RPC models, a task of its own, memory streams,
middleware, two context objects and the ``MCPServer`` tool layers: on this 2-core machine ~0.3 ms
of a 0.45 ms file read (``bench/bench_files.py``), more than the read itself. The reads an assistant
makes most (a small file, a folder listing, a slice) are *inline* tools: bounded, small local I/O
that runs on the event loop, never reports progress and has nothing to cancel. A call the tool's
verdict does not find small (a file over ``INLINE_READ_BYTES``, a walk) goes to the SDK, which runs
it on a thread, so the reader is never held up by it either. The stdio door
answers those straight from its reader with the SDK's own pieces: the tool's argument model, the
same result conversion (``FuncMetadata.convert_result``), the protocol's result sieve
(``serialize_server_result``) and the ``JSONRPCResponse`` model, so the bytes written are the ones
the SDK would write (``tests/test_direct_lane.py`` compares the two lanes call by call).

Everything else, and every request the lane is not sure about, goes to the SDK untouched:

- only after the SDK accepted ``initialize``, on a 2025-era connection (2026-07-28 requests carry
  per-request state in ``_meta``);
- only the plain shape ``{jsonrpc, id, method: "tools/call", params: {name, arguments?, _meta?}}``
  whose ``_meta`` holds at most a ``progressToken`` (an inline tool never reports progress), on a
  line of at most ``MAX_LINE`` bytes (a large write is not parsed twice);
- only tools that are inline (for this call: ``runs_inline``), read-only and not gated on a workspace feature;
- arguments the tool refuses go to the SDK, so the refusal is the SDK's own;
- never when an OpenTelemetry tracer is configured (spans are the SDK's middleware), when a plugin
  added middleware, or when the server has cache hints for ``tools/call``.

``MCP_IDE_DIRECT_LANE=0`` in the environment turns the lane off (every call then takes the SDK's path).
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

import pydantic_core
from mcp.shared.exceptions import MCPError
from mcp_types import JSONRPCError, JSONRPCResponse
from mcp_types import methods as protocol_methods
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..call import Call, SilentReporter
from ..runner import ToolRunner, direct_eligible
from ..surface import lowlevel
from ..surface.clients import clients
from ..surface.state import state_of
from ..workspaces import LocalWorkspaces

if TYPE_CHECKING:
    from mcp.server import MCPServer
    from mcp.server.connection import Connection
    from mcp_types import RequestId

log = logging.getLogger(__name__)

ENV_SWITCH = "MCP_IDE_DIRECT_LANE"
MAX_LINE = 64 * 1024
"""Longer lines go to the SDK unread: the lane's calls are small, and a large write should not be parsed twice."""
_MARK = b'"tools/call"'
_REQUEST_KEYS = frozenset({"jsonrpc", "id", "method", "params"})
_PARAM_KEYS = frozenset({"name", "arguments", "_meta"})
_META_KEYS = frozenset({"progressToken"})


def enabled_by_environment() -> bool:
    return os.environ.get(ENV_SWITCH, "1").strip().lower() not in ("0", "false", "no", "off")


class DirectLane:
    """Answers eligible ``tools/call`` lines of one stdio connection; ``None`` means "the SDK's"."""

    def __init__(self, server: MCPServer, runner: ToolRunner, workspaces: LocalWorkspaces) -> None:
        self.server = server
        self.runner = runner
        self.workspaces = workspaces
        self._clients = clients(server)
        self._state = state_of(server)
        self._usable: bool | None = None  # decided on the first eligible line (after start-up hooks ran)

    def answer(self, line: bytes) -> bytes | None:
        """The response line for ``line``, or None to hand ``line`` to the SDK."""
        if len(line) > MAX_LINE or _MARK not in line:
            return None
        try:
            return self._answer(line)
        except Exception:  # the lane must never cost a request: the SDK answers it instead
            log.exception("the direct lane failed on a request; the SDK answers it")
            return None

    def _answer(self, line: bytes) -> bytes | None:
        request = _plain_tool_call(line)
        if request is None:
            return None
        request_id, name, arguments = request
        spec = self.runner.specs.get(name)
        if spec is None or not direct_eligible(spec):
            return None
        connection = self._connection()
        if connection is None or not self._lane_usable():
            return None
        start_warmup = self._state.start_warmup
        if start_warmup is not None:  # a client that never said initialized: its first call starts it
            start_warmup(connection.client_capabilities, False)
        call = Call(
            workspace=self.workspaces.workspace,
            door="mcp",
            reporter=SilentReporter(),
            tool=name,
            arguments=dict(arguments),
            session_id=lowlevel.connection_key(connection),
        )
        version = connection.protocol_version
        try:
            result = self.runner.direct_call(name, arguments, call)
        except MCPError as exc:
            error = JSONRPCError(jsonrpc="2.0", id=request_id, error=exc.error)
            return error.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
        if result is None:
            return None
        dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        dumped = protocol_methods.serialize_server_result("tools/call", version, dumped)
        response = JSONRPCResponse(jsonrpc="2.0", id=request_id, result=dumped)
        if log.isEnabledFor(logging.DEBUG):
            log.debug("direct lane answered tools/call %s (id %r)", name, request_id)
        return response.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"

    def _connection(self) -> Connection | None:
        """The stdio connection, once the SDK accepted its ``initialize`` on the 2025 era."""
        sessions = self._clients.connected()
        if len(sessions) != 1:
            return None
        connection = lowlevel.session_connection(sessions[0])
        if connection is None or not connection.initialize_accepted:
            return None
        if connection.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return None
        return connection

    def _lane_usable(self) -> bool:
        if self._usable is None:
            self._usable = self._decide()
        return self._usable

    def _decide(self) -> bool:
        low = lowlevel.lowlevel(self.server)
        if low.cache_hints.get("tools/call") is not None:
            log.info("direct lane off: the server has cache hints for tools/call")
            return False
        transparent = state_of(self.server).transparent
        for middleware in low.middleware:
            kind = lowlevel.sdk_middleware_kind(middleware)
            if middleware in transparent or kind == "request-state":
                continue  # ours, and the SDK's sealing of 2026-era requestState (none on the lane)
            if kind == "tracing" and not _tracing():
                continue
            log.info("direct lane off: %r wraps every request", middleware)
            return False
        return True


def _plain_tool_call(line: bytes) -> tuple[RequestId, str, dict[str, Any]] | None:
    """``(id, tool name, arguments)`` of a plain ``tools/call`` request line, else None."""
    try:
        message = pydantic_core.from_json(line)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.keys() != _REQUEST_KEYS:
        return None
    if message["jsonrpc"] != "2.0" or message["method"] != "tools/call":
        return None
    request_id = message["id"]
    if type(request_id) not in (int, str):  # bool is an int to Python, not to JSON-RPC
        return None
    params = message["params"]
    if not isinstance(params, dict) or not params.keys() <= _PARAM_KEYS:
        return None
    name = params.get("name")
    arguments = params.get("arguments", {})
    meta = params.get("_meta", {})
    if not isinstance(name, str) or not isinstance(arguments, dict):
        return None
    if not isinstance(meta, dict) or not meta.keys() <= _META_KEYS:
        return None
    return request_id, name, arguments


def _tracing() -> bool:
    """True when an OpenTelemetry tracer provider is configured (the SDK's spans then record)."""
    try:
        from opentelemetry import trace
    except ImportError:
        return False
    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)

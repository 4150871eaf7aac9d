"""Answer what was asked before stdin closed: the client's requests still running at end of input.

A client that writes its requests and closes stdin (``printf '...' | mcp-server-ide``, a script,
a client shutting down after its last call) would otherwise get ``Connection closed`` for every
call still running: the SDK cancels in-flight requests as soon as its read stream ends. Here the
end of input is held back from the SDK until every request read has been answered (or cancelled
by the client), for at most :data:`GRACE_S`; a SIGTERM still stops everything at once.

Only the client's requests are counted (what the SDK reads, and the answers it writes for them);
requests the server sends the client (roots, elicitation, sampling) cannot be answered after end
of input, so a tool waiting on one ends with the grace.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio
from mcp.types import JSONRPCError, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

from .wrapped import WrappedReader, WrappedWriter

if TYPE_CHECKING:
    from mcp.shared.message import SessionMessage

    from ..surface.lowlevel import MessageReader, MessageWriter

GRACE_S = 10.0
"""How long end of input waits for the requests still running (a client that wants them dropped
sends SIGTERM, or cancels them)."""


class InFlight:
    """The ids of the client's requests read and not yet answered."""

    def __init__(self) -> None:
        self._open: set[str | int] = set()
        self._idle = anyio.Event()
        self._idle.set()

    def read(self, item: SessionMessage | Exception) -> None:
        if isinstance(item, Exception):
            return
        message = item.message
        if isinstance(message, JSONRPCRequest):
            self._open.add(message.id)
            self._idle = anyio.Event() if self._idle.is_set() else self._idle
        elif isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
            request_id = (message.params or {}).get("requestId")
            if isinstance(request_id, (str, int)):
                self._answered(request_id)

    def written(self, item: SessionMessage) -> None:
        message = item.message
        if isinstance(message, (JSONRPCResponse, JSONRPCError)) and message.id is not None:
            self._answered(message.id)

    def _answered(self, request_id: str | int) -> None:
        self._open.discard(request_id)
        if not self._open:
            self._idle.set()

    async def drained(self, grace_s: float = GRACE_S) -> None:
        """Return once every request read is answered, or after ``grace_s``."""
        with anyio.move_on_after(grace_s):
            await self._idle.wait()


class CountedReader(WrappedReader):
    """The SDK's read stream, counting requests, with its end held until they are answered."""

    def __init__(self, inner: MessageReader, inflight: InFlight) -> None:
        super().__init__(inner)
        self.inflight = inflight

    async def receive(self) -> SessionMessage | Exception:
        try:
            item = await self.inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            await self.inflight.drained()
            raise
        self.inflight.read(item)
        return item


class CountedWriter(WrappedWriter):
    """The SDK's write stream, marking each answer to a client request as it goes out."""

    def __init__(self, inner: MessageWriter, inflight: InFlight) -> None:
        super().__init__(inner)
        self.inflight = inflight

    async def send(self, item: SessionMessage, /) -> None:
        await self.inner.send(item)
        self.inflight.written(item)

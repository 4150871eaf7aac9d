"""Read deadlines and a connection cap for the HTTP doors (uvicorn's h11 protocol, bounded).

uvicorn closes a connection idle between requests (keep-alive, after ``keep_alive`` seconds), but
not one that sends its request head a byte at a time: such a connection stays open forever, and
enough of them use up the process's descriptors. Here every request head must arrive within
``header_timeout`` of the connection opening (on a kept-alive connection: of the next request's first
byte), and at most ``max_connections`` connections are open at once: one more is closed as soon as
it is accepted.

``keep_alive`` is longer than the clients' own pool expiry (httpx, which the MCP SDK uses, drops an
idle connection after 5 s; uvicorn's default is also 5 s): with equal timeouts, a client sending its
next request just as the server closes the idle connection got "connection closed without
response" for a request the server never saw (the hosted load test found 1,183 in 100,000 calls).
The body's deadline is the guard's (:mod:`.guard`), which reads every body before a door does.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

DEFAULT_HEADER_TIMEOUT_S = 10.0
DEFAULT_BODY_TIMEOUT_S = 30.0
DEFAULT_MAX_CONNECTIONS = 256
DEFAULT_KEEP_ALIVE_S = 65


@dataclass(frozen=True)
class ConnectionLimits:
    header_timeout: float = DEFAULT_HEADER_TIMEOUT_S
    body_timeout: float = DEFAULT_BODY_TIMEOUT_S
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    keep_alive: int = DEFAULT_KEEP_ALIVE_S


def bounded_protocol(limits: ConnectionLimits) -> type[H11Protocol]:
    """uvicorn's h11 protocol with a request-head deadline and a cap on open connections."""

    class BoundedH11Protocol(H11Protocol):
        _head_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:
            super().connection_made(transport)
            if len(self.connections) > limits.max_connections:
                transport.abort()  # over the cap: refused before a byte is read
                return
            self._arm_head_deadline()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm_head_deadline()
            super().connection_lost(exc)

        def handle_events(self) -> None:
            super().handle_events()
            if self.conn.their_state is not h11.IDLE:  # the head is in (or the connection is over)
                self._disarm_head_deadline()

        def data_received(self, data: bytes) -> None:
            if self._head_timer is None and self.conn.their_state is h11.IDLE:
                self._arm_head_deadline()  # the next request on a kept-alive connection: from its first byte
            super().data_received(data)

        def _arm_head_deadline(self) -> None:
            self._disarm_head_deadline()
            self._head_timer = self.loop.call_later(limits.header_timeout, self._head_too_slow)

        def _disarm_head_deadline(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_too_slow(self) -> None:
            self._head_timer = None
            if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
                self.transport.close()

    return BoundedH11Protocol

"""Resumable Streamable HTTP streams: each session keeps its recent SSE events for a reconnecting client.

A client whose SSE stream drops (a proxy timeout, a laptop lid, the server closing a stream for
polling) reconnects with ``Last-Event-ID`` and gets what it missed, in order, then the live stream
(MCP 2025-11-25 "Resumability and Redelivery"; VS Code does this). The SDK asks an ``EventStore``
for that, but hands every session the same one and names streams by request id (``"1"``,
``"_GET_stream"``), which two sessions share: one store for all would replay one client's events
to another. So each session gets a store of its own (:func:`~..surface.lowlevel.per_session_event_stores`).

Bounds: a session keeps its last ``MAX_EVENTS`` events (all its streams together), at most
``MAX_BYTES`` of them (a few large file reads must not pin gigabytes), for at most ``MAX_AGE`` seconds.
Events leave oldest first, so a kept event has every later one of its stream kept too; a reconnect after
an event that was dropped replays nothing rather than a stream with a hole in it (the client then starts
that request again). Events are kept as their JSON (what their size is counted by) and read back only to
be replayed. Event ids are opaque numbers in the order they were stored.
"""

from __future__ import annotations

import time
from collections import OrderedDict

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp_types import JSONRPCMessage, jsonrpc_message_adapter

MAX_EVENTS = 512
MAX_BYTES = 32 * 1024 * 1024
MAX_AGE = 600.0


class SessionEventStore(EventStore):
    """The recent SSE events of one Streamable HTTP session, by event id."""

    def __init__(
        self, max_events: int = MAX_EVENTS, max_age: float = MAX_AGE, max_bytes: int = MAX_BYTES
    ) -> None:
        self.max_events = max_events
        self.max_age = max_age
        self.max_bytes = max_bytes
        self._next = 0
        self._bytes = 0
        self._events: OrderedDict[str, tuple[StreamId, bytes | None, float]] = OrderedDict()

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        self._next += 1
        event_id = str(self._next)
        data = (
            None if message is None else message.model_dump_json(by_alias=True, exclude_unset=True).encode()
        )
        now = time.monotonic()
        self._events[event_id] = (stream_id, data, now)
        self._bytes += len(data or b"")
        self._trim(now)
        return event_id

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        self._trim(time.monotonic())
        found = self._events.get(last_event_id)
        if found is None:
            return None  # unknown, or already dropped: replaying would hide the gap
        stream_id = found[0]
        after = False
        for event_id, (stream, data, _) in list(self._events.items()):
            if event_id == last_event_id:
                after = True
                continue
            if after and stream == stream_id and data is not None:
                await send_callback(EventMessage(jsonrpc_message_adapter.validate_json(data), event_id))
        return stream_id

    @property
    def size(self) -> int:
        """Events kept (no ``__len__``: the SDK tests a store for truth, and an empty one must pass)."""
        return len(self._events)

    @property
    def bytes(self) -> int:
        """The size of the kept events' JSON."""
        return self._bytes

    def _trim(self, now: float) -> None:
        events = self._events
        while events:
            _, (_, data, stored) = next(iter(events.items()))
            if (
                len(events) <= self.max_events
                and self._bytes <= self.max_bytes
                and now - stored <= self.max_age
            ):
                break
            events.popitem(last=False)
            self._bytes -= len(data or b"")

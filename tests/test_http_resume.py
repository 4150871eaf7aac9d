"""Resumable Streamable HTTP (doors/eventstore.py): a client that lost its SSE stream reconnects with
``Last-Event-ID`` and gets what it missed, and only its own session's events.

A real server over real HTTP: a session subscribes to a file, opens its standalone SSE stream, gets
the first change with its event id and drops the connection; the file changes again while nobody
listens; the reconnect with that id delivers the ``notifications/resources/updated`` it missed. Another
session presenting the same id gets nothing of the first session's.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from .support.net import open_session

VERSION = "2025-11-25"  # resumability (priming events) starts with this protocol version


def _subscribe(http: httpx.Client, headers: dict[str, str], uri: str) -> None:
    body = {"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": uri}}
    r = http.post("/mcp", json=body, headers=headers)
    assert r.status_code == 200, r.text


def _events(
    http: httpx.Client, headers: dict[str, str], *, until: str | None, seconds: float
) -> list[dict[str, Any]]:
    """SSE events of a GET stream (``{"id", "data"}``), read until one's data has ``until`` or time is up."""
    events: list[dict[str, Any]] = []
    current: dict[str, Any] = {}
    deadline = time.monotonic() + seconds
    try:
        with http.stream(
            "GET", "/mcp", headers={**headers, "Accept": "text/event-stream"}, timeout=seconds
        ) as r:
            assert r.status_code == 200, r.read()
            for line in r.iter_lines():
                if line.startswith("id:"):
                    current["id"] = line[3:].strip()
                elif line.startswith("data:"):
                    current["data"] = line[5:].strip()
                elif line == "" and current:
                    events.append(current)
                    current = {}
                    if until is None or until in events[-1].get("data", ""):
                        break
                if time.monotonic() > deadline:
                    break
    except httpx.ReadTimeout:
        pass
    return events


def test_a_reconnect_with_last_event_id_gets_what_it_missed(ws_path: Path, http_server: Any) -> None:
    watched = ws_path / "watched.txt"
    watched.write_text("one\n")
    uri = watched.as_uri()
    server = http_server(ws_path)
    with httpx.Client(base_url=server.url, timeout=10) as http:
        headers = open_session(http, VERSION)
        _subscribe(http, headers, uri)
        # The standalone stream carries the first change, with its event id; then we hang up.
        threading.Timer(0.5, watched.write_text, args=("two\n",)).start()
        first = _events(http, headers, until="resources/updated", seconds=8)
        seen = [e for e in first if "resources/updated" in e.get("data", "")]
        assert seen and seen[0].get("id"), first
        last_id = seen[0]["id"]

        time.sleep(0.3)
        watched.write_text("three\n")  # changes while no stream is open
        time.sleep(1.5)  # the watcher notices, the server stores the notification

        missed = _events(http, {**headers, "Last-Event-ID": last_id}, until="resources/updated", seconds=8)
        updates = [e for e in missed if "resources/updated" in e.get("data", "")]
        assert updates, missed
        assert json.loads(updates[0]["data"])["params"]["uri"] == uri
        assert int(updates[0]["id"]) > int(last_id), missed

        # Another session presenting that id gets none of the first session's events.
        other = open_session(http, VERSION)
        stolen = _events(http, {**other, "Last-Event-ID": last_id}, until="resources/updated", seconds=2)
        assert not [e for e in stolen if "resources/updated" in e.get("data", "")], stolen


def test_a_post_stream_starts_with_a_priming_event_that_says_when_to_reconnect(
    ws_path: Path, http_server: Any
) -> None:
    server = http_server(ws_path)
    with httpx.Client(base_url=server.url, timeout=10) as http:
        headers = open_session(http, VERSION)
        call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "list_files_in_folder"}}
        r = http.post("/mcp", json=call, headers=headers)
    assert r.headers["content-type"].startswith("text/event-stream"), r.text
    first, second = r.text.replace("\r\n", "\n").split("\n\n")[:2]
    fields = dict(line.split(":", 1) for line in first.splitlines())
    assert fields["id"].strip() and fields["data"].strip() == "" and fields["retry"].strip() == "1000", first
    assert '"id":3' in second and "id:" in second  # the answer, with an event id a reconnect can name


def test_the_event_store_replays_one_stream_in_order_and_never_across_a_gap() -> None:
    import anyio
    from mcp_types import JSONRPCNotification

    from mcp_server_ide.doors.eventstore import SessionEventStore

    def note(n: int) -> JSONRPCNotification:
        return JSONRPCNotification(jsonrpc="2.0", method=f"notifications/n{n}")

    async def scenario() -> None:
        store = SessionEventStore(max_events=4)
        first = await store.store_event("a", None)  # a priming event: an id, nothing to replay
        await store.store_event("b", note(1))
        await store.store_event("a", note(2))
        await store.store_event("a", note(3))
        sent: list[str] = []

        async def send(event: Any) -> None:
            sent.append(event.message.method)

        assert await store.replay_events_after(first, send) == "a"
        assert sent == ["notifications/n2", "notifications/n3"]  # stream a only, in order
        assert await store.replay_events_after("no-such-id", send) is None
        await store.store_event("b", note(4))  # the fifth event: the priming one is dropped
        sent.clear()
        assert await store.replay_events_after(first, send) is None  # a gap: nothing rather than a hole
        assert sent == [] and store.size == 4

        # A byte budget: a large answer pushes out the oldest events, itself last of all.
        small = SessionEventStore(max_bytes=300)
        early = await small.store_event("c", note(5))
        await small.store_event("c", note(6))
        assert await small.replay_events_after(early, send) == "c"
        big = JSONRPCNotification(jsonrpc="2.0", method="notifications/big", params={"text": "x" * 200})
        await small.store_event("c", big)
        assert small.bytes <= 300 and await small.replay_events_after(early, send) is None  # dropped, FIFO
        huge = JSONRPCNotification(jsonrpc="2.0", method="notifications/huge", params={"text": "x" * 500})
        await small.store_event("c", huge)
        assert small.size == 0 and small.bytes == 0  # too big to keep: nothing kept, no hole

    anyio.run(scenario)

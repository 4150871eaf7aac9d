"""The scale-out event store (``hosted/scaleout.py``) on a real Redis server (Debian's redis-server on a
free loopback port): what a reconnecting client is replayed, and how a resumed request stream ends
when the worker running the request answers, or has stopped. Fast; the whole cluster (PostgreSQL,
HAProxy, two workers) is ``tests/test_hosted_scaleout.py`` (marker ``scaleout``).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from mcp.server.streamable_http import GET_STREAM_KEY, EventMessage
from mcp_types import JSONRPCError, JSONRPCNotification, JSONRPCResponse

from mcp_server_ide.hosted import scaleout
from tests.support.services import Service, start_redis

pytestmark = pytest.mark.anyio

_sessions = itertools.count()


@pytest.fixture(scope="module")
def redis() -> Iterator[Service]:
    service = start_redis()
    try:
        yield service
    finally:
        service.stop()


def worker(redis: Service, name: str) -> scaleout.ScaleOut:
    return scaleout.ScaleOut(None, redis.url, name=name, prefix=f"t{next(_sessions)}:")  # pyright: ignore[reportArgumentType]


def note(n: int) -> JSONRPCNotification:
    return JSONRPCNotification(jsonrpc="2.0", method="notifications/progress", params={"progress": n})


async def replay(store: scaleout.RedisEventStore, after: str) -> tuple[str | None, list[Any]]:
    got: list[EventMessage] = []

    async def keep(event: EventMessage) -> None:
        got.append(event)

    with anyio.fail_after(30):
        stream = await store.replay_events_after(after, keep)
    return stream, [e.message for e in got]


async def test_a_reconnect_is_replayed_its_own_streams_events_after_its_last_one(redis: Service):
    a = worker(redis, "a")
    await a._beat()
    store = scaleout.RedisEventStore(a, "s1")
    prime = await store.store_event("7", None)
    first = await store.store_event("7", note(1))
    await store.store_event(GET_STREAM_KEY, note(99))  # another stream of the session
    await store.store_event("7", note(2))
    done = JSONRPCResponse(jsonrpc="2.0", id=7, result={})
    await store.store_event("7", done)
    assert await replay(store, first) == ("7", [note(2), done])
    assert await replay(store, prime) == ("7", [note(1), note(2), done])
    assert await replay(store, "1-0") == (None, [])  # unknown: nothing rather than a gap
    assert await replay(store, "not an id") == (None, [])
    other = scaleout.RedisEventStore(a, "s2")  # another session never sees these
    assert await replay(other, first) == (None, [])
    await a.redis.aclose()


async def test_a_resumed_stream_follows_the_request_on_the_worker_still_running_it(redis: Service):
    runner, resumer = worker(redis, "runner"), worker(redis, "resumer")
    resumer.prefix = runner.prefix  # two workers of one service
    await runner._beat()
    at_runner = scaleout.RedisEventStore(runner, "s")
    at_resumer = scaleout.RedisEventStore(resumer, "s")
    prime = await at_runner.store_event("3", None)
    done = JSONRPCResponse(jsonrpc="2.0", id=3, result={"content": []})

    async def answer_later() -> None:
        await anyio.sleep(0.5)
        await at_runner.store_event("3", note(1))
        await at_runner.store_event("3", done)

    async with anyio.create_task_group() as tg:
        tg.start_soon(answer_later)
        assert await replay(at_resumer, prime) == ("3", [note(1), done])
    await runner.redis.aclose()
    await resumer.redis.aclose()


async def test_a_resumed_stream_of_a_request_whose_worker_stopped_ends_with_an_error(redis: Service):
    gone, resumer = worker(redis, "gone"), worker(redis, "resumer")
    resumer.prefix = gone.prefix
    at_gone = scaleout.RedisEventStore(gone, "s")
    prime = await at_gone.store_event("5", None)  # "gone" has no heartbeat: it stopped
    await at_gone.store_event("5", note(1))
    stream, messages = await replay(scaleout.RedisEventStore(resumer, "s"), prime)
    assert stream == "5" and messages[0] == note(1)
    error = messages[-1]
    assert isinstance(error, JSONRPCError) and error.id == 5
    assert "stopped before it answered" in error.error.message
    # The error is stored too: a client reconnecting again is told the same.
    _, again = await replay(scaleout.RedisEventStore(resumer, "s"), prime)
    assert again == messages
    await gone.redis.aclose()
    await resumer.redis.aclose()


async def test_an_orphaned_call_is_answered_with_its_ids_json_type(redis: Service):
    """A request whose id is the string "5" (its stream is named "5", as a numeric 5's would be) is
    answered with the string, and a numeric id with the number."""
    gone, resumer = worker(redis, "gone"), worker(redis, "resumer")
    resumer.prefix = gone.prefix
    await gone.keep_request_id("s", "5")
    at_gone = scaleout.RedisEventStore(gone, "s")
    text = await at_gone.store_event("5", None)
    number = await scaleout.RedisEventStore(gone, "n").store_event("5", None)
    _, messages = await replay(scaleout.RedisEventStore(resumer, "s"), text)
    assert isinstance(messages[-1], JSONRPCError) and messages[-1].id == "5"
    _, messages = await replay(scaleout.RedisEventStore(resumer, "n"), number)
    assert isinstance(messages[-1], JSONRPCError) and messages[-1].id == 5
    await gone.redis.aclose()
    await resumer.redis.aclose()


async def test_an_event_redis_does_not_take_is_still_given_an_id(redis: Service):
    from tests.support.net import free_port

    down = scaleout.ScaleOut(None, f"redis://127.0.0.1:{free_port()}/0", name="w")  # pyright: ignore[reportArgumentType]
    store = scaleout.RedisEventStore(down, "s")
    assert await store.store_event("1", note(1)) == "unstored-1"
    assert await store.replay_events_after("unstored-1", lambda _e: anyio.sleep(0)) is None
    await down.redis.aclose()


def test_a_worker_with_redis_but_sqlite_warns_at_start(redis: Service, tmp_path):
    """SQLite is only shared by workers on one machine: --redis without --database says so at start
    (which hosts the other workers run on is not something a worker can see, so it warns, not refuses)."""
    from tests.support.hosted import start_hosted

    data = tmp_path / "data"
    worker = start_hosted(data, "--redis", redis.url, timeout=120)
    try:
        log = worker.log_path.read_text()
    finally:
        worker.stop()
    assert "warning: --redis without --database postgresql://" in log, log
    assert "only workers on this one machine can share" in log

"""Several workers behind a load balancer: Streamable HTTP sessions any worker serves (``--redis URL``).

The SDK's ``StreamableHTTPSessionManager`` keeps each session in process memory: a request that
names a session another worker opened would be answered 404, and a killed worker would take its
sessions with it. Peers solve this either with sticky routing plus forwarding every request to the
session's owning worker over Redis (the owner stays a single point of failure), or with stateless
HTTP (which gives up server-to-client messages and resumable streams). Here, instead, a session is a
record in Redis from which any worker rebuilds it:

- **The session record** (``{prefix}s:{id}``, expiring after the SDK's idle timeout, renewed by
  requests): the negotiated protocol version, the client's ``initialize`` params (its capabilities
  and info) and the caller the session is bound to (the SDK's ``AuthorizationContext``). It is
  written when ``initialize`` succeeds, before the answer leaves, so the client's next request finds
  it on any worker.
- **Any worker serves any request.** A request naming a session this worker does not hold makes it
  rebuild one from the record (:func:`~..surface.lowlevel.restore_session`): a transport with the same
  id and a server connection that starts initialized, with the record's version and client params.
  A caller other than the session's gets the SDK's own 404, as for an unknown session. The worker
  keeps its copy while it is used, and drops it after the idle timeout as the SDK does. ``DELETE``
  removes the record and tells every worker (``{prefix}ctl``) to drop its copy.
- **Events in Redis** (the SDK's ``EventStore``, :class:`RedisEventStore`): each session's SSE events
  are one Redis stream (``{prefix}ev:{id}``; the last ``MAX_EVENTS``, for ``MAX_AGE`` seconds), so a
  client reconnecting with ``Last-Event-ID`` is replayed what it missed by whichever worker the
  balancer picks. A resumed request stream then follows the Redis stream until the request's answer
  is there; if the worker running the request has stopped (its heartbeat key ``{prefix}w:{name}``,
  renewed every second, lapses after ``HEARTBEAT_TTL``), it ends the stream with an error naming
  that, so the client's call fails at once rather than waiting forever.
- **Cross-worker notifications** (Redis pub/sub, ``{prefix}ch:{id}``): a message a session's server
  sends on its standalone channel (``list_changed``, ``resources/updated``, log messages) on a worker
  that does not hold the client's GET stream is published; the worker holding it forwards it there.
- **Files** are not here: every worker mounts the same ``--data`` folder (a shared volume; one machine's
  folder in the tests), and the store is PostgreSQL (``--database``).
- ``/readyz`` answers 503 while Redis does not answer (as it does while the store does not); a
  request that needs a session record then gets 503, and an event Redis does not take is still
  delivered live (only its replay is lost).

- **Broadcasts** (``tools/list_changed``, ``resources/list_changed``: :class:`~..surface.clients.Clients`
  ``relay``) are published on ``{prefix}bc``; every other worker tells its own clients.

What runs stays in one worker: a project's terminals, jobs, language servers and debugging sessions;
what a session sets with a request (``logging/setLevel``, resource subscriptions, roots), kept by its
copy on the worker that served it; and a server-to-client request (sampling, elicitation,
``roots/list``), whose answer must reach the worker that asked. Hence **project affinity** at the
balancer (deploy/scaleout.sh: HAProxy hashes the project id of ``/p/{project}/…``, consistent
hashing): every request of a project, from any session, reaches one worker while it is up. When it
stops, its projects (only) move to other workers, where their sessions are rebuilt from their
records; its jobs, terminals, language servers and debugging sessions end with it, and the sessions'
per-worker settings start again from their defaults. A session held by two workers at once may be
told of a broadcast twice; a resumed GET stream can miss a standalone message sent in the instant
between its replay and its taking over.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.streamable_http import (
    GET_STREAM_KEY,
    EventCallback,
    EventId,
    EventMessage,
    EventStore,
    StreamId,
)
from mcp.shared.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)
from mcp_types import (
    INTERNAL_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..surface import lowlevel
from ..surface.clients import clients
from . import responses
from .sessionsettings import METHODS as SETTING_METHODS
from .sessionsettings import SessionSettings

if TYPE_CHECKING:
    from mcp.server import MCPServer
    from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
    from mcp.server.context import CallNext, HandlerResult

    from ..surface.lowlevel import RequestContext

log = logging.getLogger(__name__)

PREFIX = "mcp-ide:"
MAX_EVENTS = 512
MAX_AGE = 600.0
SESSION_TTL = 30 * 60.0
"""How long a session record lives without a request (the SDK's default idle timeout)."""
HEARTBEAT_EVERY = 1.0
HEARTBEAT_TTL = 5.0
"""A worker whose heartbeat is this old has stopped (a busy event loop must not look stopped)."""
RENEW_EVERY = 30.0
WORKER_HEADER = b"x-mcp-ide-worker"

ORPHANED = (
    "the worker serving this request stopped before it answered (its session continues on another "
    "worker): call it again"
)

_ADD_EVENT = """
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 's', ARGV[2], 'd', ARGV[3], 'w', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
if ARGV[3] == '' then
  redis.call('HSETNX', KEYS[3], ARGV[2], ARGV[4])
  redis.call('PEXPIRE', KEYS[3], ARGV[5])
elseif ARGV[2] == ARGV[6] then
  redis.call('PUBLISH', KEYS[2], cjson.encode({id, ARGV[2], ARGV[4], ARGV[3]}))
end
return id
"""
"""Store one event (a Redis stream entry: stream, data, worker); a priming event (no data) names the
worker running that request, unless one is named already; a standalone-stream event is published."""


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class ScaleOut:
    """One worker's part: the session records, its heartbeat, the relay of other workers' messages."""

    def __init__(self, server: MCPServer, url: str, name: str | None = None, prefix: str = PREFIX) -> None:
        from redis.asyncio import Redis

        self.server = server
        # Any: redis-py types every answer as a union (bytes or str, by decode_responses, and the
        # sync/async twins); this client answers bytes, which is what the code below reads.
        self.redis: Any = Redis.from_url(url, health_check_interval=30)
        self.name = name or worker_name()
        self.prefix = prefix
        self._add_event = self.redis.register_script(_ADD_EVENT)
        self.settings = SessionSettings(server, self.redis, prefix)
        self._renewed: dict[str, float] = {}
        self.unstored = 0
        self._restoring = anyio.Lock()
        """Events Redis did not take (delivered live, not resumable)."""

    # -- keys ---------------------------------------------------------------------------------
    def session_key(self, sid: str) -> str:
        return f"{self.prefix}s:{sid}"

    def events_key(self, sid: str) -> str:
        return f"{self.prefix}ev:{sid}"

    def runners_key(self, sid: str) -> str:
        return f"{self.prefix}run:{sid}"

    def ids_key(self, sid: str) -> str:
        return f"{self.prefix}id:{sid}"

    def channel(self, sid: str) -> str:
        return f"{self.prefix}ch:{sid}"

    @property
    def broadcasts(self) -> str:
        return f"{self.prefix}bc"

    def worker_key(self, name: str) -> str:
        return f"{self.prefix}w:{name}"

    # -- wiring -------------------------------------------------------------------------------
    def install(self) -> None:
        """Hook the server's session manager (after the HTTP app is built) and its middleware."""
        lowlevel.session_event_stores_by_id(self.server, lambda sid: RedisEventStore(self, sid))
        lowlevel.serve_unknown_sessions(self.server, self.restore, self.after_request)
        self.server.middleware.append(self.record_session)
        clients(self.server).relay = self.publish_broadcast

    def wrap(self, app: ASGIApp) -> ASGIApp:
        """Name this worker on every HTTP answer (``x-mcp-ide-worker``), for operators and tests."""
        name = self.name.encode()

        async def named(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            if scope["path"] == "/readyz" and not await self._redis_answers():
                await responses.send_bytes(
                    send,
                    503,
                    b'{"status":"unavailable","error":"redis does not answer"}',
                    [(WORKER_HEADER, name)],
                )
                return

            async def send_named(message: Message) -> None:
                if message["type"] == "http.response.start":
                    message = {**message, "headers": [*message.get("headers", []), (WORKER_HEADER, name)]}
                await send(message)

            await app(scope, receive, send_named)

        return named

    async def _redis_answers(self) -> bool:
        try:
            with anyio.fail_after(5):
                await self.redis.ping()
        except Exception:
            return False
        return True

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Check Redis answers, then keep the heartbeat and the relay going while the worker serves."""
        await self.redis.ping()
        await self._beat()
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._heartbeat)
            tg.start_soon(self._relay)
            try:
                yield
            finally:
                tg.cancel_scope.cancel()
        with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
            await self.redis.delete(self.worker_key(self.name))
            await self.redis.aclose()

    # -- session records ----------------------------------------------------------------------
    async def record_session(self, ctx: RequestContext, call_next: CallNext) -> HandlerResult:
        connection = lowlevel.connection_of(ctx)
        sid = connection.session_id if connection is not None else None
        if sid:
            self.settings.restore(ctx, sid)
            if isinstance(ctx.request_id, str):
                await self.keep_request_id(sid, ctx.request_id)
        result = await call_next(ctx)
        if sid and ctx.method in SETTING_METHODS:
            with contextlib.suppress(Exception):  # without it, a rebuilt session starts from the defaults
                await self.settings.keep(sid, ctx.method, ctx.params, int(SESSION_TTL * 1000))
        if ctx.method != "initialize":
            return result
        if not sid or not isinstance(result, dict) or not ctx.params:
            return result
        record = {
            "version": result.get("protocolVersion"),
            "params": dict(ctx.params),
            "owner": _requestor(ctx),
            "created": time.time(),
        }
        await self.redis.set(self.session_key(sid), json.dumps(record), px=int(SESSION_TTL * 1000))
        self._renewed[sid] = time.monotonic()
        return result

    async def keep_request_id(self, sid: str, request_id: str) -> None:
        """A string id, as JSON (``{prefix}id:{sid}``), so an orphaned call is answered with the same id
        ("5" stays a string; the SDK names the request's stream ``str(id)``, which a number shares)."""
        key = self.ids_key(sid)
        with contextlib.suppress(Exception):  # without it, an orphaned call is answered by its text
            await self.redis.hset(key, request_id, json.dumps(request_id))
            await self.redis.pexpire(key, int(MAX_AGE * 1000))

    async def request_id(self, sid: str, stream_id: str) -> int | str:
        """The JSON-RPC id of the request a stream is named after, with its JSON type."""
        kept = await self.redis.hget(self.ids_key(sid), stream_id)
        if kept is not None:
            found = json.loads(kept)
            if isinstance(found, int | str):
                return found
        try:
            return int(stream_id)
        except ValueError:
            return stream_id

    async def restore(self, sid: str, requestor: AuthorizationContext | None) -> bool:
        async with self._restoring:  # two requests of one session arriving at once rebuild it once
            if lowlevel.holds_session(self.server, sid):
                return True
            raw = await self.redis.get(self.session_key(sid))
            if raw is None:
                return False
            record = json.loads(raw)
            if record.get("owner") != (dict(requestor) if requestor is not None else None):
                return False  # another caller's session: the SDK answers as for an unknown one
            await self.settings.load(sid)
            await lowlevel.restore_session(
                self.server, sid, requestor, record["version"], record["params"], RedisEventStore(self, sid)
            )
        log.info("serving session %s opened on another worker", sid[:16])
        return True

    async def after_request(self, sid: str, method: Any) -> None:
        if method == "DELETE" and not lowlevel.holds_session(self.server, sid):
            self._renewed.pop(sid, None)
            self.settings.forget(sid)
            await self.redis.delete(
                self.session_key(sid),
                self.events_key(sid),
                self.runners_key(sid),
                self.ids_key(sid),
                self.settings.key(sid),
            )
            await self.redis.publish(f"{self.prefix}ctl", json.dumps({"end": sid, "worker": self.name}))
            return
        now = time.monotonic()
        if now - self._renewed.get(sid, 0.0) >= RENEW_EVERY and lowlevel.holds_session(self.server, sid):
            self._renewed[sid] = now
            await self.redis.pexpire(self.session_key(sid), int(SESSION_TTL * 1000))
            await self.redis.pexpire(self.settings.key(sid), int(SESSION_TTL * 1000))

    # -- broadcasts (tools/list_changed, resources/list_changed, ...) ---------------------------
    async def publish_broadcast(self, event: ServerEvent) -> None:
        """Tell the other workers of a change every client is told of (their clients are told too)."""
        kind = _BROADCASTS.get(type(event))
        if kind is not None:
            uri = event.uri if isinstance(event, ResourceUpdated) else None
            await self.redis.publish(
                self.broadcasts, json.dumps({"kind": kind, "uri": uri, "worker": self.name})
            )

    def _deliver_broadcast(self, told: dict[str, Any]) -> None:
        if told.get("worker") == self.name:
            return
        kind = told.get("kind")
        if kind == "updated":
            event: ServerEvent = ResourceUpdated(uri=str(told.get("uri")))
        elif kind == "tools":
            event = ToolsListChanged()
        elif kind == "resources":
            event = ResourcesListChanged()
        elif kind == "prompts":
            event = PromptsListChanged()
        else:
            return
        registry = clients(self.server)
        registry.broadcast(event, sessions=registry.connected())  # the given sessions: not relayed again

    # -- events -------------------------------------------------------------------------------
    async def add_event(self, sid: str, stream_id: str, data: bytes) -> str:
        found = await self._add_event(
            keys=[self.events_key(sid), self.channel(sid), self.runners_key(sid)],
            args=[MAX_EVENTS, stream_id, data, self.name, int(MAX_AGE * 1000), GET_STREAM_KEY],
        )
        return found.decode() if isinstance(found, bytes) else str(found)

    async def runner_alive(self, sid: str, stream_id: str) -> bool:
        runner = await self.redis.hget(self.runners_key(sid), stream_id)
        if runner is None:
            return False
        return bool(await self.redis.exists(self.worker_key(runner.decode())))

    # -- background ---------------------------------------------------------------------------
    async def _beat(self) -> None:
        await self.redis.set(self.worker_key(self.name), b"1", px=int(HEARTBEAT_TTL * 1000))

    async def _heartbeat(self) -> None:
        while True:
            await anyio.sleep(HEARTBEAT_EVERY)
            try:
                await self._beat()
            except Exception:
                log.warning("cannot renew this worker's heartbeat in Redis", exc_info=True)
            old = time.monotonic() - SESSION_TTL
            for sid in [sid for sid, at in self._renewed.items() if at < old]:
                self._renewed.pop(sid, None)

    async def _relay(self) -> None:
        while True:
            try:
                await self._relay_once()
            except anyio.get_cancelled_exc_class():
                raise
            except Exception:
                log.warning("the Redis relay stopped; starting it again", exc_info=True)
                await anyio.sleep(1.0)

    async def _relay_once(self) -> None:
        pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
        channels = f"{self.prefix}ch:"
        try:
            await pubsub.psubscribe(channels + "*")
            await pubsub.subscribe(f"{self.prefix}ctl", self.broadcasts)
            async for message in pubsub.listen():
                channel = message["channel"].decode()
                if message["type"] == "pmessage" and channel.startswith(channels):
                    event_id, stream_id, worker, data = json.loads(message["data"])
                    if worker != self.name:
                        await lowlevel.deliver_to_stream(
                            self.server, channel[len(channels) :], stream_id, data.encode(), event_id
                        )
                elif message["type"] == "message" and channel == self.broadcasts:
                    self._deliver_broadcast(json.loads(message["data"]))
                elif message["type"] == "message":
                    ended = json.loads(message["data"])
                    if ended.get("worker") != self.name:
                        await lowlevel.end_session(self.server, str(ended.get("end")))
        finally:
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                await pubsub.aclose()


_BROADCASTS: dict[type[ServerEvent], str] = {
    ToolsListChanged: "tools",
    ResourcesListChanged: "resources",
    PromptsListChanged: "prompts",
    ResourceUpdated: "updated",
}


class RedisEventStore(EventStore):
    """One session's SSE events, in the Redis stream every worker reads (see the module docstring)."""

    def __init__(self, scale: ScaleOut, sid: str) -> None:
        self.scale = scale
        self.sid = sid

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        data = b"" if message is None else message.model_dump_json(by_alias=True, exclude_unset=True).encode()
        try:
            return await self.scale.add_event(self.sid, stream_id, data)
        except Exception:
            # The SDK's message router stops the session's routing on a raise: deliver the event live
            # rather, under an id no replay finds (a reconnect after it replays nothing).
            log.warning("cannot store an event of session %s in Redis", self.sid[:16], exc_info=True)
            self.scale.unstored += 1
            return f"unstored-{self.scale.unstored}"

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        redis = self.scale.redis
        key = self.scale.events_key(self.sid)
        try:
            first = await redis.xrange(key, last_event_id, last_event_id, count=1)
        except Exception:  # not an id Redis knows the form of
            return None
        if not first:
            return None  # unknown, or dropped already: replaying would hide the gap
        stream_id = first[0][1][b"s"].decode()
        cursor = last_event_id
        finished = False

        async def pump(entries: list[Any]) -> None:
            nonlocal cursor, finished
            for entry_id, fields in entries:
                cursor = entry_id.decode()
                if fields[b"s"].decode() != stream_id or not fields[b"d"]:
                    continue
                message = jsonrpc_message_adapter.validate_json(fields[b"d"])
                await send_callback(EventMessage(message, cursor))
                if isinstance(message, JSONRPCResponse | JSONRPCError) and str(message.id) == stream_id:
                    finished = True
                    return

        await pump(await redis.xrange(key, "(" + last_event_id, "+"))
        if stream_id == GET_STREAM_KEY:
            return stream_id
        # A request's stream: follow it here until its answer is stored, or its worker has stopped.
        while not finished:
            found = await redis.xread({key: cursor}, count=64, block=int(HEARTBEAT_EVERY * 1000))
            if found:
                await pump(found[0][1])
                continue
            if await self.scale.runner_alive(self.sid, stream_id):
                continue
            found = await redis.xread({key: cursor}, count=64)  # what it stored just before it stopped
            if found:
                await pump(found[0][1])
                continue
            error = JSONRPCError(
                jsonrpc="2.0",
                id=await self.scale.request_id(self.sid, stream_id),
                error=ErrorData(code=INTERNAL_ERROR, message=ORPHANED),
            )
            event_id = await self.store_event(stream_id, error)
            await send_callback(EventMessage(error, event_id))
            finished = True
        return stream_id


def _requestor(ctx: RequestContext) -> dict[str, Any] | None:
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, authorization_context

    request = ctx.request
    scope = getattr(request, "scope", None)
    user = scope.get("user") if isinstance(scope, dict) else None
    return dict(authorization_context(user)) if isinstance(user, AuthenticatedUser) else None

"""What a session sets with a request and its worker keeps in memory (its log level, its resource
subscriptions), copied to Redis, so that a worker rebuilding the session after its first worker
stopped sets them again: the client is not told to repeat them.

A setting is copied once the request that made it was answered; a rebuilt session gets its settings
back at its first request on the new worker (before that request is served: it already sees them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..surface import lowlevel
from ..surface.logs import STATE_KEY, as_level
from ..surface.state import state_of

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from ..surface.lowlevel import RequestContext

METHODS = frozenset({"logging/setLevel", "resources/subscribe", "resources/unsubscribe"})
_LEVEL = b"level"
_SUB = "sub:"


class SessionSettings:
    def __init__(self, server: MCPServer, redis: Any, prefix: str) -> None:
        self.server = server
        self.redis = redis
        self.prefix = prefix
        self._pending: dict[str, dict[bytes, bytes]] = {}

    def key(self, sid: str) -> str:
        return f"{self.prefix}set:{sid}"

    async def keep(self, sid: str, method: str, params: Mapping[str, Any] | None, ttl_ms: int) -> None:
        """Copy what a served ``method`` request set (``params`` as sent)."""
        params = params or {}
        key = self.key(sid)
        if method == "logging/setLevel" and isinstance(level := params.get("level"), str):
            await self.redis.hset(key, _LEVEL, level)
        elif method == "resources/subscribe" and isinstance(uri := params.get("uri"), str):
            await self.redis.hset(key, _SUB + uri, b"1")
        elif method == "resources/unsubscribe" and isinstance(uri := params.get("uri"), str):
            await self.redis.hdel(key, _SUB + uri)
            return
        else:
            return
        await self.redis.pexpire(key, ttl_ms)

    async def load(self, sid: str) -> None:
        """Read a session's settings as it is rebuilt here; they are set at its next request."""
        found = await self.redis.hgetall(self.key(sid))
        if found:
            self._pending[sid] = found

    def restore(self, ctx: RequestContext, sid: str) -> None:
        """Set a rebuilt session's settings on the connection of its first request here."""
        found = self._pending.pop(sid, None)
        if not found:
            return
        state = lowlevel.connection_state(ctx)
        level = as_level(found.get(_LEVEL, b"").decode("utf-8", "replace"))
        if state is not None and level is not None:
            state[STATE_KEY] = level
        subs = state_of(self.server).subscriptions
        if subs is None:
            return
        for field in found:
            name = field.decode("utf-8", "replace")
            if name.startswith(_SUB):
                subs.subscribe_to(ctx, name[len(_SUB) :])

    def forget(self, sid: str) -> None:
        self._pending.pop(sid, None)

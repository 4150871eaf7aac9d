"""Per-caller rate and concurrency limits on the HTTP doors: over either, ``429`` with ``Retry-After``.

- Rate: a token bucket a caller, ``rate`` requests a second on average and up to ``burst`` at once.
- Concurrency: at most ``max_concurrent`` of a caller's requests in flight (``GET`` streams and
  pages are not counted: a client keeps its event stream open for a whole session).

Callers are told apart by a key function (:data:`KeyFunction`: the ASGI scope to a key, or None
for a request not limited): by default the bearer token (a hash of it, never the token), else the
client's address; with ``key_header`` a header a trusted proxy in front sets; the hosted service
passes its own (the user). Requests reach it after :mod:`.guard` (host, origin and token checked).
The answer is the seed's envelope, ``{"status": null, "error": "rate limited: …"}``.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from starlette.types import ASGIApp, Receive, Scope, Send

KeyFunction = Callable[[Scope], "str | None"]
"""Who a request is from (the same key for every request of one caller); None: not limited."""

MAX_KEYS = 100_000
"""Buckets kept at most; full ones (their caller idle long enough to be back at ``burst``) go first."""


@dataclass
class RateSettings:
    rate: float = 0.0
    """Requests a second a caller may make on average (0: no rate limit)."""
    burst: int = 0
    """Requests a caller may make at once (0: twice the rate, at least 1)."""
    max_concurrent: int = 0
    """Requests of one caller in flight at most (0: no cap)."""
    key_header: str | None = None
    """Key callers by this request header (set by a trusted proxy) instead of token or address."""
    key: KeyFunction | None = None
    """Key callers by this function (the hosted service's user); overrides ``key_header``."""

    @property
    def active(self) -> bool:
        return self.rate > 0 or self.max_concurrent > 0


def default_key(scope: Scope) -> str | None:
    """The caller of a request: its bearer token (hashed), else the client's address."""
    for name, value in scope.get("headers", ()):
        if name == b"authorization" and value:
            return "token:" + hashlib.sha256(value).hexdigest()[:32]
    client = scope.get("client")
    return f"addr:{client[0]}" if client else None


def header_key(header: str) -> KeyFunction:
    """A key function reading one request header (no header: the default key)."""
    wanted = header.lower().encode("latin-1")

    def key(scope: Scope) -> str | None:
        for name, value in scope.get("headers", ()):
            if name == wanted and value:
                return "header:" + value.decode("latin-1")
        return default_key(scope)

    return key


class Limiter:
    """The buckets and in-flight counts of every caller (thread-safe; one per app)."""

    def __init__(self, settings: RateSettings, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = max(0.0, settings.rate)
        self.burst = float(settings.burst or max(1, math.ceil(self.rate * 2)))
        self.max_concurrent = max(0, settings.max_concurrent)
        self.clock = clock
        self._tokens: dict[str, tuple[float, float]] = {}
        """key -> (tokens, when they were counted)."""
        self._inflight: dict[str, int] = {}
        self._lock = threading.Lock()

    def take(self, key: str) -> float:
        """Take one token for ``key``: 0 when the request may go, else the seconds until it may."""
        if self.rate <= 0:
            return 0.0
        now = self.clock()
        with self._lock:
            tokens, at = self._tokens.get(key, (self.burst, now))
            tokens = min(self.burst, tokens + (now - at) * self.rate)
            if tokens < 1.0:
                self._tokens[key] = (tokens, now)
                return (1.0 - tokens) / self.rate
            self._tokens[key] = (tokens - 1.0, now)
            if len(self._tokens) > MAX_KEYS:
                self._prune(now)
            return 0.0

    def _prune(self, now: float) -> None:
        full = [k for k, (t, at) in self._tokens.items() if t + (now - at) * self.rate >= self.burst]
        for k in full or list(self._tokens)[: len(self._tokens) // 2]:
            del self._tokens[k]

    def enter(self, key: str) -> bool:
        """Count a request of ``key`` in flight; False (nothing counted) when it has its cap already."""
        if not self.max_concurrent:
            return True
        with self._lock:
            n = self._inflight.get(key, 0)
            if n >= self.max_concurrent:
                return False
            self._inflight[key] = n + 1
            return True

    def leave(self, key: str) -> None:
        if not self.max_concurrent:
            return
        with self._lock:
            n = self._inflight.get(key, 0) - 1
            if n > 0:
                self._inflight[key] = n
            else:
                self._inflight.pop(key, None)


class RateLimitMiddleware:
    """Answers ``429`` with ``Retry-After`` to a caller over its rate or its concurrency cap."""

    def __init__(self, app: ASGIApp, settings: RateSettings) -> None:
        self.app = app
        self.limiter = Limiter(settings)
        if settings.key is not None:
            self.key: KeyFunction = settings.key
        elif settings.key_header:
            self.key = header_key(settings.key_header)
        else:
            self.key = default_key

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        key = self.key(scope)
        if key is None:
            await self.app(scope, receive, send)
            return
        wait = self.limiter.take(key)
        if wait > 0:
            await _too_many(
                send,
                math.ceil(wait),
                f"rate limited: more than {self.limiter.rate:g} requests a second (burst "
                f"{self.limiter.burst:g}) from this caller (rule: each caller has a request rate); retry "
                f"after {math.ceil(wait)} s",
            )
            return
        counted = scope.get("method") != "GET"
        if counted and not self.limiter.enter(key):
            await _too_many(
                send,
                1,
                f"rate limited: {self.limiter.max_concurrent} requests of this caller are in flight "
                "already (rule: each caller has a cap on concurrent requests); retry when one has ended",
            )
            return
        try:
            await self.app(scope, receive, send)
        finally:
            if counted:
                self.limiter.leave(key)


async def _too_many(send: Send, retry_after: int, message: str) -> None:
    body = json.dumps({"status": None, "error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 429,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"retry-after", str(max(1, retry_after)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})

"""Token introspection (RFC 7662) for an external identity provider whose access tokens are opaque:
``hosted --issuer URL --introspection-client-id ID`` (the endpoint from ``--introspection-uri`` or
the issuer's metadata ``introspection_endpoint``; the client secret from
``--introspection-client-secret-file`` or the ``MCP_IDE_INTROSPECTION_CLIENT_SECRET`` variable,
never the command line, where ``ps`` shows it).

The token is POSTed to the endpoint (``token``, ``token_type_hint=access_token``) with the
service's client credentials in HTTP Basic (``client_secret_basic``, RFC 6749 §2.3.1: both parts
form-encoded first). An answer counts only if it is ``active: true``, names this issuer (``iss``),
an audience (``aud``: checked per request by :meth:`.resource.Resources.accepts`, as a JWT's is),
a hosted user (the ``--user-claim`` member, ``sub`` unless told; ``username`` is common) and, if it
has ``exp``, a time not passed. Inactive answers, errors and timeouts refuse the token (401).

An active answer is cached, keyed by the token's SHA-256, until the earlier of its ``exp`` and
:data:`CACHE_SECONDS` (``--introspection-cache SECONDS``; 0: ask every time): a token revoked at
the provider stops working within that bound. At most
:data:`CACHE_ENTRIES` of them (least recently used out first). Refusals are not cached. The token
is never logged.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import time
from collections import OrderedDict
from collections.abc import Callable
from urllib.parse import quote_plus

import anyio
import httpx
from mcp.server.auth.provider import AccessToken

from ..store import Store
from .external import LEEWAY, access_token

log = logging.getLogger(__name__)

CACHE_SECONDS = 60.0
"""The longest an active answer is reused before the provider is asked again."""
CACHE_ENTRIES = 10_000
SECRET_ENV = "MCP_IDE_INTROSPECTION_CLIENT_SECRET"
CLIENT_REFUSED_EVERY = 60.0
"""Seconds between two log lines saying the provider refuses this service's client (not one a request)."""


def basic_auth(client_id: str, secret: str) -> str:
    """``client_secret_basic``'s header value: each part form-encoded, then base64 (RFC 6749 §2.3.1)."""
    pair = f"{quote_plus(client_id, safe='')}:{quote_plus(secret, safe='')}"
    return "Basic " + base64.b64encode(pair.encode()).decode()


class IntrospectionVerifier:
    """The SDK's ``TokenVerifier`` for an external IdP's opaque access tokens."""

    def __init__(
        self,
        store: Store,
        issuer: str,
        endpoint: str,
        client_id: str,
        client_secret: str,
        user_claim: str = "sub",
        timeout: float = 10.0,
        cache_seconds: float = CACHE_SECONDS,
        max_entries: int = CACHE_ENTRIES,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.issuer = issuer
        self.endpoint = endpoint
        self.user_claim = user_claim
        self.timeout = timeout
        self.cache_seconds = cache_seconds
        self.max_entries = max_entries
        self.clock = clock
        self._authorization = basic_auth(client_id, client_secret)
        self._client: httpx.AsyncClient | None = None
        self._told = -CLIENT_REFUSED_EVERY
        self._cache: OrderedDict[bytes, tuple[float, AccessToken]] = OrderedDict()

    async def verify_token(self, token: str) -> AccessToken | None:
        if not token or len(token) > 16_384:
            return None
        key = hashlib.sha256(token.encode()).digest()
        now = self.clock()
        cached = self._cache.get(key)
        if cached is not None:
            if cached[0] > now:
                self._cache.move_to_end(key)
                return cached[1]
            del self._cache[key]
        answer = await self._ask(token)
        access = await anyio.to_thread.run_sync(self._access_of, answer, now) if answer else None
        if access is not None and self.cache_seconds > 0:
            until = min(now + self.cache_seconds, float(access.expires_at or now + self.cache_seconds))
            if until > now:
                self._cache[key] = (until, access)
            while len(self._cache) > self.max_entries:
                self._cache.popitem(last=False)
        return access

    async def _ask(self, token: str) -> dict[str, object] | None:
        """The provider's answer, or None (logged without the token) when there is none to use."""
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.timeout, follow_redirects=False)
        try:
            response = await self._client.post(
                self.endpoint,
                data={"token": token, "token_type_hint": "access_token"},
                headers={"Authorization": self._authorization, "Accept": "application/json"},
            )
        except httpx.HTTPError as exc:
            log.warning(
                "token introspection at %s failed (%s): the token is refused",
                self.endpoint,
                type(exc).__name__,
            )
            return None
        if response.status_code in (401, 403):
            if time.monotonic() - self._told < CLIENT_REFUSED_EVERY:
                return None
            self._told = time.monotonic()
            log.error(
                "the identity provider refused this service's introspection client (HTTP %d at %s): check "
                "--introspection-client-id and its secret; every opaque token is refused meanwhile",
                response.status_code,
                self.endpoint,
            )
            return None
        if response.status_code != 200:
            log.warning(
                "token introspection at %s answered HTTP %d: the token is refused",
                self.endpoint,
                response.status_code,
            )
            return None
        try:
            answer = response.json()
        except ValueError:
            log.warning(
                "token introspection at %s answered something not JSON: the token is refused", self.endpoint
            )
            return None
        return answer if isinstance(answer, dict) else None

    def _access_of(self, answer: dict[str, object], now: float) -> AccessToken | None:
        if answer.get("active") is not True:
            log.info("an external token was refused: introspection says inactive")
            return None
        exp, iss, aud = answer.get("exp"), answer.get("iss"), answer.get("aud")
        if not isinstance(iss, str) or iss.rstrip("/") != self.issuer.rstrip("/"):
            log.info("an external token was refused: introspection names another issuer")
            return None
        if exp is not None and (
            not isinstance(exp, int | float) or isinstance(exp, bool) or exp + LEEWAY < now
        ):
            log.info("an external token was refused: introspection says expired")
            return None
        audiences = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
        if not audiences:
            log.info("an external token was refused: introspection names no audience")
            return None
        raw = answer.get("scope", "")
        given = raw.split() if isinstance(raw, str) else []
        return access_token(
            self.store, self.user_claim, answer, self.issuer, given, audiences, answer.get("client_id"), exp
        )


def read_secret(path: str | None) -> str:
    """The introspection client's secret: the file's first line, else the environment variable."""
    if path:
        try:
            if os.stat(path).st_mode & 0o077:
                log.warning(
                    "--introspection-client-secret-file %s can be read by other users: chmod 600 it", path
                )
            with open(path, encoding="utf-8") as file:
                secret = file.readline().strip()
        except OSError as exc:
            raise SystemExit(
                f"mcp-server-ide hosted: cannot read --introspection-client-secret-file: {exc}"
            ) from None
    else:
        secret = os.environ.get(SECRET_ENV, "").strip()
    if not secret:
        raise SystemExit(
            "mcp-server-ide hosted: --introspection-client-id needs its secret: give "
            f"--introspection-client-secret-file FILE (its first line) or set {SECRET_ENV}"
        )
    return secret

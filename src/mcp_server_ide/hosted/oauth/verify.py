"""One ``TokenVerifier`` for every kind of bearer token the hosted doors take, told apart by shape:
``mide_…`` an API token (:class:`~..tokens.ApiTokenVerifier`), ``mido_…`` an embedded OAuth access
token (:class:`~.provider.HostedProvider`), anything else the external identity provider's token
when one is configured: a JWT checked against its keys (:class:`~.external.JwtVerifier`), any other
(or every one, with ``--introspect-all-tokens``) asked of its introspection endpoint
(:class:`~.introspect.IntrospectionVerifier`) when one is configured."""

from __future__ import annotations

import base64
import json

from mcp.server.auth.provider import AccessToken, TokenVerifier

from ..tokens import PREFIX as API_PREFIX
from .store import ACCESS_PREFIX


class HostedVerifier:
    def __init__(
        self, api: TokenVerifier, embedded: TokenVerifier | None = None, external: TokenVerifier | None = None
    ) -> None:
        self.api = api
        self.embedded = embedded
        self.external = external

    async def verify_token(self, token: str) -> AccessToken | None:
        if token.startswith(API_PREFIX):
            return await self.api.verify_token(token)
        if token.startswith(ACCESS_PREFIX):
            return await self.embedded.verify_token(token) if self.embedded else None
        return await self.external.verify_token(token) if self.external else None


def looks_like_jwt(token: str) -> bool:
    """Three dot-separated parts whose first is a base64url JSON header naming an ``alg``."""
    parts = token.split(".")
    if len(parts) != 3 or not parts[0] or len(parts[0]) > 4096:
        return False
    try:
        header = json.loads(base64.urlsafe_b64decode(parts[0] + "=" * (-len(parts[0]) % 4)))
    except ValueError:
        return False
    return isinstance(header, dict) and isinstance(header.get("alg"), str)


class ExternalVerifier:
    """The external identity provider's tokens: JWTs to ``jwt``, anything else to ``introspection``
    (every token, when ``jwt`` is None)."""

    def __init__(self, jwt: TokenVerifier | None, introspection: TokenVerifier | None) -> None:
        self.jwt = jwt
        self.introspection = introspection

    async def verify_token(self, token: str) -> AccessToken | None:
        if self.jwt is not None and (self.introspection is None or looks_like_jwt(token)):
            return await self.jwt.verify_token(token)
        return await self.introspection.verify_token(token) if self.introspection else None

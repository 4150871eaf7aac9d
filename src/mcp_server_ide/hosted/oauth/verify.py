"""One ``TokenVerifier`` for every kind of bearer token the hosted doors take, told apart by shape:
``mide_…`` an API token (:class:`~..tokens.ApiTokenVerifier`), ``mido_…`` an embedded OAuth access
token (:class:`~.provider.HostedProvider`), anything else the external identity provider's JWT
(:class:`~.external.JwtVerifier`) when one is configured."""

from __future__ import annotations

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

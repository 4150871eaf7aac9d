"""The embedded authorization server: the SDK's ``OAuthAuthorizationServerProvider`` on
:class:`~.store.OAuthStore`, served by the SDK's ``create_auth_routes`` (metadata, ``/authorize``,
``/token``, ``/register``, ``/revoke``) plus this service's sign-in page (:mod:`.login`).

Authorization code with PKCE (S256 only: the SDK's handlers refuse anything else), dynamic client
registration (RFC 7591), refresh tokens rotated at each use (a rotated one presented again ends the
grant), revocation of a whole grant, expiry. ``/authorize`` keeps the request and sends the browser
to ``/login``; signing in there makes the code. Redirect URIs: ``https`` ones, private-use schemes
(``vscode://…``), and ``http`` only on a loopback address, where any port matches the registered one
(RFC 8252 §7.3: VS Code registers ``http://127.0.0.1:33418`` and listens where it can).
"""

from __future__ import annotations

import ipaddress
import json
import time
from typing import Any

import anyio
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    RefreshToken,
    RegistrationError,
    TokenError,
)
from mcp.shared.auth import InvalidRedirectUriError, OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl, AnyUrl

from ..store import SCOPES
from .resource import Resources
from .store import ACCESS_PREFIX, CodeRow, OAuthStore, TokenRow

CODE_TTL = 300.0
LOOPBACK_NAMES = ("localhost",)
BAD_SCHEMES = frozenset(
    {"http", "javascript", "data", "file", "vbscript", "about", "blob", "ftp", "ws", "wss"}
)


def is_loopback(uri: AnyUrl) -> bool:
    host = (uri.host or "").strip("[]")
    if uri.scheme != "http":
        return False
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def redirect_refusal(uri: AnyUrl) -> str | None:
    """Why a redirect URI cannot be registered, else None."""
    if uri.fragment:
        return f"redirect URI {uri} has a fragment (RFC 6749 §3.1.2)"
    if uri.scheme == "https" or is_loopback(uri):
        return None
    if uri.scheme in BAD_SCHEMES:
        return (
            f"redirect URI {uri}: use https, a loopback http://127.0.0.1:PORT address, or an app's own scheme"
        )
    return None  # a private-use scheme (RFC 8252 §7.1), such as vscode://


class HostedClient(OAuthClientInformationFull):
    """A registered client whose loopback redirect URIs match on any port (RFC 8252 §7.3)."""

    def validate_redirect_uri(self, redirect_uri: AnyUrl | None) -> AnyUrl:
        if redirect_uri is not None and is_loopback(redirect_uri):
            for registered in self.redirect_uris or []:
                if (
                    is_loopback(registered)
                    and registered.host == redirect_uri.host
                    and (registered.path or "/") == (redirect_uri.path or "/")
                ):
                    return redirect_uri
            raise InvalidRedirectUriError(f"Redirect URI '{redirect_uri}' not registered for client")
        return super().validate_redirect_uri(redirect_uri)


class HostedAccessToken(AccessToken):
    grant_id: str = ""


class HostedRefreshToken(RefreshToken):
    grant_id: str = ""


class HostedCode(AuthorizationCode):
    user_id: str = ""


def access_token_of(row: TokenRow, service: str) -> HostedAccessToken:
    """What the doors see of an embedded access token: its user, scopes and audience (never the
    secret). A sign-in that named no resource is for the service (all of the user's projects)."""
    return HostedAccessToken(
        token="",
        client_id=row.client_id,
        scopes=list(row.scopes),
        expires_at=int(row.expires_at),
        resource=row.resource,
        subject=row.user_id,
        claims={"aud": [row.resource or service]},
        grant_id=row.grant_id,
    )


class HostedProvider:
    def __init__(self, oauth: OAuthStore, resources: Resources) -> None:
        self.oauth = oauth
        self.resources = resources
        self.issuer = str(AnyHttpUrl(resources.issuer))
        """The issuer exactly as the metadata spells it (pydantic adds ``/`` to a bare origin): the
        ``iss`` of every authorization response (RFC 9207), which clients compare as a string."""

    async def get_client(self, client_id: str) -> HostedClient | None:
        info = await anyio.to_thread.run_sync(self.oauth.client, client_id)
        return HostedClient.model_validate_json(info) if info else None

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        for uri in client_info.redirect_uris or []:
            if (why := redirect_refusal(uri)) is not None:
                raise RegistrationError("invalid_redirect_uri", why)
        await anyio.to_thread.run_sync(
            self.oauth.add_client, client_info.client_id or "", client_info.model_dump_json(exclude_none=True)
        )

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        if not self.resources.known(params.resource):
            raise AuthorizeError(
                "invalid_target",
                f"unknown resource {params.resource}: ask for a project's MCP URL "
                f"({self.resources.base}/p/<project>/mcp) or the service ({self.resources.base})",
            )
        wanted = params.scopes or (client.scope.split() if client.scope else list(SCOPES))
        unknown = [s for s in wanted if s not in SCOPES]
        if unknown:
            raise AuthorizeError(
                "invalid_scope", f"unknown scope {', '.join(unknown)}: the scopes are read, write, run"
            )
        pending = params.model_copy(update={"scopes": wanted}).model_dump_json()
        secret = await anyio.to_thread.run_sync(self.oauth.add_request, client.client_id or "", pending)
        return f"{self.resources.base}/login?request={secret}"

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> HostedCode | None:
        row: CodeRow | None = await anyio.to_thread.run_sync(self.oauth.code, authorization_code)
        if row is None or row.client_id != client.client_id:
            return None
        return HostedCode(
            code=authorization_code,
            scopes=list(row.scopes),
            expires_at=row.expires_at,
            client_id=row.client_id,
            code_challenge=row.code_challenge,
            redirect_uri=AnyUrl(row.redirect_uri),
            redirect_uri_provided_explicitly=row.redirect_explicit,
            resource=row.resource,
            subject=row.user_id,
            user_id=row.user_id,
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: HostedCode
    ) -> OAuthToken:
        if not await anyio.to_thread.run_sync(self.oauth.take_code, authorization_code.code):
            raise TokenError("invalid_grant", "authorization code was used already")
        issued = await anyio.to_thread.run_sync(
            lambda: self.oauth.issue(
                client.client_id or "",
                authorization_code.user_id,
                tuple(authorization_code.scopes),
                authorization_code.resource,
            )
        )
        return _token(issued.access, issued.refresh, issued.access_expires_at, authorization_code.scopes)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> HostedRefreshToken | None:
        row = await anyio.to_thread.run_sync(self.oauth.token, refresh_token)
        if row is None or row.kind != "refresh" or row.client_id != client.client_id:
            return None
        if row.revoked:
            await anyio.to_thread.run_sync(self.oauth.revoke_grant, row.grant_id)  # a replayed refresh token
            return None
        return HostedRefreshToken(
            token=refresh_token,
            client_id=row.client_id,
            scopes=list(row.scopes),
            expires_at=int(row.expires_at),
            resource=row.resource,
            subject=row.user_id,
            grant_id=row.grant_id,
        )

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: HostedRefreshToken, scopes: list[str]
    ) -> OAuthToken:
        issued = await anyio.to_thread.run_sync(self.oauth.rotate, refresh_token.token, tuple(scopes))
        if issued is None:
            raise TokenError("invalid_grant", "refresh token was used or revoked already: sign in again")
        return _token(issued.access, issued.refresh, issued.access_expires_at, scopes)

    async def load_access_token(self, token: str) -> HostedAccessToken | None:
        if not token.startswith(ACCESS_PREFIX) or len(token) > 256:
            return None
        row = await anyio.to_thread.run_sync(self.oauth.token, token)
        if row is None or row.kind != "access" or row.revoked or row.expires_at < time.time():
            return None
        return access_token_of(row, self.resources.base)

    async def verify_token(self, token: str) -> AccessToken | None:
        """The SDK's ``TokenVerifier`` for this server's own access tokens."""
        return await self.load_access_token(token)

    async def revoke_token(self, token: Any) -> None:
        grant = getattr(token, "grant_id", "")
        if grant:
            await anyio.to_thread.run_sync(self.oauth.revoke_grant, grant)

    async def exchange_identity_assertion(
        self, client: OAuthClientInformationFull, params: Any
    ) -> OAuthToken:
        raise TokenError("unsupported_grant_type", "the JWT bearer grant is not supported by this service")


def _token(access: str, refresh: str, expires_at: float, scopes: list[str]) -> OAuthToken:
    return OAuthToken(
        access_token=access,
        token_type="Bearer",
        expires_in=max(0, int(expires_at - time.time())),
        scope=" ".join(scopes),
        refresh_token=refresh,
    )


def params_of(pending: str) -> AuthorizationParams:
    return AuthorizationParams.model_validate(json.loads(pending))

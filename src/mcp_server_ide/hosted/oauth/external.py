"""Delegation to an external identity provider (``hosted --issuer URL``): its access tokens are JWTs
checked with PyJWT against the provider's published keys (JWKS): signature, ``iss``, ``exp`` (and
``nbf``), and the presence of ``sub`` and ``aud``. The audience is checked per request by
:meth:`.resource.Resources.accepts` (this project's MCP URL, the service's URL, or an ``--audience``
value), the scopes are the ``scope`` (space-separated) or ``scp`` (a list) claim's read/write/run,
and the user is the hosted user whose name is the ``--user-claim`` claim (``sub`` unless told).

The JWKS address is ``--jwks-uri``, else the ``jwks_uri`` of the issuer's OpenID or OAuth metadata.
Keys are cached by PyJWT and fetched again for a key id it has not seen (a rotated key).
"""

from __future__ import annotations

import json
import logging
import urllib.request
from collections.abc import Mapping

import anyio
import jwt
from mcp.server.auth.provider import AccessToken

from ..store import SCOPES, Store

log = logging.getLogger(__name__)

ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]
"""Asymmetric only: an HS256 token 'signed' with the public key must not pass."""
LEEWAY = 30
"""Seconds of clock difference allowed on ``exp``/``nbf``."""


def discover(issuer: str, member: str, option: str, timeout: float = 10) -> str:
    """A URL of the issuer's metadata (OpenID Connect discovery, then RFC 8414): ``jwks_uri``,
    ``introspection_endpoint``; a clear exit naming ``option`` when there is none."""
    base = issuer.rstrip("/")
    errors = []
    for url in (base + "/.well-known/openid-configuration", base + "/.well-known/oauth-authorization-server"):
        try:
            with urllib.request.urlopen(url, timeout=timeout) as answer:
                found = json.loads(answer.read(1_000_000)).get(member)
            if isinstance(found, str) and found:
                return found
            errors.append(f"{url}: no {member}")
        except (OSError, ValueError) as exc:
            errors.append(f"{url}: {exc}")
    raise SystemExit(
        f"mcp-server-ide hosted: cannot find the {member} of issuer {issuer} ({'; '.join(errors)}); give {option}"
    )


def discover_jwks_uri(issuer: str, timeout: float = 10) -> str:
    """The ``jwks_uri`` of the issuer's metadata."""
    return discover(issuer, "jwks_uri", "--jwks-uri (or --introspect-all-tokens)", timeout)


class JwtVerifier:
    """The SDK's ``TokenVerifier`` for an external IdP's JWT access tokens."""

    def __init__(self, store: Store, issuer: str, jwks_uri: str, user_claim: str = "sub") -> None:
        self.store = store
        self.issuer = issuer
        self.user_claim = user_claim
        self.keys = jwt.PyJWKClient(jwks_uri, cache_keys=True, lifespan=3600, timeout=10)

    async def verify_token(self, token: str) -> AccessToken | None:
        return await anyio.to_thread.run_sync(self._verify, token)

    def _verify(self, token: str) -> AccessToken | None:
        if len(token) > 16_384 or token.count(".") != 2:
            return None
        try:
            key = self.keys.get_signing_key_from_jwt(token)
            claims = jwt.decode(
                token,
                key.key,
                algorithms=ALGORITHMS,
                issuer=self.issuer,
                leeway=LEEWAY,
                options={"require": ["exp", "iss", "sub", "aud"], "verify_aud": False},
            )
        except jwt.PyJWTError as exc:
            log.info("an external token was refused: %s", type(exc).__name__)
            return None
        raw = claims.get("scope", claims.get("scp", ""))
        given = raw.split() if isinstance(raw, str) else [s for s in raw if isinstance(s, str)]
        audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
        client = claims.get("azp") or claims.get("client_id")
        return access_token(
            self.store, self.user_claim, claims, self.issuer, given, audiences, client, claims["exp"]
        )


def access_token(
    store: Store,
    user_claim: str,
    claims: Mapping[str, object],
    issuer: str,
    scopes: list[str],
    audiences: list[str],
    client: object,
    expires: object,
) -> AccessToken | None:
    """An external token's checked claims (a JWT's, or an introspection answer's) as the SDK's
    ``AccessToken`` of the hosted user ``user_claim`` names; None (logged) when it names none."""
    name = claims.get(user_claim)
    user = store.user_by_name(name) if isinstance(name, str) else None
    if user is None:
        log.warning(
            "an external token's %s names no hosted user (add one with `hosted user add`)", user_claim
        )
        return None
    return AccessToken(
        token="",
        client_id=str(client or "external"),
        scopes=[s for s in SCOPES if s in scopes],
        expires_at=int(expires) if isinstance(expires, int | float) else None,
        subject=user.id,
        claims={"aud": audiences, "iss": issuer},
    )

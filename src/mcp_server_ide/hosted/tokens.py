"""API tokens: made once, shown once, stored as their SHA-256 only, checked as bearer tokens.

A token is ``mide_`` + 256 random bits (URL-safe base64). The store keeps its SHA-256 and looks it
up by that hash (a lookup by a hash of the secret tells nothing about the secret's bytes), then
compares the stored hash in constant time. :class:`ApiTokenVerifier` is the SDK's
``TokenVerifier``; the OAuth verifiers stand beside it (:mod:`.oauth.verify`).
"""

from __future__ import annotations

import hashlib
import secrets
from typing import TYPE_CHECKING

import anyio

from .store import SCOPES, Store, StoreError, TokenInfo

if TYPE_CHECKING:
    from mcp.server.auth.provider import AccessToken

PREFIX = "mide_"
MAX_TOKEN = 256
"""Longer bearer values are refused unhashed (no token this service makes is that long)."""


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogateescape")).hexdigest()


def parse_scopes(text: str) -> tuple[str, ...]:
    """``"read,write"`` as a checked, ordered tuple; StoreError names the scopes there are."""
    wanted = {s.strip() for s in text.split(",") if s.strip()}
    unknown = wanted - set(SCOPES)
    if unknown or not wanted:
        raise StoreError(
            f"unknown scope {', '.join(sorted(unknown)) or '(none)'}: a token's scopes are a comma-separated "
            f"list of {', '.join(SCOPES)}"
        )
    return tuple(s for s in SCOPES if s in wanted)


def create(store: Store, user_id: str, scopes: tuple[str, ...], name: str = "") -> tuple[str, TokenInfo]:
    """A new token for the user: (the secret, to show once; what the store keeps)."""
    secret = PREFIX + secrets.token_urlsafe(32)
    return secret, store.add_token(user_id, hash_secret(secret), scopes, name)


def lookup(store: Store, secret: str) -> TokenInfo | None:
    if not secret or len(secret) > MAX_TOKEN:
        return None
    return store.token_by_hash(hash_secret(secret))


class ApiTokenVerifier:
    """The SDK's ``TokenVerifier`` for this service's API tokens: the access token's ``client_id`` is
    the token's id and its ``subject`` the user's id (the SDK binds an MCP session to those);
    the secret itself is not kept in it."""

    def __init__(self, store: Store) -> None:
        self.store = store

    async def verify_token(self, token: str) -> AccessToken | None:
        from mcp.server.auth.provider import AccessToken  # not at import: the admin CLI needs no SDK

        info = await anyio.to_thread.run_sync(lookup, self.store, token)
        if info is None:
            return None
        return AccessToken(token="", client_id=info.id, scopes=list(info.scopes), subject=info.user_id)

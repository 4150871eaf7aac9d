"""The embedded authorization server's state, in the hosted store's database (tables from the
``0003_oauth`` and ``0004_signin_failures`` migrations): registered clients, sign-ins waiting for
the user, authorization codes and tokens, wrong passwords within the lock-out window. Codes, tokens and pending-request ids are random (256 bits) and kept as their SHA-256
only; each row is looked up by that hash. A code is taken (deleted) once; a refresh token is
rotated (revoked, a new pair issued) once: presenting it again ends the whole grant.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass

import sqlalchemy as sa

from ..schema import oauth_clients, oauth_codes, oauth_requests, oauth_tokens, signin_failures
from ..sqlreads import Reads
from ..sqlstore import new_id
from ..tokens import hash_secret

ACCESS_PREFIX = "mido_"
"""An embedded OAuth access token (API tokens are ``mide_``; anything else is an external IdP's)."""
REFRESH_PREFIX = "midr_"


@dataclass(frozen=True)
class CodeRow:
    client_id: str
    user_id: str
    scopes: tuple[str, ...]
    code_challenge: str
    redirect_uri: str
    redirect_explicit: bool
    resource: str | None
    expires_at: float


@dataclass(frozen=True)
class TokenRow:
    kind: str
    grant_id: str
    client_id: str
    user_id: str
    scopes: tuple[str, ...]
    resource: str | None
    expires_at: float
    revoked: bool


@dataclass(frozen=True)
class Issued:
    access: str
    refresh: str
    access_expires_at: float


def _scopes(text: str) -> tuple[str, ...]:
    return tuple(s for s in text.split(",") if s)


class OAuthStore:
    def __init__(
        self,
        engine: sa.Engine,
        access_ttl: float = 3600,
        refresh_ttl: float = 30 * 86400,
        reads: Reads | None = None,
    ) -> None:
        self.engine = engine
        self.reads = reads or Reads(engine)
        """Where access tokens are looked up, on every request (the store's :attr:`~..sqlstore.SqlStore.reads`)."""
        self.access_ttl = access_ttl
        self.refresh_ttl = refresh_ttl

    # clients (RFC 7591 registrations, as JSON)

    def add_client(self, client_id: str, info: str) -> None:
        with self.engine.begin() as c:
            c.execute(oauth_clients.insert().values(client_id=client_id, info=info, created_at=time.time()))

    def client(self, client_id: str) -> str | None:
        with self.engine.connect() as c:
            q = sa.select(oauth_clients.c.info).where(oauth_clients.c.client_id == client_id)
            return c.execute(q).scalar_one_or_none()

    # authorization requests waiting for the user to sign in

    def add_request(self, client_id: str, params: str, ttl: float = 600) -> str:
        secret = secrets.token_urlsafe(32)
        now = time.time()
        with self.engine.begin() as c:
            c.execute(oauth_requests.delete().where(oauth_requests.c.expires_at < now))
            c.execute(
                oauth_requests.insert().values(
                    id_hash=hash_secret(secret), client_id=client_id, params=params, expires_at=now + ttl
                )
            )
        return secret

    def request(self, secret: str) -> tuple[str, str] | None:
        """(client id, params) of a live pending request."""
        q = sa.select(oauth_requests).where(
            oauth_requests.c.id_hash == hash_secret(secret), oauth_requests.c.expires_at >= time.time()
        )
        with self.engine.connect() as c:
            row = c.execute(q).first()
        return (row.client_id, row.params) if row else None

    def take_request(self, secret: str) -> tuple[str, str] | None:
        """The same, removed: a pending request is answered once."""
        found = self.request(secret)
        with self.engine.begin() as c:
            done = c.execute(oauth_requests.delete().where(oauth_requests.c.id_hash == hash_secret(secret)))
        return found if done.rowcount == 1 else None

    # authorization codes

    def add_code(self, code: CodeRow) -> str:
        secret = secrets.token_urlsafe(32)
        with self.engine.begin() as c:
            c.execute(oauth_codes.delete().where(oauth_codes.c.expires_at < time.time() - 3600))
            c.execute(
                oauth_codes.insert().values(
                    code_hash=hash_secret(secret),
                    client_id=code.client_id,
                    user_id=code.user_id,
                    scopes=",".join(code.scopes),
                    code_challenge=code.code_challenge,
                    redirect_uri=code.redirect_uri,
                    redirect_explicit=code.redirect_explicit,
                    resource=code.resource,
                    expires_at=code.expires_at,
                )
            )
        return secret

    def code(self, secret: str) -> CodeRow | None:
        with self.engine.connect() as c:
            row = c.execute(
                sa.select(oauth_codes).where(oauth_codes.c.code_hash == hash_secret(secret))
            ).first()
        if row is None:
            return None
        return CodeRow(
            row.client_id,
            row.user_id,
            _scopes(row.scopes),
            row.code_challenge,
            row.redirect_uri,
            row.redirect_explicit,
            row.resource,
            row.expires_at,
        )

    def take_code(self, secret: str) -> bool:
        """Remove the code; False when it was taken already (two exchanges of one code: one wins)."""
        with self.engine.begin() as c:
            done = c.execute(oauth_codes.delete().where(oauth_codes.c.code_hash == hash_secret(secret)))
        return done.rowcount == 1

    # tokens

    def issue(
        self,
        client_id: str,
        user_id: str,
        scopes: tuple[str, ...],
        resource: str | None,
        grant_id: str | None = None,
        access_ttl: float | None = None,
    ) -> Issued:
        """A new access + refresh token pair of a grant (a new grant unless one is given)."""
        grant = grant_id or new_id("g_")
        access = ACCESS_PREFIX + secrets.token_urlsafe(32)
        refresh = REFRESH_PREFIX + secrets.token_urlsafe(32)
        now = time.time()
        expires = now + (self.access_ttl if access_ttl is None else access_ttl)
        common = dict(
            grant_id=grant, client_id=client_id, user_id=user_id, scopes=",".join(scopes), resource=resource
        )
        with self.engine.begin() as c:
            c.execute(
                oauth_tokens.insert(),
                [
                    dict(
                        common,
                        token_hash=hash_secret(access),
                        kind="access",
                        created_at=now,
                        expires_at=expires,
                    ),
                    dict(
                        common,
                        token_hash=hash_secret(refresh),
                        kind="refresh",
                        created_at=now,
                        expires_at=now + self.refresh_ttl,
                    ),
                ],
            )
        return Issued(access, refresh, expires)

    def token(self, secret: str) -> TokenRow | None:
        """The token with this secret, live or not (None: never issued)."""
        q = sa.select(oauth_tokens).where(oauth_tokens.c.token_hash == hash_secret(secret))
        row = self.reads.first(q)
        if row is None:
            return None
        return TokenRow(
            row.kind,
            row.grant_id,
            row.client_id,
            row.user_id,
            _scopes(row.scopes),
            row.resource,
            row.expires_at,
            row.revoked_at is not None,
        )

    def rotate(self, refresh: str, scopes: tuple[str, ...]) -> Issued | None:
        """Revoke a live refresh token and its grant's access tokens, and issue the next pair of the
        grant; None when the token was rotated or revoked already (then the grant is ended)."""
        found = self.token(refresh)
        if found is None or found.kind != "refresh":
            return None
        now = time.time()
        with self.engine.begin() as c:
            done = c.execute(
                oauth_tokens.update()
                .where(oauth_tokens.c.token_hash == hash_secret(refresh), oauth_tokens.c.revoked_at.is_(None))
                .values(revoked_at=now)
            )
            if done.rowcount == 1:
                c.execute(
                    oauth_tokens.update()
                    .where(
                        oauth_tokens.c.grant_id == found.grant_id,
                        oauth_tokens.c.kind == "access",
                        oauth_tokens.c.revoked_at.is_(None),
                    )
                    .values(revoked_at=now)
                )
        if done.rowcount != 1:
            self.revoke_grant(found.grant_id)  # a rotated refresh token came back: someone copied it
            return None
        return self.issue(found.client_id, found.user_id, scopes, found.resource, grant_id=found.grant_id)

    def revoke_grant(self, grant_id: str) -> None:
        with self.engine.begin() as c:
            c.execute(
                oauth_tokens.update()
                .where(oauth_tokens.c.grant_id == grant_id, oauth_tokens.c.revoked_at.is_(None))
                .values(revoked_at=time.time())
            )

    def revoke_user(self, user_id: str) -> int:
        """End every grant of a user (a new password, a removed user): the number of tokens revoked."""
        with self.engine.begin() as c:
            done = c.execute(
                oauth_tokens.update()
                .where(oauth_tokens.c.user_id == user_id, oauth_tokens.c.revoked_at.is_(None))
                .values(revoked_at=time.time())
            )
        return done.rowcount

    # wrong passwords on the sign-in page (every worker sees the same)

    def failures_since(self, user_name: str, since: float, most: int) -> list[float]:
        """When the user name's last ``most`` wrong passwords since ``since`` were given, newest first."""
        q = (
            sa.select(signin_failures.c.at)
            .where(signin_failures.c.user_name == user_name, signin_failures.c.at >= since)
            .order_by(signin_failures.c.at.desc())
            .limit(most)
        )
        with self.engine.connect() as c:
            return list(c.execute(q).scalars())

    def add_failure(self, user_name: str, at: float, forget_before: float) -> None:
        """Note a wrong password, and forget every one from before ``forget_before``."""
        with self.engine.begin() as c:
            c.execute(signin_failures.delete().where(signin_failures.c.at < forget_before))
            c.execute(signin_failures.insert().values(user_name=user_name, at=at))

    def clear_failures(self, user_name: str) -> None:
        with self.engine.begin() as c:
            c.execute(signin_failures.delete().where(signin_failures.c.user_name == user_name))

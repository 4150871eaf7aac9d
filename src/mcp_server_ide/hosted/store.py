"""What the hosted service keeps: users, their API tokens and their projects.

:class:`Store` is the interface; :class:`~.sqlstore.SqlStore` implements it on SQLAlchemy Core
(SQLite in the data folder by default; the same code runs on PostgreSQL). Every project lookup
is by (owner, id) in one query, so a project that is another user's, deleted, or never existed
comes back the same: ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

SCOPES = ("read", "write", "run")
"""What a token may do: read (read-only tools), write (tools that change files), run (commands,
jobs, terminals, run configurations, debugging)."""


class StoreError(Exception):
    """A request the store refuses (a duplicate user name, an unknown user...); its text says why."""


@dataclass(frozen=True)
class User:
    id: str
    name: str


@dataclass(frozen=True)
class TokenInfo:
    """A token as the store keeps it: never its secret (only its SHA-256 is stored)."""

    id: str
    user_id: str
    name: str
    scopes: tuple[str, ...]
    created_at: float
    revoked: bool


@dataclass(frozen=True)
class Project:
    id: str
    owner_id: str
    name: str
    created_at: float
    number: int
    """Its own number (1, 2, ...; never reused): the sandbox uid is derived from it."""


class Store(Protocol):
    """The hosted service's state; every method is one short transaction."""

    def add_user(self, name: str) -> User: ...

    def user_by_name(self, name: str) -> User | None: ...

    def user_by_id(self, user_id: str) -> User | None: ...

    def set_password_hash(self, user_id: str, password_hash: str | None) -> None: ...

    def password_hash(self, name: str) -> tuple[User, str | None] | None:
        """The user with this name and their password's hash (None: no password set), else None."""
        ...

    def add_token(self, user_id: str, secret_hash: str, scopes: tuple[str, ...], name: str) -> TokenInfo: ...

    def token_by_hash(self, secret_hash: str) -> TokenInfo | None:
        """The live (not revoked) token with this hash, else None."""
        ...

    def revoke_token(self, token_id: str) -> bool: ...

    def tokens_of(self, user_id: str) -> list[TokenInfo]: ...

    def add_project(self, owner_id: str, name: str) -> Project: ...

    def project(self, owner_id: str, project_id: str) -> Project | None:
        """The caller's live project with this id; None for another's, a deleted one, or none."""
        ...

    def projects_of(self, owner_id: str) -> list[Project]: ...

    def all_projects(self) -> list[Project]: ...

    def rename_project(self, owner_id: str, project_id: str, name: str) -> Project | None: ...

    def delete_project(self, owner_id: str, project_id: str) -> Project | None: ...

    def ping(self) -> None:
        """Raise when the store cannot answer (``/readyz``)."""
        ...

    def close(self) -> None: ...

"""The hosted store's tables, as SQLAlchemy Core (the same definitions serve SQLite and PostgreSQL).

The schema itself is made and changed only by the versioned migrations in ``migrations/versions``
(Alembic); these definitions are what queries are written against and must match the newest one.
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

users = sa.Table(
    "users",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("name", sa.String(64), nullable=False, unique=True),
    sa.Column("created_at", sa.Float, nullable=False),
    # scrypt (see passwords.py); None: the user cannot sign in with a password (API tokens only).
    sa.Column("password_hash", sa.String(256), nullable=True),
)

tokens = sa.Table(
    "tokens",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("user_id", sa.String(32), sa.ForeignKey("users.id"), nullable=False),
    sa.Column("name", sa.String(128), nullable=False, server_default=""),
    sa.Column("secret_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("scopes", sa.String(64), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("revoked_at", sa.Float, nullable=True),
)

projects = sa.Table(
    "projects",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("owner_id", sa.String(32), sa.ForeignKey("users.id"), nullable=False),
    sa.Column("name", sa.String(128), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("deleted_at", sa.Float, nullable=True),
    # The project's own number (1, 2, ...; never reused, deleted rows keep theirs): its sandbox uid.
    sa.Column("number", sa.Integer, nullable=False),
    sa.Index("ix_projects_owner", "owner_id", "id"),
    sa.UniqueConstraint("number", name="uq_projects_number"),
)

# OAuth (the embedded authorization server, :mod:`.oauth`): every secret is kept as its SHA-256.

oauth_clients = sa.Table(
    "oauth_clients",
    metadata,
    sa.Column("client_id", sa.String(64), primary_key=True),
    sa.Column("info", sa.Text, nullable=False),  # the registration (RFC 7591) as JSON
    sa.Column("created_at", sa.Float, nullable=False),
)

oauth_requests = sa.Table(  # authorization requests waiting for the user to sign in
    "oauth_requests",
    metadata,
    sa.Column("id_hash", sa.String(64), primary_key=True),
    sa.Column("client_id", sa.String(64), nullable=False),
    sa.Column("params", sa.Text, nullable=False),
    sa.Column("expires_at", sa.Float, nullable=False),
)

oauth_codes = sa.Table(
    "oauth_codes",
    metadata,
    sa.Column("code_hash", sa.String(64), primary_key=True),
    sa.Column("client_id", sa.String(64), nullable=False),
    sa.Column("user_id", sa.String(32), sa.ForeignKey("users.id"), nullable=False),
    sa.Column("scopes", sa.String(64), nullable=False),
    sa.Column("code_challenge", sa.String(128), nullable=False),
    sa.Column("redirect_uri", sa.Text, nullable=False),
    sa.Column("redirect_explicit", sa.Boolean, nullable=False),
    sa.Column("resource", sa.Text, nullable=True),
    sa.Column("expires_at", sa.Float, nullable=False),
)

oauth_tokens = sa.Table(
    "oauth_tokens",
    metadata,
    sa.Column("token_hash", sa.String(64), primary_key=True),
    sa.Column("kind", sa.String(8), nullable=False),  # access | refresh
    # One sign-in's chain of tokens: revoking any of them, or reusing a rotated refresh token, ends it.
    sa.Column("grant_id", sa.String(32), nullable=False),
    sa.Column("client_id", sa.String(64), nullable=False),
    sa.Column("user_id", sa.String(32), sa.ForeignKey("users.id"), nullable=False),
    sa.Column("scopes", sa.String(64), nullable=False),
    sa.Column("resource", sa.Text, nullable=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("expires_at", sa.Float, nullable=False),
    sa.Column("revoked_at", sa.Float, nullable=True),
    sa.Index("ix_oauth_tokens_grant", "grant_id"),
)

signin_failures = sa.Table(  # wrong passwords on the sign-in page, within the lock-out window
    "signin_failures",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("user_name", sa.String(64), nullable=False),
    sa.Column("at", sa.Float, nullable=False),  # time.time(): every worker's clock
    sa.Index("ix_signin_failures_user", "user_name", "at"),
    sa.Index("ix_signin_failures_at", "at"),
)

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

"""OAuth: users' password hashes, and the embedded authorization server's clients, pending sign-ins,
codes and tokens (codes and tokens kept as SHA-256 hashes).

Revision ID: 0003_oauth
Revises: 0002_project_number
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003_oauth"
down_revision = "0002_project_number"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("password_hash", sa.String(256), nullable=True))
    op.create_table(
        "oauth_clients",
        sa.Column("client_id", sa.String(64), primary_key=True),
        sa.Column("info", sa.Text, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_table(
        "oauth_requests",
        sa.Column("id_hash", sa.String(64), primary_key=True),
        sa.Column("client_id", sa.String(64), nullable=False),
        sa.Column("params", sa.Text, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
    )
    op.create_table(
        "oauth_codes",
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
    op.create_table(
        "oauth_tokens",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("grant_id", sa.String(32), nullable=False),
        sa.Column("client_id", sa.String(64), nullable=False),
        sa.Column("user_id", sa.String(32), sa.ForeignKey("users.id"), nullable=False),
        sa.Column("scopes", sa.String(64), nullable=False),
        sa.Column("resource", sa.Text, nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
        sa.Column("revoked_at", sa.Float, nullable=True),
    )
    op.create_index("ix_oauth_tokens_grant", "oauth_tokens", ["grant_id"])


def downgrade() -> None:
    op.drop_index("ix_oauth_tokens_grant", "oauth_tokens")
    for table in ("oauth_tokens", "oauth_codes", "oauth_requests", "oauth_clients"):
        op.drop_table(table)
    with op.batch_alter_table("users") as batch:
        batch.drop_column("password_hash")

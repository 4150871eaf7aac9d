"""Wrong passwords on the sign-in page, kept in the store so every worker counts the same ones.

Revision ID: 0004_signin_failures
Revises: 0003_oauth
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_signin_failures"
down_revision = "0003_oauth"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "signin_failures",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("user_name", sa.String(64), nullable=False),
        sa.Column("at", sa.Float, nullable=False),
        sa.Index("ix_signin_failures_user", "user_name", "at"),
        sa.Index("ix_signin_failures_at", "at"),
    )


def downgrade() -> None:
    op.drop_table("signin_failures")

"""Each project gets a number of its own (1, 2, ...), never reused: its sandbox uid is derived from it.

Revision ID: 0002_project_number
Revises: 0001_core
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002_project_number"
down_revision = "0001_core"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.add_column(sa.Column("number", sa.Integer, nullable=True))
    projects = sa.table("projects", sa.column("id", sa.String), sa.column("created_at", sa.Float),
                        sa.column("number", sa.Integer))  # fmt: skip
    connection = op.get_bind()
    rows = connection.execute(sa.select(projects.c.id).order_by(projects.c.created_at, projects.c.id)).all()
    for number, row in enumerate(rows, start=1):
        connection.execute(projects.update().where(projects.c.id == row.id).values(number=number))
    with op.batch_alter_table("projects") as batch:
        batch.alter_column("number", existing_type=sa.Integer, nullable=False)
        batch.create_unique_constraint("uq_projects_number", ["number"])


def downgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.drop_constraint("uq_projects_number", type_="unique")
        batch.drop_column("number")

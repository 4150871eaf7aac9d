"""Alembic migrations of the hosted store (``versions/``: one module per revision)."""

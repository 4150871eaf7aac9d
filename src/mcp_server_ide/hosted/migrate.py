"""Brings a store's schema to the newest revision with Alembic (``migrations/``), at every start.

The revisions are package data, so an installed server migrates its own database; a PostgreSQL
store runs the same revisions. Processes starting together (workers, an operator's command) migrate
once: PostgreSQL under an advisory lock, SQLite under a lock file beside the database; the others
wait, then find the database at the head.
"""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.exc import DBAPIError

MIGRATION_LOCK = 0x6D6370696465  # "mcpide": the advisory lock key PostgreSQL migrations take
HEAD = "0004_signin_failures"
"""The newest revision (what :func:`upgrade` leaves a database at)."""


def upgrade(engine: sa.Engine) -> None:
    """Run every revision the database has not had yet (none: nothing happens)."""
    if _at_head(engine):
        return  # the common case, without importing Alembic (~0.5 s)
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(Path(__file__).with_name("migrations")))
    with _sqlite_lock(engine), engine.begin() as connection:
        if connection.dialect.name == "postgresql":  # held until this transaction ends
            connection.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


@contextlib.contextmanager
def _sqlite_lock(engine: sa.Engine) -> Iterator[None]:
    path = engine.url.database if engine.dialect.name == "sqlite" else None
    if not path or path == ":memory:":
        yield
        return
    with open(f"{path}.migrate-lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        yield


def current(engine: sa.Engine) -> str | None:
    """The revision the database is at (None: never migrated)."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def _at_head(engine: sa.Engine) -> bool:
    try:
        with engine.connect() as connection:
            found = connection.execute(sa.text("SELECT version_num FROM alembic_version")).scalars().all()
    except DBAPIError:
        return False  # no version table yet
    return found == [HEAD]

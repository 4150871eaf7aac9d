"""The hosted store: its schema comes from the versioned migrations and matches the tables the
queries use; tokens are kept as hashes; project lookups answer None alike for another user's,
a deleted and an unknown project.

Each test runs on SQLite (the embedded default) and on PostgreSQL (a real cluster from Debian's
package, started once for the module: tests/support/services.py; each test its own database).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from mcp_server_ide.hosted import migrate, tokens
from mcp_server_ide.hosted.schema import metadata
from mcp_server_ide.hosted.sqlstore import SqlStore, engine_url, sqlite_url
from tests.support.services import Service, new_database, start_postgres

_numbers = itertools.count()


@pytest.fixture(scope="module")
def postgres() -> Iterator[Service]:
    pg = start_postgres()
    try:
        yield pg
    finally:
        pg.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new, empty database's URL (the value ``--database`` takes)."""
    if request.param == "sqlite":
        return sqlite_url(tmp_path)
    pg: Service = request.getfixturevalue("postgres")
    return new_database(pg, f"t{os.getpid()}_{next(_numbers)}")


def test_the_migrations_make_the_schema_the_queries_use(database: str):
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    store = SqlStore(database)
    scripts = ScriptDirectory(str(Path(migrate.__file__).with_name("migrations")))
    assert scripts.get_current_head() == migrate.HEAD == "0004_signin_failures"
    assert migrate.current(store.engine) == migrate.HEAD
    with store.engine.connect() as connection:
        assert compare_metadata(MigrationContext.configure(connection), metadata) == []
    SqlStore(database).close()  # a second open migrates nothing and keeps the data
    store.close()


def test_tokens_are_stored_as_hashes_and_revoked_ones_stop_working(database: str):
    store = SqlStore(database)
    user = store.add_user("a")
    secret, info = tokens.create(store, user.id, ("read", "write"))
    with store.engine.connect() as c:
        stored = c.execute(sa.text("SELECT secret_hash FROM tokens")).scalar_one()
    assert stored == tokens.hash_secret(secret) and secret not in stored
    assert tokens.lookup(store, secret) == info
    assert tokens.lookup(store, secret + "x") is None
    assert tokens.lookup(store, "") is None
    assert store.revoke_token(info.id)
    assert tokens.lookup(store, secret) is None
    store.close()


def test_a_project_lookup_is_none_alike_for_another_users_a_deleted_and_an_unknown_one(database: str):
    store = SqlStore(database)
    a, b = store.add_user("a"), store.add_user("b")
    mine, theirs, gone = (
        store.add_project(a.id, "1"),
        store.add_project(b.id, "2"),
        store.add_project(a.id, "3"),
    )
    assert store.delete_project(a.id, gone.id) == gone
    assert store.project(a.id, mine.id) == mine
    assert [store.project(a.id, p) for p in (theirs.id, gone.id, "p_unknown")] == [None, None, None]
    assert store.rename_project(a.id, theirs.id, "x") is None
    assert store.delete_project(a.id, theirs.id) is None
    assert store.projects_of(a.id) == [mine]
    store.close()


def test_projects_are_numbered_once_and_an_old_database_gets_numbers(database: str, tmp_path: Path):
    """The number is the project's sandbox uid (``UID_BASE`` + it): two projects never share one,
    a deleted project's number is not given again, and a database made before numbers existed
    (revision 0001) has its projects numbered in the order they were made."""
    from alembic import command
    from alembic.config import Config

    from mcp_server_ide.hosted.projects import HostedProjects
    from mcp_server_ide.hosted.sandbox import project_uid
    from mcp_server_ide.workspace import Policy

    old = tmp_path / "old"
    old.mkdir()
    engine = sa.create_engine(engine_url(database))
    config = Config()
    config.set_main_option("script_location", str(Path(migrate.__file__).with_name("migrations")))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0001_core")
        connection.execute(sa.text("INSERT INTO users (id, name, created_at) VALUES ('u_1', 'a', 1)"))
        for pid, made in (("p_b", 2.0), ("p_a", 1.0)):
            connection.execute(
                sa.text("INSERT INTO projects (id, owner_id, name, created_at) VALUES (:i, 'u_1', 'x', :t)"),
                {"i": pid, "t": made},
            )
    engine.dispose()
    store = SqlStore(database)
    assert [(p.id, p.number) for p in store.projects_of("u_1")] == [("p_a", 1), ("p_b", 2)]
    gone = store.add_project("u_1", "3")
    assert gone.number == 3
    store.delete_project("u_1", gone.id)
    assert store.add_project("u_1", "4").number == 4
    projects = HostedProjects(store, old, Policy(hosted=True))
    uids = {projects.policy_of(p).sandbox_uid for p in store.projects_of("u_1")}
    assert uids == {project_uid(1), project_uid(2), project_uid(4)}
    store.close()


def test_workers_opening_a_new_database_together_migrate_it_once(database: str):
    """Several workers start at once on an empty database (the scale-out recipe): one runs the
    migrations, the others wait for it and find the schema at the head; none fails. (Processes, as
    workers are: Alembic's own state is per process.)"""
    import subprocess
    import sys

    opener = "import sys; from mcp_server_ide.hosted.sqlstore import SqlStore; SqlStore(sys.argv[1]).close()"
    starts = [
        subprocess.Popen([sys.executable, "-c", opener, database], stderr=subprocess.PIPE) for _ in range(3)
    ]
    errors = [p.communicate(timeout=120)[1].decode(errors="replace") for p in starts]
    assert [p.returncode for p in starts] == [0, 0, 0], errors
    store = SqlStore(database)
    assert migrate.current(store.engine) == migrate.HEAD
    store.close()


def test_token_and_project_lookups_survive_the_server_dropping_their_connections(postgres: Service):
    """A PostgreSQL restart or idle timeout closes the pooled connections: the next lookup of a
    token or a project (every request makes both) still answers, on a new connection."""
    import psycopg

    database = new_database(postgres, f"drop{os.getpid()}_{next(_numbers)}")
    store = SqlStore(database)
    user = store.add_user("a")
    secret, info = tokens.create(store, user.id, ("read",))
    project = store.add_project(user.id, "p")
    for _ in range(3):
        assert tokens.lookup(store, secret) == info
        assert store.project(user.id, project.id) == project
        name = database.rsplit("/", 1)[1]
        with psycopg.connect(postgres.extra["base"] + "/postgres", autocommit=True) as admin:
            ended = admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = %s", (name,)
            ).fetchone()
        assert ended is not None and ended[0] >= 1
    assert tokens.lookup(store, secret) == info
    assert store.project(user.id, project.id) == project
    store.close()

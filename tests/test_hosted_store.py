"""The hosted store: its schema comes from the versioned migrations and matches the tables the
queries use; tokens are kept as hashes; project lookups answer None alike for another user's,
a deleted and an unknown project."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from mcp_server_ide.hosted import migrate, tokens
from mcp_server_ide.hosted.schema import metadata
from mcp_server_ide.hosted.sqlstore import SqlStore, sqlite_url


def test_the_migrations_make_the_schema_the_queries_use(tmp_path: Path):
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    store = SqlStore(sqlite_url(tmp_path))
    scripts = ScriptDirectory(str(Path(migrate.__file__).with_name("migrations")))
    assert scripts.get_current_head() == migrate.HEAD == "0003_oauth"
    assert migrate.current(store.engine) == migrate.HEAD
    with store.engine.connect() as connection:
        assert compare_metadata(MigrationContext.configure(connection), metadata) == []
    SqlStore(sqlite_url(tmp_path)).close()  # a second open migrates nothing and keeps the data
    store.close()


def test_tokens_are_stored_as_hashes_and_revoked_ones_stop_working(tmp_path: Path):
    store = SqlStore(sqlite_url(tmp_path))
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


def test_a_project_lookup_is_none_alike_for_another_users_a_deleted_and_an_unknown_one(tmp_path: Path):
    store = SqlStore(sqlite_url(tmp_path))
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


def test_projects_are_numbered_once_and_an_old_database_gets_numbers(tmp_path: Path):
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
    engine = sa.create_engine(sqlite_url(old))
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
    store = SqlStore(sqlite_url(old))
    assert [(p.id, p.number) for p in store.projects_of("u_1")] == [("p_a", 1), ("p_b", 2)]
    gone = store.add_project("u_1", "3")
    assert gone.number == 3
    store.delete_project("u_1", gone.id)
    assert store.add_project("u_1", "4").number == 4
    projects = HostedProjects(store, old, Policy(hosted=True))
    uids = {projects.policy_of(p).sandbox_uid for p in store.projects_of("u_1")}
    assert uids == {project_uid(1), project_uid(2), project_uid(4)}
    store.close()

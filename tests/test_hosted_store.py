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
    assert scripts.get_current_head() == migrate.HEAD == "0001_core"
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

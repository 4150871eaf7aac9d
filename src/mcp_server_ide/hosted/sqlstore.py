"""The :class:`~.store.Store` on SQLAlchemy Core: SQLite in the data folder (the embedded default),
or PostgreSQL (``postgresql://user:password@host:port/db``, through psycopg 3) for several workers.
The schema comes from the migrations (:mod:`.migrate`), run at open.
"""

from __future__ import annotations

import secrets
import time
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.exc import IntegrityError

from . import migrate
from .schema import projects, tokens, users
from .sqlreads import Reads
from .store import Project, StoreError, TokenInfo, User


def new_id(prefix: str) -> str:
    """A random public id (``p_…``, ``u_…``, ``t_…``): 80 bits, lowercase, URL-safe."""
    return prefix + secrets.token_hex(10)


def sqlite_url(data: Path) -> str:
    return f"sqlite:///{data / 'hosted.sqlite3'}"


def engine_url(url: str) -> str:
    """The SQLAlchemy URL of a ``--database`` value: ``postgresql://`` (or ``postgres://``, as many
    hosting panels print it) means the psycopg 3 driver, which the service depends on."""
    for scheme in ("postgresql://", "postgres://"):
        if url.startswith(scheme):
            return "postgresql+psycopg://" + url[len(scheme) :]
    return url


class SqlStore:
    def __init__(self, url: str) -> None:
        url = engine_url(url)
        connect_args: dict[str, object] = {}
        options: dict[str, object] = {}
        if url.startswith("sqlite"):
            connect_args = {"check_same_thread": False, "timeout": 30}
        else:  # a server: drop connections it closed (a restart, an idle timeout) rather than fail a request
            options = {"pool_pre_ping": True, "pool_size": 10, "max_overflow": 20}
        self.engine = sa.create_engine(url, connect_args=connect_args, **options)
        if url.startswith("sqlite"):

            @event.listens_for(self.engine, "connect")
            def _pragmas(dbapi_connection: object, _record: object) -> None:
                cursor = dbapi_connection.cursor()  # pyright: ignore[reportAttributeAccessIssue]
                cursor.execute("PRAGMA journal_mode=WAL")
                cursor.execute("PRAGMA foreign_keys=ON")
                cursor.close()

        migrate.upgrade(self.engine)
        self.reads = Reads.for_url(url, self.engine)

    # users

    def add_user(self, name: str) -> User:
        if not name or len(name) > 64 or not name.isprintable():
            raise StoreError("a user name is 1-64 printable characters")
        with self.engine.begin() as c:
            if c.execute(sa.select(users.c.id).where(users.c.name == name)).first():
                raise StoreError(f"a user named {name!r} exists already")
            user = User(new_id("u_"), name)
            c.execute(users.insert().values(id=user.id, name=name, created_at=time.time()))
        return user

    def user_by_name(self, name: str) -> User | None:
        with self.engine.connect() as c:
            row = c.execute(sa.select(users.c.id, users.c.name).where(users.c.name == name)).first()
        return User(row.id, row.name) if row else None

    def user_by_id(self, user_id: str) -> User | None:
        with self.engine.connect() as c:
            row = c.execute(sa.select(users.c.id, users.c.name).where(users.c.id == user_id)).first()
        return User(row.id, row.name) if row else None

    def set_password_hash(self, user_id: str, password_hash: str | None) -> None:
        with self.engine.begin() as c:
            c.execute(users.update().where(users.c.id == user_id).values(password_hash=password_hash))

    def password_hash(self, name: str) -> tuple[User, str | None] | None:
        query = sa.select(users.c.id, users.c.name, users.c.password_hash).where(users.c.name == name)
        with self.engine.connect() as c:
            row = c.execute(query).first()
        return (User(row.id, row.name), row.password_hash) if row else None

    # tokens

    def add_token(self, user_id: str, secret_hash: str, scopes: tuple[str, ...], name: str) -> TokenInfo:
        info = TokenInfo(new_id("t_"), user_id, name, scopes, time.time(), False)
        with self.engine.begin() as c:
            c.execute(
                tokens.insert().values(
                    id=info.id,
                    user_id=user_id,
                    name=name,
                    secret_hash=secret_hash,
                    scopes=",".join(scopes),
                    created_at=info.created_at,
                )
            )
        return info

    def token_by_hash(self, secret_hash: str) -> TokenInfo | None:
        query = sa.select(tokens).where(tokens.c.secret_hash == secret_hash, tokens.c.revoked_at.is_(None))
        row = self.reads.first(query)
        if row is None or not secrets.compare_digest(row.secret_hash, secret_hash):
            return None
        return _token(row)

    def revoke_token(self, token_id: str) -> bool:
        with self.engine.begin() as c:
            done = c.execute(
                tokens.update()
                .where(tokens.c.id == token_id, tokens.c.revoked_at.is_(None))
                .values(revoked_at=time.time())
            )
        return done.rowcount == 1

    def tokens_of(self, user_id: str) -> list[TokenInfo]:
        with self.engine.connect() as c:
            rows = c.execute(
                sa.select(tokens).where(tokens.c.user_id == user_id).order_by(tokens.c.created_at)
            )
        return [_token(r) for r in rows]

    # projects

    def add_project(self, owner_id: str, name: str) -> Project:
        for _attempt in range(8):  # two workers taking the same next number: one retries
            try:
                with self.engine.begin() as c:
                    number = c.execute(
                        sa.select(sa.func.coalesce(sa.func.max(projects.c.number), 0))
                    ).scalar_one()
                    project = Project(new_id("p_"), owner_id, name, time.time(), number + 1)
                    c.execute(
                        projects.insert().values(
                            id=project.id,
                            owner_id=owner_id,
                            name=name,
                            created_at=project.created_at,
                            number=project.number,
                        )
                    )
                return project
            except IntegrityError:
                continue
        raise StoreError("could not number the new project (too many at once); try again")

    def project(self, owner_id: str, project_id: str) -> Project | None:
        query = sa.select(projects).where(
            projects.c.owner_id == owner_id, projects.c.id == project_id, projects.c.deleted_at.is_(None)
        )
        row = self.reads.first(query)
        return _project(row) if row else None

    def projects_of(self, owner_id: str) -> list[Project]:
        query = (
            sa.select(projects)
            .where(projects.c.owner_id == owner_id, projects.c.deleted_at.is_(None))
            .order_by(projects.c.created_at, projects.c.id)
        )
        with self.engine.connect() as c:
            return [_project(r) for r in c.execute(query)]

    def all_projects(self) -> list[Project]:
        query = sa.select(projects).where(projects.c.deleted_at.is_(None)).order_by(projects.c.created_at)
        with self.engine.connect() as c:
            return [_project(r) for r in c.execute(query)]

    def rename_project(self, owner_id: str, project_id: str, name: str) -> Project | None:
        with self.engine.begin() as c:
            done = c.execute(
                projects.update().where(*_live(owner_id, project_id)).values(name=name).returning(projects)
            ).first()
        return _project(done) if done else None

    def delete_project(self, owner_id: str, project_id: str) -> Project | None:
        with self.engine.begin() as c:
            done = c.execute(
                projects.update()
                .where(*_live(owner_id, project_id))
                .values(deleted_at=time.time())
                .returning(projects)
            ).first()
        return _project(done) if done else None

    def ping(self) -> None:
        with self.engine.connect() as c:
            c.execute(sa.text("SELECT 1"))

    def close(self) -> None:
        self.reads.close()
        self.engine.dispose()


def _live(owner_id: str, project_id: str) -> tuple[sa.ColumnElement[bool], ...]:
    return (projects.c.owner_id == owner_id, projects.c.id == project_id, projects.c.deleted_at.is_(None))


def _token(row: sa.Row[object]) -> TokenInfo:
    m = row._mapping
    return TokenInfo(
        m["id"],
        m["user_id"],
        m["name"],
        tuple(s for s in m["scopes"].split(",") if s),
        m["created_at"],
        m["revoked_at"] is not None,
    )


def _project(row: sa.Row[object]) -> Project:
    m = row._mapping
    return Project(m["id"], m["owner_id"], m["name"], m["created_at"], m["number"])

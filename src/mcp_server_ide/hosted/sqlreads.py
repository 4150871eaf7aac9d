"""The hot reads of every hosted request (the bearer token, the project) on a pool of their own.

Each request looks up its token and its project. On the writers' pool each lookup costs three round
trips to PostgreSQL: the pool's liveness ping, the query, and the rollback that ends the transaction
the query opened. :class:`Reads` runs them on autocommit connections without a ping, one round trip
each. A connection the server dropped (a restart, an idle timeout) fails its query once: SQLAlchemy
then throws away every connection of the pool opened before, and the query runs again on a new one.
SQLite reads stay on the store's own engine (no round trips there).
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import DBAPIError


class Reads:
    """Reads on ``engine`` (as it is: :meth:`for_url` makes the pool of its own)."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine

    @classmethod
    def for_url(cls, url: str, engine: sa.Engine) -> Reads:
        """The reads of the store at ``url`` (its engine ``engine``)."""
        if url.startswith("sqlite"):
            return cls(engine)
        return cls(sa.create_engine(url, isolation_level="AUTOCOMMIT", pool_size=10, max_overflow=20))

    def first(self, query: sa.Select[Any]) -> sa.Row[Any] | None:
        """The first row of ``query``, or None."""
        for attempt in range(2):
            try:
                with self.engine.connect() as c:
                    return c.execute(query).first()
            except DBAPIError as error:
                if attempt or not error.connection_invalidated:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        self.engine.dispose()

"""Hosted, multi-tenant mode: users, their API tokens and their projects, served by the same server.

- :mod:`.cli` (``mcp-server-ide hosted …``), :mod:`.serve` (the service), :mod:`.admin` (operators' commands)
- :mod:`.store` (the interface), :mod:`.sqlstore` (SQLAlchemy Core: SQLite embedded, or PostgreSQL),
  :mod:`.schema` (the tables), :mod:`.migrate` + ``migrations/`` (Alembic revisions, ``0001_core`` first)
- :mod:`.tokens` (made once, stored as SHA-256, the SDK's ``TokenVerifier``), :mod:`.passwords` (scrypt)
- :mod:`.oauth` (OAuth 2.1: protected resource metadata, audience per project, the embedded
  authorization server and its sign-in page, delegation to an external identity provider)
- :mod:`.projects` (each project a workspace confined to its folder), :mod:`.owner_tools` (create, list,
  rename, delete, export)
- :mod:`.app` (``/p/{project}/…``: bearer auth, one "no such project" answer, then the ordinary doors),
  :mod:`.responses` (its fixed answers), :mod:`.observe` (JSON logs, Prometheus metrics)
- :mod:`.scaleout` (``--redis``: several workers; any of them serves any session, rebuilt from Redis)

The per-project process sandbox (bubblewrap) lives with the process engine (``engines/processes/``).
"""

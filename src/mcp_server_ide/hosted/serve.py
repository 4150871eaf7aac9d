"""``mcp-server-ide hosted --data DIR``: the hosted service, one process, the same server and tools.

Builds the server with every tool plus the owner tools, one workspace per project
(:class:`~.projects.HostedProjects`), the ordinary HTTP doors (:func:`..doors.http.build_app`)
behind :class:`~.app.HostedApp`, and serves them with uvicorn. With ``--redis`` (and ``--database``)
it is one of several workers: :mod:`.scaleout`. SIGTERM drains: uvicorn stops
accepting, lets requests finish (``--grace`` seconds), then the doors' shutdown closes every
workspace and kills every process they started.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from urllib.parse import urlsplit

OWNER_TOOLS = "mcp_server_ide.hosted.owner_tools"


SQLITE_WITH_REDIS = (
    "mcp-server-ide: warning: --redis without --database postgresql://…: users, tokens and projects "
    "stay in SQLite ({store}), which only workers on this one machine can share (SQLite over a network "
    "volume corrupts); for workers on several machines, give them all --database postgresql://…"
)


def open_store(data: Path, database: str | None):  # -> SqlStore
    from .sqlstore import SqlStore, sqlite_url

    data.mkdir(mode=0o700, parents=True, exist_ok=True)
    return SqlStore(database or sqlite_url(data))


def oauth_setup(args: argparse.Namespace, store, base: str):  # -> (verifier, Resources, ASGI app)
    """The bearer verifier and the OAuth endpoints: the embedded authorization server (the default),
    or, with ``--issuer``, the external identity provider's JWTs checked against its JWKS and, with
    ``--introspection-client-id``, its other (or all) tokens asked of its introspection endpoint."""
    from .oauth import routes
    from .oauth.external import JwtVerifier, discover, discover_jwks_uri
    from .oauth.introspect import IntrospectionVerifier, read_secret
    from .oauth.provider import HostedProvider
    from .oauth.resource import Resources
    from .oauth.store import OAuthStore
    from .oauth.verify import ExternalVerifier, HostedVerifier
    from .tokens import ApiTokenVerifier

    api = ApiTokenVerifier(store)
    wants_introspection = (
        args.introspection_uri or args.introspection_client_secret_file or args.introspect_all_tokens
    )
    if wants_introspection and not args.introspection_client_id:
        raise SystemExit(
            "mcp-server-ide hosted: the --introspection-… options need --introspection-client-id ID"
        )
    if args.introspection_client_id and not args.issuer:
        raise SystemExit(
            "mcp-server-ide hosted: --introspection-client-id needs --issuer URL (the identity provider)"
        )
    if args.issuer:
        issuer = args.issuer.rstrip("/")
        resources = Resources(base, issuer, frozenset(a.rstrip("/") for a in args.audience))
        introspection = None
        if args.introspection_client_id:
            secret = read_secret(args.introspection_client_secret_file)
            endpoint = args.introspection_uri or discover(
                issuer, "introspection_endpoint", "--introspection-uri"
            )
            introspection = IntrospectionVerifier(
                store,
                issuer,
                endpoint,
                args.introspection_client_id,
                secret,
                args.user_claim,
                timeout=args.introspection_timeout,
                cache_seconds=args.introspection_cache,
            )
        jwts = None
        if introspection is None or not args.introspect_all_tokens:
            jwks = args.jwks_uri or discover_jwks_uri(issuer)
            jwts = JwtVerifier(store, issuer, jwks, args.user_claim)
        verifier = HostedVerifier(api, external=ExternalVerifier(jwts, introspection))
        return verifier, resources, routes.build(resources, None, store)
    resources = Resources(base, base)
    provider = HostedProvider(
        OAuthStore(store.engine, access_ttl=args.token_ttl, reads=store.reads), resources
    )
    verifier = HostedVerifier(api, embedded=provider)
    return verifier, resources, routes.build(resources, provider, store)


def serve(args: argparse.Namespace) -> int:
    from .observe import use_json_logs

    use_json_logs(args.log_level)
    import anyio

    anyio.run(_serve, args)
    return 0


async def _serve(args: argparse.Namespace) -> None:
    import uvicorn

    from ..doors import http
    from ..doors.deadlines import ConnectionLimits, bounded_protocol
    from ..doors.ratelimit import RateSettings
    from ..engines.processes.limits import parse_size
    from ..server import ServerOptions, build_server
    from ..surface.lowlevel import open_sessions
    from ..workspace import Policy
    from .app import HostedApp, user_key
    from .observe import Observer
    from .projects import HostedProjects
    from .sandbox import SandboxSettings
    from .sqlstore import sqlite_url

    data = Path(args.data).resolve()
    store = open_store(data, args.database)
    # Trusted: the project is its owner's own and its commands run in the sandbox; what would run outside
    # it (git hooks, filters, fsmonitor) stays off because the workspace is hosted.
    policy = Policy(hosted=True, trusted=True)
    sandbox = SandboxSettings(quota=parse_size(args.project_quota), network=args.project_network)
    projects = HostedProjects(store, data, policy, sandbox)
    projects.idle_evict, projects.max_open = args.idle_evict, args.max_open_projects
    projects.start_eviction()
    server, runner = build_server(projects.for_context, ServerOptions(plugins=[OWNER_TOOLS]))
    observer = Observer(lambda: open_sessions(server), lambda: len(projects.all()))
    runner.observers.append(observer.tool)
    settings = http.HttpSettings(
        host=args.host,
        port=args.port,
        bearer_auth=True,
        legacy_sse=False,
        allowed_hosts=args.allowed_host,
        allowed_origins=args.allow_origin,
        limits=ConnectionLimits(),
        rate=RateSettings(args.rate_limit, args.rate_burst, args.max_concurrent, key=user_key),
    )
    sock, port = http.pick_port(args.host, args.port)
    shown = f"[{args.host}]" if ":" in args.host else args.host
    base = (args.public_url or f"http://{shown}:{port}").rstrip("/")
    settings.allowed_hosts.append(urlsplit(base).netloc)
    doors = http.build_app(server, runner, projects, settings, port)
    verifier, resources, oauth_app = oauth_setup(args, store, base)
    app = HostedApp(doors, projects, verifier, observer, resources, oauth_app, embedded=not args.issuer)
    scale = None
    if args.redis and not (args.database or "").startswith(("postgresql:", "postgres:")):
        store_url = args.database or sqlite_url(data)
        print(SQLITE_WITH_REDIS.format(store=store_url), file=sys.stderr, flush=True)
    if args.redis:
        from .scaleout import ScaleOut

        scale = ScaleOut(server, args.redis)
        scale.install()
        app = scale.wrap(app)
    print(
        f"mcp-server-ide: hosted service listening on http://{shown}:{port} "
        "(projects at /p/<project>/mcp; /healthz, /readyz, /metrics)",
        file=sys.stderr,
        flush=True,
    )
    config = uvicorn.Config(
        app,
        log_level="warning",
        log_config=None,  # uvicorn's own lines go through the JSON handler too
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=args.grace,
        timeout_keep_alive=settings.limits.keep_alive,  # past the clients' pool expiry (.deadlines)
        http=bounded_protocol(settings.limits),
    )
    try:
        if scale is None:
            await uvicorn.Server(config).serve(sockets=[sock])
        else:
            async with scale.running():
                await uvicorn.Server(config).serve(sockets=[sock])
    finally:
        store.close()

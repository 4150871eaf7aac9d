"""``mcp-server-ide hosted …``: serve the hosted service, or manage its users, tokens and projects.

    mcp-server-ide hosted --data DIR [--host H] [--port N]      serve
    mcp-server-ide hosted --data DIR --database postgresql://… --redis redis://…   one of several workers
    mcp-server-ide hosted user add NAME [--password] --data DIR
    mcp-server-ide hosted user passwd NAME --data DIR
    mcp-server-ide hosted token create USER [--scope read,write,run] [--name NAME] --data DIR
    mcp-server-ide hosted token revoke ID --data DIR
    mcp-server-ide hosted token list USER --data DIR
    mcp-server-ide hosted project create USER NAME | list [USER] | delete USER ID | export ID FILE

``--data`` defaults to ``$MCP_IDE_DATA``. A new token is printed once, on stdout; only its hash is kept.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ADMIN = ("user", "token", "project")


def _data_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--data",
        default=os.environ.get("MCP_IDE_DATA"),
        help="the service's data folder (SQLite store, project files); default $MCP_IDE_DATA",
    )
    p.add_argument("--database", default=os.environ.get("MCP_IDE_DATABASE"), help=argparse.SUPPRESS)


def serve_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="mcp-server-ide hosted",
        description="The hosted, multi-user service: each user's projects at /p/<project>/mcp; API tokens, "
        "OAuth sign-in (built in, or an external identity provider with --issuer).",
        epilog="admin: mcp-server-ide hosted user add NAME [--password] | user passwd NAME | token create USER | token revoke ID | "
        "token list USER | project create USER NAME | project list [USER] | project delete USER ID | "
        "project export ID FILE",
    )
    _data_arg(p)
    p.add_argument(
        "--redis",
        default=os.environ.get("MCP_IDE_REDIS"),
        help="redis://host:port/db: sessions shared among workers, so any worker serves any request "
        "(with --database postgresql://…; default: in this process); or $MCP_IDE_REDIS",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, help="port (default: the first free in 9960-9990; 0 = any free)")
    p.add_argument("--allowed-host", action="append", default=[], help="extra Host header value to accept")
    p.add_argument("--allow-origin", action="append", default=[], help="extra browser Origin allowed to call")
    p.add_argument(
        "--grace", type=float, default=10.0, help="seconds requests may take to finish at shutdown"
    )
    p.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    p.add_argument(
        "--project-quota",
        default="1G",
        help="bytes each project's files may take (e.g. 512M, 2G; default 1G)",
    )
    p.add_argument(
        "--project-network",
        action="store_true",
        help="let projects' commands reach the network (default: none)",
    )
    p.add_argument(
        "--public-url",
        help="the URL clients reach the service at (behind a proxy: https://ide.example.com); OAuth "
        "resource and issuer URLs are built from it (default http://HOST:PORT)",
    )
    p.add_argument(
        "--issuer",
        help="sign in with this external identity provider (its JWT access tokens are checked against "
        "its JWKS) instead of the built-in sign-in",
    )
    p.add_argument("--jwks-uri", help="the issuer's JWKS URL (default: from the issuer's metadata)")
    p.add_argument(
        "--audience",
        action="append",
        default=[],
        help="a token audience accepted for every project (the IdP's API identifier); repeatable",
    )
    p.add_argument(
        "--introspection-client-id",
        help="check the issuer's opaque (non-JWT) access tokens at its token introspection endpoint "
        "(RFC 7662), signing in there as this client (HTTP Basic); its secret comes from "
        "--introspection-client-secret-file or the MCP_IDE_INTROSPECTION_CLIENT_SECRET variable",
    )
    p.add_argument(
        "--introspection-uri",
        help="the issuer's introspection endpoint (default: introspection_endpoint of its metadata)",
    )
    p.add_argument(
        "--introspection-client-secret-file",
        metavar="FILE",
        help="a file whose first line is the introspection client's secret",
    )
    p.add_argument(
        "--introspection-cache",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="reuse an active introspection answer this long at most (and never past the token's "
        "expiry): a token revoked at the provider stops working within it (0 = ask every time; default 60)",
    )
    p.add_argument(
        "--introspection-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="refuse a token whose introspection has no answer within this (default 10)",
    )
    p.add_argument(
        "--introspect-all-tokens",
        action="store_true",
        help="ask the introspection endpoint about every token, JWTs too (then no JWKS is needed)",
    )
    p.add_argument("--user-claim", default="sub", help="the token claim naming the hosted user (default sub)")
    p.add_argument(
        "--token-ttl", type=float, default=3600.0, help="seconds a built-in sign-in's access token lives"
    )
    p.add_argument("--rate-limit", type=float, default=0.0, help="requests a second per user (0 = none)")
    p.add_argument(
        "--idle-evict",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="close a project's engines (language servers, watchers) after this long unused, "
        "unless a job, a terminal's command or a debug session runs; the next request reopens it (0 = never; default 600)",
    )
    p.add_argument(
        "--max-open-projects",
        type=int,
        default=100,
        help="projects kept open at once; past it the least recently used idle one is closed (0 = no cap; default 100)",
    )
    p.add_argument("--rate-burst", type=int, default=0, help="requests a user may make at once (0 = 2x rate)")
    p.add_argument("--max-concurrent", type=int, default=0, help="requests of a user in flight (0 = no cap)")
    return p


def admin_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mcp-server-ide hosted")
    groups = p.add_subparsers(dest="group", required=True)
    user = groups.add_parser("user").add_subparsers(dest="action", required=True)
    add = user.add_parser("add", help="add a user")
    add.add_argument("name")
    add.add_argument(
        "--password",
        action="store_true",
        help="set a password for the built-in sign-in (asked for; read from stdin when it is not a terminal)",
    )
    passwd = user.add_parser("passwd", help="set or change a user's sign-in password (ends their sign-ins)")
    passwd.add_argument("name")
    token = groups.add_parser("token").add_subparsers(dest="action", required=True)
    create = token.add_parser("create", help="make an API token for a user and print it once")
    create.add_argument("user")
    create.add_argument("--scope", default="read,write,run", help="comma-separated: read, write, run")
    create.add_argument("--name", default="", help="a label to tell tokens apart")
    revoke = token.add_parser("revoke", help="revoke a token by its id (t_…)")
    revoke.add_argument("id")
    listing = token.add_parser("list", help="a user's tokens (ids, names, scopes; never the secrets)")
    listing.add_argument("user")
    project = groups.add_parser("project").add_subparsers(dest="action", required=True)
    pc = project.add_parser("create", help="create a project for a user")
    pc.add_argument("user")
    pc.add_argument("name")
    pl = project.add_parser("list", help="projects of a user, or of everyone")
    pl.add_argument("user", nargs="?")
    pd = project.add_parser("delete", help="delete a user's project and its files")
    pd.add_argument("user")
    pd.add_argument("id")
    pe = project.add_parser("export", help="write a project's files as .tar.gz")
    pe.add_argument("id")
    pe.add_argument("file", type=Path)
    for sub in (add, passwd, create, revoke, listing, pc, pl, pd, pe):
        _data_arg(sub)
    return p


def main(argv: list[str]) -> int:
    if argv and argv[0] in ADMIN:
        args = admin_parser().parse_args(argv)
        if not args.data:
            print("mcp-server-ide hosted: give --data DIR (or set MCP_IDE_DATA)", file=sys.stderr)
            return 2
        from .admin import run

        return run(args)
    args = serve_parser().parse_args(argv)
    if not args.data:
        print("mcp-server-ide hosted: give --data DIR (or set MCP_IDE_DATA)", file=sys.stderr)
        return 2
    from .serve import serve

    return serve(args)

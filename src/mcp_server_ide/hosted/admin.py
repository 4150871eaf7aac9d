"""The operator's commands on the store (``mcp-server-ide hosted user|token|project …``)."""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from pathlib import Path

from ..workspace import Policy
from . import passwords
from .oauth.store import OAuthStore
from .projects import HostedProjects
from .serve import open_store
from .sqlstore import SqlStore
from .store import Store, StoreError, User
from .tokens import create, parse_scopes


def run(args: argparse.Namespace) -> int:
    store = open_store(Path(args.data).resolve(), args.database)
    try:
        return _run(store, Path(args.data).resolve(), args)
    except StoreError as exc:
        print(f"mcp-server-ide hosted: {exc}", file=sys.stderr)
        return 1
    finally:
        store.close()


def read_password() -> str:
    """A new password: asked twice on a terminal, else one line of stdin (for scripts)."""
    if sys.stdin.isatty():
        first = getpass.getpass("password: ")
        if getpass.getpass("again: ") != first:
            raise StoreError("the two passwords differ")
        return passwords.check(first)
    return passwords.check(sys.stdin.readline().rstrip("\r\n"))


def _user(store: Store, name: str) -> User:
    user = store.user_by_name(name)
    if user is None:
        raise StoreError(f"no user named {name!r} (add one with `mcp-server-ide hosted user add NAME`)")
    return user


def _run(store: SqlStore, data: Path, args: argparse.Namespace) -> int:
    what = (args.group, args.action)
    projects = HostedProjects(store, data, Policy(hosted=True, trusted=False))
    if what == ("user", "add"):
        password = read_password() if args.password else None
        user = store.add_user(args.name)
        if password is not None:
            store.set_password_hash(user.id, passwords.make(password))
        print(json.dumps({"id": user.id, "name": user.name, "password": password is not None}))
    elif what == ("user", "passwd"):
        user = _user(store, args.name)
        store.set_password_hash(user.id, passwords.make(read_password()))
        ended = OAuthStore(store.engine).revoke_user(user.id)
        print(f"password set for {user.name}; {ended} OAuth token(s) of their sign-ins revoked")
    elif what == ("token", "create"):
        secret, info = create(store, _user(store, args.user).id, parse_scopes(args.scope), args.name)
        print(secret)  # the one time it is shown
        print(
            f"token {info.id} for {args.user} ({','.join(info.scopes)}): store it now, it is not shown again",
            file=sys.stderr,
        )
    elif what == ("token", "revoke"):
        if not store.revoke_token(args.id):
            raise StoreError(f"no live token {args.id!r}")
        print(f"revoked {args.id}")
    elif what == ("token", "list"):
        for t in store.tokens_of(_user(store, args.user).id):
            print(json.dumps({"id": t.id, "name": t.name, "scopes": list(t.scopes), "revoked": t.revoked}))
    elif what == ("project", "create"):
        project = projects.create(_user(store, args.user).id, args.name)
        print(json.dumps({"id": project.id, "name": project.name, "url": f"/p/{project.id}/mcp"}))
    elif what == ("project", "list"):
        found = store.projects_of(_user(store, args.user).id) if args.user else store.all_projects()
        for p in found:
            print(json.dumps({"id": p.id, "owner": p.owner_id, "name": p.name}))
    elif what == ("project", "delete"):
        if projects.delete(_user(store, args.user).id, args.id) is None:
            raise StoreError("no such project")
        print(f"deleted {args.id}")
    elif what == ("project", "export"):
        found = next((p for p in store.all_projects() if p.id == args.id), None)
        if found is None:
            raise StoreError("no such project")
        with open(args.file, "wb") as out:
            projects.export(found, out)
        print(f"wrote {args.file}")
    return 0

"""The hosted service's front door: one ASGI app in front of the ordinary HTTP doors.

For ``/p/{project}/…`` it authenticates the bearer token (the SDK's ``BearerAuthBackend`` over
:class:`~.oauth.verify.HostedVerifier`: API tokens, OAuth access tokens; 401 with ``WWW-Authenticate``
naming the project's protected resource metadata when it is missing, not live, or for another
resource: :mod:`.oauth.resource`), looks the project up by (caller, id) in one query, and answers the same bytes for a project that is
another user's, deleted, or never existed. Only then does the request reach the doors the local
server has (Streamable HTTP at ``/mcp``, the JetBrains-style REST doors at ``/mcp/{tool}``, the
reference and playground at ``/mcp/tools``), with its path cut to what follows the project, the
project in the scope (:data:`~.projects.SCOPE_KEY`) and the caller as ``scope["user"]``: the
SDK binds each MCP session to it, so a session is usable only by the token and project that
opened it. ``GET /p/{project}/export`` downloads the project as .tar.gz.

Outside ``/p/``: ``/healthz`` (the process answers), ``/readyz`` (the store answers),
``/metrics`` (Prometheus), the OAuth endpoints (:mod:`.oauth.routes`); anything else is 404.
"""

from __future__ import annotations

import os
import re
import secrets
import tempfile
import time
from collections.abc import Awaitable, Callable

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, BearerAuthBackend
from mcp.server.auth.provider import TokenVerifier
from starlette.authentication import AuthCredentials
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from . import responses
from .oauth import routes as oauth_routes
from .oauth.resource import Resources
from .observe import Observer
from .projects import SCOPE_KEY, HostedProjects, tmp_dir
from .store import Project

PROJECT_PATH = re.compile(r"/p/([^/]{1,64})(/.*)?")
REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")


class HostedApp:
    def __init__(
        self,
        doors: ASGIApp,
        projects: HostedProjects,
        verifier: TokenVerifier,
        observer: Observer,
        resources: Resources,
        oauth_app: ASGIApp | None = None,
        embedded: bool = False,
    ) -> None:
        self.doors = doors
        self.projects = projects
        self.auth = BearerAuthBackend(verifier)
        self.observer = observer
        self.resources = resources
        self.oauth_app = oauth_app
        self.embedded = embedded

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.doors(scope, receive, send)  # the doors' start and stop (sessions, workspaces)
            return
        if scope["type"] != "http":  # no websocket door: refused before any of them sees it
            await send({"type": "websocket.close", "code": 1008})
            return
        rid = _request_id(scope)
        started = time.perf_counter()
        seen: dict[str, object] = {"status": 0}

        async def observed_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                seen["status"] = message["status"]
                message = {
                    **message,
                    "headers": [*message.get("headers", []), (b"x-request-id", rid.encode())],
                }
            await send(message)

        scope["mcp_ide.request_id"] = rid
        counted = scope["path"] not in OPS
        if counted:
            self.observer.in_flight.inc()
        try:
            await self._serve(scope, receive, observed_send, seen)
        finally:
            if counted:
                self.observer.in_flight.dec()
            self.observer.request(scope, seen, time.perf_counter() - started)

    async def _serve(self, scope: Scope, receive: Receive, send: Send, seen: dict[str, object]) -> None:
        path: str = scope["path"]
        if path in OPS:
            await OPS[path](self, send)
            return
        match = PROJECT_PATH.fullmatch(path)
        if match is None:
            if self.oauth_app is not None and oauth_routes.serves(path, self.embedded):
                await self.oauth_app(scope, receive, send)
                return
            await responses.send_bytes(send, 404, responses.NOT_HOSTED_PATH)
            return
        path_project = match.group(1)
        authenticated = await self.auth.authenticate(HTTPConnection(scope))
        if authenticated is None:
            given = any(k.lower() == b"authorization" for k, _ in scope.get("headers", []))
            challenge = self.resources.challenge(path_project, "invalid_token" if given else None)
            await responses.send_bytes(
                send, 401, responses.UNAUTHORIZED, responses.challenge_headers(challenge)
            )
            return
        user = authenticated[1]
        assert isinstance(user, AuthenticatedUser)
        if not self.resources.accepts(user.access_token, path_project):
            challenge = self.resources.challenge(path_project, "invalid_token", responses.OTHER_RESOURCE_TEXT)
            await responses.send_bytes(
                send, 401, responses.OTHER_RESOURCE, responses.challenge_headers(challenge)
            )
            return
        owner = user.access_token.subject or ""
        seen["user"] = owner
        project = await anyio.to_thread.run_sync(self.projects.find, owner, path_project)
        if project is None:
            await responses.send_bytes(send, 404, responses.NO_SUCH_PROJECT)
            return
        seen["project"] = project.id
        rest = match.group(2) or "/"
        if rest == "/export":
            await self._export(scope, user, project, send)
            return
        # The session key: this token, this project (the SDK refuses a session to any other).
        bound = user.access_token.model_copy(update={"subject": f"{owner}/{project.id}"})
        inner = dict(scope)
        inner.update(
            path=rest,
            raw_path=rest.encode(),
            user=AuthenticatedUser(bound),
            auth=AuthCredentials(bound.scopes),
        )
        inner[SCOPE_KEY] = project
        seen["door"] = door_of(rest)
        with self.projects.in_use(project.id):  # not evicted while a request to it runs
            await self.doors(inner, receive, send)

    async def _export(self, scope: Scope, user: AuthenticatedUser, project: Project, send: Send) -> None:
        if scope["method"] != "GET":
            await responses.send_bytes(
                send, 405, b'{"status":null,"error":"method not allowed: GET the export"}'
            )
            return
        if "read" not in user.scopes:
            body = b'{"status":null,"error":"refused: exporting needs a token with the \'read\' scope"}'
            await responses.send_bytes(send, 403, body)
            return
        fd, name = tempfile.mkstemp(suffix=".tar.gz", dir=tmp_dir(self.projects.data))
        try:
            with os.fdopen(fd, "w+b") as out:
                await anyio.to_thread.run_sync(self.projects.export, project, out)
                size = out.tell()
                out.seek(0)
                headers = [
                    (b"content-type", b"application/gzip"),
                    (b"content-length", str(size).encode()),
                    (b"content-disposition", f'attachment; filename="{project.id}.tar.gz"'.encode()),
                ]
                await send({"type": "http.response.start", "status": 200, "headers": headers})
                while chunk := out.read(256 * 1024):
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b""})
        finally:
            os.unlink(name)

    async def healthz(self, send: Send) -> None:
        await responses.send_bytes(send, 200, b'{"status":"ok"}')

    async def readyz(self, send: Send) -> None:
        try:
            await anyio.to_thread.run_sync(self.projects.store.ping)
        except Exception:
            await responses.send_bytes(
                send, 503, b'{"status":"unavailable","error":"the store does not answer"}'
            )
            return
        await responses.send_bytes(send, 200, b'{"status":"ready"}')

    async def metrics(self, send: Send) -> None:
        body, content_type = self.observer.exposition()
        await responses.send_bytes(send, 200, body, content_type=content_type.encode())


OPS: dict[str, Callable[[HostedApp, Send], Awaitable[None]]] = {
    "/healthz": HostedApp.healthz,
    "/readyz": HostedApp.readyz,
    "/metrics": HostedApp.metrics,
}


def door_of(rest: str) -> str:
    """Which door a project-relative path is (for logs and metrics)."""
    if rest in ("/mcp", "/mcp/"):
        return "mcp"
    if rest.startswith(("/mcp/tools", "/mcp/static/", "/mcp/openapi.json")):
        return "reference"
    return "rest" if rest.startswith("/mcp/") else "other"


def _request_id(scope: Scope) -> str:
    for key, value in scope.get("headers", []):
        if key.lower() == b"x-request-id":
            text = value.decode("latin-1")
            if REQUEST_ID.fullmatch(text):
                return text
    return secrets.token_hex(8)


def user_key(scope: Scope) -> str | None:
    """The rate limits' caller of a request this router let in: its user (every token and project of
    one user share one budget)."""
    user = scope.get("user")
    if not isinstance(user, AuthenticatedUser):
        return None
    return "user:" + (user.access_token.subject or "").split("/", 1)[0]

"""The hosted service delegating sign-in to an external identity provider (``hosted --issuer``): a
real IdP stand-in on loopback publishes its OpenID metadata and JWKS (an RSA key pair made here),
and signs JWT access tokens with PyJWT. The service checks signature, issuer, audience (this
project's MCP URL, or the service), expiry and scope, and maps ``sub`` to a hosted user.

The same IdP also issues opaque access tokens and answers token introspection (RFC 7662) for
them, for its resource-server client only (HTTP Basic credentials checked): the service asks it
about every bearer value that is not a JWT (``--introspection-client-id``), or about every token
(``--introspect-all-tokens``)."""

from __future__ import annotations

import base64
import json
import os
import secrets
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote_plus

import anyio
import httpx
import pytest

from tests.support.hosted import HostedService, start_hosted

pytestmark = pytest.mark.anyio


class Idp:
    def __init__(self) -> None:
        from cryptography.hazmat.primitives.asymmetric import rsa

        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.other_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.issuer = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.client_id, self.client_secret = "mide resource", "s3cret: with + and spaces"
        self.opaque: dict[str, dict[str, Any]] = {}
        """Opaque token -> what introspection answers for it (while active)."""
        self.introspected: list[str] = []
        self.refused_clients = 0
        self.release = threading.Event()
        """Set to let a ``hang-…`` token's introspection answer (at the end of the test module)."""
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        idp = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                from jwt.algorithms import RSAAlgorithm

                if self.path == "/.well-known/openid-configuration":
                    body = {
                        "issuer": idp.issuer,
                        "jwks_uri": idp.issuer + "/jwks.json",
                        "introspection_endpoint": idp.issuer + "/introspect",
                    }
                elif self.path == "/jwks.json":
                    jwk = json.loads(RSAAlgorithm.to_jwk(idp.key.public_key()))
                    body = {"keys": [{**jwk, "kid": "k1", "use": "sig", "alg": "RS256"}]}
                else:
                    self.send_error(404)
                    return
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                form = parse_qs(self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode())
                token = form.get("token", [""])[0]
                if self.path != "/introspect":
                    self.send_error(404)
                    return
                if not idp.client_allowed(self.headers.get("Authorization", "")):
                    idp.refused_clients += 1
                    self._json(401, {"error": "invalid_client"})
                    return
                idp.introspected.append(token)
                if token.startswith("hang-"):
                    idp.release.wait(120)
                if token.startswith("boom-"):
                    self._json(500, {"error": "server_error"})
                    return
                answer = idp.opaque.get(token)
                if answer is None or (answer.get("exp", 0) < time.time() and not answer.get("_lie")):
                    self._json(200, {"active": False})
                    return
                self._json(200, {k: v for k, v in answer.items() if not k.startswith("_")})

            def _json(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    def client_allowed(self, header: str) -> bool:
        """``client_secret_basic``: both parts form-encoded, then base64 (RFC 6749 §2.3.1)."""
        if not header.startswith("Basic "):
            return False
        try:
            client, _, secret = base64.b64decode(header[6:]).decode().partition(":")
        except ValueError:
            return False
        return (unquote_plus(client), unquote_plus(secret)) == (self.client_id, self.client_secret)

    def opaque_token(
        self, aud: str | list[str] | None, *, sub: str = "alice", scope: str = "read write", **over: Any
    ) -> str:
        """An opaque access token (not a JWT) and what introspection says of it while it is active."""
        token = "op_" + secrets.token_urlsafe(24)
        answer = {
            "active": True,
            "iss": self.issuer,
            "sub": sub,
            "username": over.pop("username", sub),
            "aud": aud,
            "scope": scope,
            "client_id": "vscode",
            "token_type": "Bearer",
            "exp": int(time.time()) + 300,
            **over,
        }
        self.opaque[token] = {k: v for k, v in answer.items() if v is not None}
        return token

    def revoke(self, token: str) -> None:
        self.opaque.pop(token, None)

    def token(
        self, aud: str | list[str], *, sub: str = "alice", scope: str = "read write", **over: Any
    ) -> str:
        import jwt

        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "sub": sub,
            "aud": aud,
            "scope": scope,
            "iat": now,
            "exp": now + 300,
            **over,
        }
        key = over.pop("_key", None) or self.key
        claims.pop("_key", None)
        return jwt.encode(claims, key, algorithm="RS256", headers={"kid": "k1"})

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def idp() -> Iterator[Idp]:
    server = Idp()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, idp: Idp) -> Iterator[HostedService]:
    from mcp_server_ide.hosted import tokens
    from mcp_server_ide.hosted.projects import HostedProjects
    from mcp_server_ide.hosted.sqlstore import SqlStore, sqlite_url
    from mcp_server_ide.workspace import Policy

    data = tmp_path_factory.mktemp("idp") / "data"
    data.mkdir()
    store = SqlStore(sqlite_url(data))
    projects = HostedProjects(store, data, Policy(hosted=True))
    alice = store.add_user("alice")
    api, _ = tokens.create(store, alice.id, ("read",), "api")
    ids = {key: projects.create(alice.id, key).id for key in ("A1", "A2")}
    store.close()
    secret_file = data.parent / "introspection-secret"
    secret_file.write_text(idp.client_secret + "\n")
    secret_file.chmod(0o600)
    service = start_hosted(
        data,
        "--issuer",
        idp.issuer,
        "--introspection-client-id",
        idp.client_id,
        "--introspection-client-secret-file",
        str(secret_file),  # the endpoint: from the issuer's metadata
        "--introspection-timeout",
        "5",
    )
    service.projects, service.tokens = ids, {"api": api}
    try:
        yield service
    finally:
        idp.release.set()
        service.stop()


def call(
    service: HostedService, project: str, tool: str, token: str | None, args: Any = None
) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.post(
        service.project_url(project, f"/mcp/{tool}"), json=args or {}, headers=headers, timeout=60
    )


def test_a_token_of_the_identity_provider_for_this_project_works(service, idp):
    token = idp.token(service.project_url("A1"))
    assert call(service, "A1", "project_fs_list", token).status_code == 200
    written = call(service, "A1", "project_fs_write", token, {"path": "idp.txt", "content": "x"})
    assert written.status_code == 200, written.text
    run = call(service, "A1", "execute_terminal_command", token, {"command": "echo hi"})
    assert run.status_code == 403 and "'run' scope" in run.json()["error"]
    service_wide = idp.token([service.url, "https://unrelated.example"])
    for project in ("A1", "A2"):
        assert call(service, project, "project_fs_list", service_wide).status_code == 200
    assert call(service, "A1", "project_fs_list", service.tokens["api"]).status_code == 200  # API tokens too


def test_a_read_scope_token_of_the_identity_provider_cannot_write(service, idp):
    token = idp.token(service.project_url("A2"), scope="read")
    r = call(service, "A2", "project_fs_write", token, {"path": "no.txt", "content": "x"})
    assert r.status_code == 403 and "needs a token with the 'write' scope" in r.json()["error"]


@pytest.mark.parametrize(
    "case",
    [
        "another project",
        "another audience",
        "expired",
        "another issuer",
        "another key",
        "unknown user",
        "no token",
    ],
)
def test_refused_tokens_get_401_with_www_authenticate(service, idp, case):
    a1, a2 = service.project_url("A1"), service.project_url("A2")
    token = {
        "another project": lambda: idp.token(a2),
        "another audience": lambda: idp.token("https://unrelated.example"),
        "expired": lambda: idp.token(a1, exp=int(time.time()) - 600),
        "another issuer": lambda: idp.token(a1, iss="https://elsewhere.example"),
        "another key": lambda: idp.token(a1, _key=idp.other_key),
        "unknown user": lambda: idp.token(a1, sub="mallory"),
        "no token": lambda: None,
    }[case]()
    r = call(service, "A1", "project_fs_list", token)
    assert r.status_code == 401, r.text
    challenge = r.headers["www-authenticate"]
    assert f'resource_metadata="{service.url}/.well-known/oauth-protected-resource/p/' in challenge
    assert ('error="invalid_token"' in challenge) == (token is not None)


def test_the_metadata_names_the_identity_provider_and_there_is_no_built_in_sign_in(service, idp):
    with httpx.Client(timeout=60) as http:
        prm = http.get(
            f"{service.url}/.well-known/oauth-protected-resource/p/{service.projects['A1']}/mcp"
        ).json()
        assert [a.rstrip("/") for a in prm["authorization_servers"]] == [idp.issuer]
        assert prm["resource"] == service.project_url("A1")
        for path in ("/login", "/authorize", "/register", "/.well-known/oauth-authorization-server"):
            assert http.get(service.url + path).status_code == 404, path


def mcp_initialize(service: HostedService, project: str, token: str | None) -> httpx.Response:
    from tests.support.net import ACCEPT, initialize

    headers = {"Accept": ACCEPT, **({"Authorization": f"Bearer {token}"} if token else {})}
    return httpx.post(
        service.project_url(project), json=initialize("2025-11-25", id=1), headers=headers, timeout=60
    )


def assert_refused(service: HostedService, project: str, token: str) -> None:
    """401 with a ``WWW-Authenticate`` naming the project's metadata, on the MCP and the REST door."""
    for r in (mcp_initialize(service, project, token), call(service, project, "project_fs_list", token)):
        assert r.status_code == 401, (r.request.url, r.text)
        challenge = r.headers["www-authenticate"]
        assert 'error="invalid_token"' in challenge, challenge
        assert f'resource_metadata="{service.url}/.well-known/oauth-protected-resource/p/' in challenge


def test_an_opaque_token_is_introspected_and_works_on_the_mcp_and_rest_doors(service, idp):
    token = idp.opaque_token(service.project_url("A1"))
    assert mcp_initialize(service, "A1", token).status_code == 200
    written = call(service, "A1", "project_fs_write", token, {"path": "opaque.txt", "content": "x"})
    assert written.status_code == 200, written.text
    run = call(service, "A1", "execute_terminal_command", token, {"command": "echo hi"})
    assert run.status_code == 403 and "'run' scope" in run.json()["error"]
    assert idp.introspected.count(token) == 1  # the active answer is reused (for up to 60 s)
    service_wide = idp.opaque_token([service.url, "https://unrelated.example"], scope="read")
    for project in ("A1", "A2"):
        assert call(service, project, "project_fs_list", service_wide).status_code == 200
    r = call(service, "A2", "project_fs_write", service_wide, {"path": "no.txt", "content": "x"})
    assert r.status_code == 403 and "needs a token with the 'write' scope" in r.json()["error"]
    jwt = idp.token(service.project_url("A1"))
    assert call(service, "A1", "project_fs_list", jwt).status_code == 200
    assert jwt not in idp.introspected  # a JWT is checked against the keys, not introspected
    assert token not in service.log() and service_wide not in service.log()


@pytest.mark.parametrize(
    "case",
    [
        "unknown to the provider",
        "revoked",
        "expired",
        "active but past its exp",
        "another project",
        "another audience",
        "no audience",
        "another issuer",
        "no issuer",
        "unknown user",
        "provider error",
        "provider timeout",
    ],
)
def test_refused_opaque_tokens_get_401_with_www_authenticate(service, idp, case):
    a1, a2 = service.project_url("A1"), service.project_url("A2")
    past = int(time.time()) - 600
    token = {
        "unknown to the provider": lambda: "op_" + secrets.token_urlsafe(24),
        "revoked": lambda: idp.opaque_token(a1),
        "expired": lambda: idp.opaque_token(a1, exp=past),
        "active but past its exp": lambda: idp.opaque_token(a1, exp=past, _lie=True),
        "another project": lambda: idp.opaque_token(a2),
        "another audience": lambda: idp.opaque_token("https://unrelated.example"),
        "no audience": lambda: idp.opaque_token(None),
        "another issuer": lambda: idp.opaque_token(a1, iss="https://elsewhere.example"),
        "no issuer": lambda: idp.opaque_token(a1, iss=None),
        "unknown user": lambda: idp.opaque_token(a1, sub="mallory"),
        "provider error": lambda: "boom-" + secrets.token_urlsafe(16),
        "provider timeout": lambda: (
            "hang-" + secrets.token_urlsafe(16)
        ),  # answers after --introspection-timeout 5
    }[case]()
    if case == "revoked":
        idp.revoke(token)
    assert_refused(service, "A1", token)
    assert token in idp.introspected
    assert token not in service.log()


def test_wrong_client_credentials_at_the_provider_refuse_tokens_and_tell_the_operator(service, idp):
    token = idp.opaque_token(service.project_url("A1"))
    right, idp.client_secret = idp.client_secret, "rotated at the provider"
    try:
        refused = idp.refused_clients
        assert_refused(service, "A1", token)
        assert idp.refused_clients > refused
    finally:
        idp.client_secret = right
    log = service.log()
    assert "refused this service's introspection client (HTTP 401" in log
    assert "--introspection-client-id" in log and token not in log and right not in log
    assert call(service, "A1", "project_fs_list", token).status_code == 200  # nothing bad was cached


@pytest.fixture(scope="module")
def strict(tmp_path_factory: pytest.TempPathFactory, idp: Idp) -> Iterator[HostedService]:
    """Every token introspected, nothing cached, the endpoint given, the secret in the environment,
    the user named by the answer's ``username``."""
    from mcp_server_ide.hosted.projects import HostedProjects
    from mcp_server_ide.hosted.sqlstore import SqlStore, sqlite_url
    from mcp_server_ide.workspace import Policy

    data = tmp_path_factory.mktemp("idp-strict") / "data"
    data.mkdir()
    store = SqlStore(sqlite_url(data))
    ids = {"A1": HostedProjects(store, data, Policy(hosted=True)).create(store.add_user("alice").id, "A1").id}
    store.close()
    os.environ["MCP_IDE_INTROSPECTION_CLIENT_SECRET"] = idp.client_secret
    try:
        service = start_hosted(
            data,
            "--issuer",
            idp.issuer,
            "--introspection-client-id",
            idp.client_id,
            "--introspection-uri",
            idp.issuer + "/introspect",
            "--introspect-all-tokens",
            "--introspection-cache",
            "0",
            "--user-claim",
            "username",
        )
    finally:
        del os.environ["MCP_IDE_INTROSPECTION_CLIENT_SECRET"]
    service.projects = ids
    try:
        yield service
    finally:
        service.stop()


def test_with_no_cache_a_token_revoked_at_the_provider_stops_at_once_and_jwts_are_introspected(strict, idp):
    token = idp.opaque_token(strict.project_url("A1"), sub="u-4711", username="alice")
    assert call(strict, "A1", "project_fs_list", token).status_code == 200
    assert mcp_initialize(strict, "A1", token).status_code == 200
    assert idp.introspected.count(token) == 2  # --introspection-cache 0: asked every time
    idp.revoke(token)
    assert_refused(strict, "A1", token)
    jwt = idp.token(strict.project_url("A1"))  # a valid JWT, but this service introspects every token
    assert_refused(strict, "A1", jwt)
    assert jwt in idp.introspected
    named_by_sub = idp.opaque_token(strict.project_url("A1"), sub="alice", username="u-4711")
    assert_refused(strict, "A1", named_by_sub)  # --user-claim username: `sub` names no one here


def test_the_introspection_cache_ends_at_the_tokens_exp_or_the_bound_and_is_bounded(tmp_path, idp):
    """The verifier on its own (with a clock of the test's) against the real provider: the cache's
    lifetimes cannot be shown through the service without waiting them out."""
    from mcp_server_ide.hosted.oauth.introspect import IntrospectionVerifier
    from mcp_server_ide.hosted.sqlstore import SqlStore, sqlite_url

    store = SqlStore(sqlite_url(tmp_path))
    store.add_user("alice")
    now = [time.time()]
    verifier = IntrospectionVerifier(
        store, idp.issuer, idp.issuer + "/introspect", idp.client_id, idp.client_secret,
        cache_seconds=60, max_entries=2, clock=lambda: now[0],
    )  # fmt: skip

    async def check(token: str) -> bool:
        return await verifier.verify_token(token) is not None

    async def run() -> None:
        start = now[0]
        short = idp.opaque_token("https://x.example", exp=int(start) + 10)
        long = idp.opaque_token("https://x.example", exp=int(start) + 3600)
        assert await check(short) and await check(long) and await check(short)
        assert idp.introspected.count(short) == 1 and idp.introspected.count(long) == 1
        now[0] = start + 11  # past the short token's exp: asked again
        assert await check(short)  # (the provider still answers active: its clock is the real one)
        assert idp.introspected.count(short) == 2
        now[0] = start + 61  # past the 60 s bound: asked again
        assert await check(long) and idp.introspected.count(long) == 2
        idp.revoke(long)
        now[0] = start + 122
        assert not await check(long)  # revoked at the provider: refused once the bound has passed
        others = [idp.opaque_token("https://x.example") for _ in range(3)]
        for other in others:
            assert await check(other)
        assert len(verifier._cache) == 2  # the oldest left first
        assert await check(others[0]) and idp.introspected.count(others[0]) == 2

    try:
        anyio.run(run)
    finally:
        store.close()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--introspection-client-id", "rs"], "needs its secret: give --introspection-client-secret-file"),
        (
            ["--introspection-client-id", "rs", "--introspection-client-secret-file", "/nonexistent/s"],
            "cannot read --introspection-client-secret-file",
        ),
        (["--introspection-uri", "http://127.0.0.1:9/i"], "need --introspection-client-id ID"),
        (["--introspection-client-id", "rs", "--no-issuer"], "--introspection-client-id needs --issuer URL"),
    ],
)
def test_introspection_options_missing_a_part_stop_with_the_fix(idp, monkeypatch, args, said):
    """The options as the command line parses them, set up in this process (starting the service
    for each would take seconds); the first case also runs the real command (below)."""
    from mcp_server_ide.hosted.cli import serve_parser
    from mcp_server_ide.hosted.serve import oauth_setup

    monkeypatch.delenv("MCP_IDE_INTROSPECTION_CLIENT_SECRET", raising=False)
    issuer = [] if "--no-issuer" in args else ["--issuer", idp.issuer]
    parsed = serve_parser().parse_args([*issuer, *[a for a in args if a != "--no-issuer"]])
    with pytest.raises(SystemExit) as stopped:
        oauth_setup(parsed, None, "http://127.0.0.1:1")
    assert said in str(stopped.value)


def test_the_command_stops_with_the_fix_and_no_traceback_when_the_secret_is_missing(tmp_path, idp):
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "MCP_IDE_INTROSPECTION_CLIENT_SECRET"}
    done = subprocess.run(
        [sys.executable, "-m", "mcp_server_ide", "hosted", "--data", str(tmp_path / "data"), "--port", "0",
         "--issuer", idp.issuer, "--introspection-client-id", "rs"],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    assert done.returncode != 0 and "needs its secret" in done.stderr, (done.returncode, done.stderr[-2000:])
    assert "MCP_IDE_INTROSPECTION_CLIENT_SECRET" in done.stderr and "Traceback" not in done.stderr

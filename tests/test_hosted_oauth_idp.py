"""The hosted service delegating sign-in to an external identity provider (``hosted --issuer``): a
real IdP stand-in on loopback publishes its OpenID metadata and JWKS (an RSA key pair made here),
and signs JWT access tokens with PyJWT. The service checks signature, issuer, audience (this
project's MCP URL, or the service), expiry and scope, and maps ``sub`` to a hosted user."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

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
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        idp = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                from jwt.algorithms import RSAAlgorithm

                if self.path == "/.well-known/openid-configuration":
                    body = {"issuer": idp.issuer, "jwks_uri": idp.issuer + "/jwks.json"}
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

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

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
    service = start_hosted(data, "--issuer", idp.issuer)
    service.projects, service.tokens = ids, {"api": api}
    try:
        yield service
    finally:
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

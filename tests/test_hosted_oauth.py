"""OAuth on the hosted service, through its real doors: a real ``mcp-server-ide hosted`` process on
loopback, the SDK's ``OAuthClientProvider``, headless Chromium on the sign-in page, httpx.

The embedded authorization server: protected resource metadata (RFC 9728) per project, dynamic
registration (VS Code's redirect URIs, any loopback port), authorization code + PKCE (S256), the
sign-in page (CSRF-protected), refresh with rotation, revocation; tokens are audience-bound to one
project (RFC 8707); a wrong-audience, expired, revoked or missing token gets 401 with
``WWW-Authenticate`` naming the metadata on every door; a read-scope sign-in cannot write; API
tokens keep working beside OAuth. (External identity providers: tests/test_hosted_oauth_idp.py.)
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
import pytest

from tests.support.hosted import HostedService, start_hosted
from tests.support.net import ACCEPT, initialize
from tests.support.oauth import MemoryStorage, pkce, redirect_receiver, register, sign_in

pytestmark = pytest.mark.anyio

PASSWORD = "correct horse battery"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostedService]:
    from mcp_server_ide.hosted import passwords, tokens
    from mcp_server_ide.hosted.projects import HostedProjects
    from mcp_server_ide.hosted.sqlstore import SqlStore, sqlite_url
    from mcp_server_ide.workspace import Policy

    data = tmp_path_factory.mktemp("oauth") / "data"
    data.mkdir()
    store = SqlStore(sqlite_url(data))
    projects = HostedProjects(store, data, Policy(hosted=True))
    alice, bob = store.add_user("alice"), store.add_user("bob")
    for user in (alice, bob, store.add_user("dave")):  # dave: the password guesser's target
        store.set_password_hash(user.id, passwords.make(PASSWORD))
    api, _ = tokens.create(store, alice.id, ("read", "write", "run"), "api")
    ids = {key: projects.create(user.id, key).id for key, user in (("A1", alice), ("A2", alice), ("B1", bob))}
    store.close()
    service = start_hosted(data)
    service.projects, service.tokens = ids, {"api": api}
    service.token_ids = {"alice": alice.id, "bob": bob.id}
    try:
        yield service
    finally:
        service.stop()


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def doors(project_url: str) -> list[tuple[str, str, dict[str, Any]]]:
    """One request to each hosted door of a project: MCP, REST, reference page, playground, export."""
    return [
        (
            "POST",
            project_url + "/mcp",
            {"json": initialize("2025-11-25", id=1), "headers": {"Accept": ACCEPT}},
        ),
        ("GET", project_url + "/mcp", {"headers": {"Accept": "text/event-stream"}}),
        ("POST", project_url + "/mcp/project_fs_list", {"json": {}}),
        ("GET", project_url + "/mcp/list_tools", {}),
        ("GET", project_url + "/mcp/tools", {}),
        ("GET", project_url + "/mcp/static/reference.js", {}),
        ("GET", project_url + "/mcp/openapi.json", {}),
        ("GET", project_url + "/export", {}),
    ]


def assert_401_everywhere(service: HostedService, project: str, token: str | None, error: bool) -> None:
    pid = service.projects.get(project, project)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with httpx.Client(headers=headers, timeout=60) as http:
        for method, url, kw in doors(f"{service.url}/p/{pid}"):
            r = http.request(method, url, **kw)
            assert r.status_code == 401, (url, r.status_code, r.text)
            challenge = r.headers["www-authenticate"]
            assert challenge.startswith("Bearer ")
            meta = f'resource_metadata="{service.url}/.well-known/oauth-protected-resource/p/{pid}/mcp"'
            assert meta in challenge, challenge
            assert ('error="invalid_token"' in challenge) == error, challenge


def project_token(service: HostedService, project: str, scopes: list[str] | None = None, user: str = "alice"):
    client = register(service.url, ["http://127.0.0.1:33418", "https://vscode.dev/redirect"])
    resource = f"{service.url}/p/{service.projects[project]}/mcp"
    token = sign_in(
        service.url,
        client["client_id"],
        "http://127.0.0.1:40123/",
        user,
        PASSWORD,
        resource=resource,
        scopes=scopes,
    )
    return client, token


async def test_the_sdk_client_signs_in_in_a_browser_then_calls_tools_and_refreshes(service, tmp_path: Path):
    """Dynamic registration, the login page in headless Chromium, PKCE, token, tools over Streamable
    HTTP, then a refresh (the access token's lifetime has passed for the client) that rotates both tokens."""
    from mcp import Client
    from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    from mcp.shared.auth import OAuthClientMetadata
    from pydantic import AnyUrl

    from tests.support.browser import chromium_page

    url = service.project_url("A1")
    storage = MemoryStorage()
    seen: dict[str, Any] = {}
    with redirect_receiver() as receiver:

        def browse(authorization_url: str) -> None:
            with chromium_page(tmp_path / "profile") as page:
                page.goto(authorization_url)
                page.wait_for_selector("#username")
                seen["page"] = page.inner_text("body")
                page.fill("#username", "alice")
                page.fill("#password", PASSWORD)
                page.click("#allow")
                assert receiver.arrived.wait(60), page.content()
                page.wait_for_url(lambda u: u.startswith(receiver.url))
                assert not page.errors  # type: ignore[attr-defined]

        async def redirect_handler(authorization_url: str) -> None:
            seen["authorize"] = authorization_url
            await anyio.to_thread.run_sync(browse, authorization_url)

        async def callback_handler() -> AuthorizationCodeResult:
            got = receiver.got[-1]
            # The SDK client checks RFC 9207's iss against the metadata, which says it is always sent.
            return AuthorizationCodeResult(code=got["code"], state=got.get("state"), iss=got.get("iss"))

        auth = OAuthClientProvider(
            server_url=url,
            client_metadata=OAuthClientMetadata(
                client_name="sdk test client",
                redirect_uris=[AnyUrl(receiver.url)],
                grant_types=["authorization_code", "refresh_token"],
                response_types=["code"],
                token_endpoint_auth_method="none",
            ),
            storage=storage,
            redirect_handler=redirect_handler,
            callback_handler=callback_handler,
        )
        async with create_mcp_http_client(auth=auth) as http:
            async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
                written = await client.call_tool(
                    "project_fs_write", {"path": "o.txt", "content": "via oauth\n"}
                )
                assert not written.is_error, text_of(written)
                read = await client.call_tool("project_fs_read", {"path": "o.txt"})
                assert json.loads(text_of(read))["content"] == "via oauth\n"
            first = storage.tokens
            assert first.access_token.startswith("mido_") and first.refresh_token.startswith("midr_")
            assert set(first.scope.split()) == {"read", "write", "run"}
            assert "resource=" in seen["authorize"] and "code_challenge_method=S256" in seen["authorize"]
            assert "sdk test client" in seen["page"] and "alice" not in seen["page"]
            auth.context.token_expiry_time = 0.5  # its lifetime has passed, as the client sees it
            async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
                listed = await client.call_tool("project_fs_list", {})
                assert not listed.is_error and "o.txt" in text_of(listed)
            second = storage.tokens
    assert len(receiver.got) == 1  # the refresh needed no second sign-in
    assert second.access_token != first.access_token and second.refresh_token != first.refresh_token
    with httpx.Client(timeout=60) as plain:
        rest = service.project_url("A1", "/mcp/project_fs_list")
        assert (
            plain.post(rest, json={}, headers={"Authorization": f"Bearer {second.access_token}"}).status_code
            == 200
        )
        # Rotation: the first pair is spent; its refresh token presented again ends the whole grant.
        assert (
            plain.post(rest, json={}, headers={"Authorization": f"Bearer {first.access_token}"}).status_code
            == 401
        )
        replay = plain.post(
            service.url + "/token",
            data={
                "grant_type": "refresh_token",
                "refresh_token": first.refresh_token,
                "client_id": storage.client_info.client_id,
            },
        )
        assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
        assert (
            plain.post(rest, json={}, headers={"Authorization": f"Bearer {second.access_token}"}).status_code
            == 401
        )


def test_the_protected_resource_and_authorization_server_metadata(service):
    with httpx.Client(timeout=60) as http:
        r = http.post(service.project_url("A1", "/mcp/project_fs_list"), json={})
        assert r.status_code == 401
        meta_url = r.headers["www-authenticate"].split('resource_metadata="')[1].split('"')[0]
        prm = http.get(meta_url).json()
        assert prm["resource"] == service.project_url("A1")
        assert prm["authorization_servers"] == [service.url] or prm["authorization_servers"] == [
            service.url + "/"
        ]
        assert prm["scopes_supported"] == ["read", "write", "run"]
        random = http.get(f"{service.url}/.well-known/oauth-protected-resource/p/p_{'0' * 20}/mcp").json()
        assert {k: v for k, v in random.items() if k != "resource"} == {
            k: v for k, v in prm.items() if k != "resource"
        }  # any id alike: the metadata says nothing of which projects exist
        assert (
            http.get(service.url + "/.well-known/oauth-protected-resource").json()["resource"].rstrip("/")
            == service.url
        )
        asm = http.get(service.url + "/.well-known/oauth-authorization-server").json()
    assert asm["code_challenge_methods_supported"] == ["S256"]
    assert asm["registration_endpoint"] == service.url + "/register"
    assert asm["revocation_endpoint"] == service.url + "/revoke"
    assert set(asm["grant_types_supported"]) >= {"authorization_code", "refresh_token"}


def test_every_authorization_response_names_the_issuer_rfc_9207(service):
    from mcp.server.auth.routes import build_metadata
    from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
    from pydantic import AnyHttpUrl

    from tests.support.oauth import login_form

    asm = httpx.get(service.url + "/.well-known/oauth-authorization-server", timeout=60).json()
    assert asm["authorization_response_iss_parameter_supported"] is True
    sdk = build_metadata(
        AnyHttpUrl(service.url),
        None,
        ClientRegistrationOptions(
            enabled=True, valid_scopes=["read", "write", "run"], default_scopes=["read", "write", "run"]
        ),
        RevocationOptions(enabled=True),
    ).model_dump(mode="json", exclude_none=True)
    assert {k: v for k, v in asm.items() if k != "authorization_response_iss_parameter_supported"} == sdk
    issuer = asm["issuer"]
    client = register(service.url, ["http://127.0.0.1:33418"])
    _, challenge = pkce()
    query = {"response_type": "code", "client_id": client["client_id"], "code_challenge": challenge,
             "redirect_uri": "http://127.0.0.1:33418/", "state": "s9"}  # fmt: skip

    def back(location: str) -> dict[str, list[str]]:
        parts = urlsplit(location)
        assert f"{parts.scheme}://{parts.netloc}{parts.path}" == "http://127.0.0.1:33418/", location
        return parse_qs(parts.query)

    with httpx.Client(base_url=service.url, timeout=60) as http:
        for extra, error in (
            (
                {"resource": "https://elsewhere.example/mcp"},
                "invalid_target",
            ),  # the provider's AuthorizeError
            ({"scope": "read admin"}, "invalid_scope"),  # the SDK's own scope check
            ({"code_challenge_method": "plain"}, "invalid_request"),  # the SDK's parameter check
            ({"response_type": "token"}, "unsupported_response_type"),
        ):
            r = http.get("/authorize", params={**query, **extra})
            assert r.status_code == 302, (extra, r.text)
            got = back(r.headers["location"])
            assert got["error"] == [error] and got["state"] == ["s9"] and got["iss"] == [issuer], got
        r = http.get("/authorize", params=query)
        assert "iss" not in parse_qs(
            urlsplit(r.headers["location"]).query
        )  # to the sign-in page: not a response
        page = http.get(r.headers["location"])
        hidden, scopes = login_form(page.text)
        denied = back(http.post("/login", data={**hidden, "action": "deny"}).headers["location"])
        assert (
            denied["error"] == ["access_denied"] and denied["iss"] == [issuer] and denied["state"] == ["s9"]
        )
        r = http.get("/authorize", params=query)
        hidden, scopes = login_form(http.get(r.headers["location"]).text)
        form = {**hidden, "username": "alice", "password": PASSWORD, "scope": scopes, "action": "allow"}
        allowed = back(http.post("/login", data=form).headers["location"])
        assert allowed["code"] and allowed["iss"] == [issuer] and allowed["state"] == ["s9"]


def test_registration_takes_vscodes_redirects_and_any_loopback_port_only(service):
    client = register(service.url, ["http://127.0.0.1:33418", "https://vscode.dev/redirect"])
    _, challenge = pkce()
    query = {
        "response_type": "code",
        "client_id": client["client_id"],
        "code_challenge": challenge,
        "state": "s",
    }
    with httpx.Client(base_url=service.url, timeout=60) as http:
        for redirect, ok in (
            ("http://127.0.0.1:33418/", True),
            (
                "http://127.0.0.1:51234/",
                True,
            ),  # VS Code listens elsewhere when 33418 is taken (RFC 8252 §7.3)
            ("https://vscode.dev/redirect", True),
            ("https://vscode.dev/elsewhere", False),
            ("http://192.168.1.9:33418/", False),
        ):
            r = http.get("/authorize", params={**query, "redirect_uri": redirect})
            assert (r.status_code == 302 and "/login?request=" in r.headers["location"]) == ok, (
                redirect,
                r.text,
            )
        plain = http.get(
            "/authorize",
            params={**query, "redirect_uri": "http://127.0.0.1:33418/", "code_challenge_method": "plain"},
        )
        assert plain.status_code == 400 or "error=" in plain.headers.get("location", "")  # S256 only
        r = http.post(
            "/register",
            json={"redirect_uris": ["http://evil.example/cb"], "token_endpoint_auth_method": "none"},
        )
        assert r.status_code == 400 and r.json()["error"] == "invalid_redirect_uri"
        r = http.get(
            "/authorize",
            params={
                **query,
                "redirect_uri": "http://127.0.0.1:33418/",
                "resource": "https://elsewhere.example/mcp",
            },
        )
        assert "error=invalid_target" in r.headers.get("location", ""), r.text  # fmt: skip


def test_a_code_needs_its_pkce_verifier_and_serves_once(service):
    client = register(service.url, ["http://127.0.0.1:33418"])
    verifier, challenge = pkce()
    with httpx.Client(base_url=service.url, timeout=60) as http:
        r = http.get("/authorize", params={"response_type": "code", "client_id": client["client_id"],
                     "code_challenge": challenge, "code_challenge_method": "S256",
                     "redirect_uri": "http://127.0.0.1:33418/"})  # fmt: skip
        page = http.get(r.headers["location"])
        from tests.support.oauth import login_form

        hidden, scopes = login_form(page.text)
        r = http.post("/login", data={**hidden, "username": "alice", "password": PASSWORD, "scope": scopes, "action": "allow"})  # fmt: skip
        code = r.headers["location"].split("code=")[1].split("&")[0]
        form = {"grant_type": "authorization_code", "code": code, "client_id": client["client_id"],
                "redirect_uri": "http://127.0.0.1:33418/"}  # fmt: skip
        wrong = http.post("/token", data={**form, "code_verifier": pkce()[0]})
        assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
        assert http.post("/token", data={**form, "code_verifier": verifier}).status_code == 200
        again = http.post("/token", data={**form, "code_verifier": verifier})
        assert again.status_code == 400 and again.json()["error"] == "invalid_grant"


def test_the_login_page_refuses_a_wrong_password_a_foreign_post_and_a_missing_cookie(service):
    client = register(service.url, ["http://127.0.0.1:33418"])
    _, challenge = pkce()
    from tests.support.oauth import login_form

    with httpx.Client(base_url=service.url, timeout=60) as http:
        r = http.get("/authorize", params={"response_type": "code", "client_id": client["client_id"],
                     "code_challenge": challenge, "redirect_uri": "http://127.0.0.1:33418/"})  # fmt: skip
        page = http.get(r.headers["location"])
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        assert "<script" not in page.text and "http" not in page.text.split("<form")[0].split("</style>")[
            1
        ].replace("http://127.0.0.1:33418", "")  # no external asset, no script
        hidden, scopes = login_form(page.text)
        form = {**hidden, "username": "alice", "scope": scopes, "action": "allow"}
        wrong = http.post("/login", data={**form, "password": "not it at all"})
        assert wrong.status_code == 200 and "Wrong user name or password" in wrong.text
        unknown = http.post("/login", data={**form, "username": "nobody", "password": PASSWORD})
        assert "Wrong user name or password" in unknown.text
        foreign = http.post(
            "/login", data={**form, "password": PASSWORD}, headers={"Origin": "https://evil.example"}
        )
        assert foreign.status_code == 403
        with httpx.Client(base_url=service.url, timeout=60) as other:  # no cookie: a cross-site post
            assert other.post("/login", data={**form, "password": PASSWORD}).status_code == 403
        assert http.post("/login", data={**form, "password": PASSWORD}).status_code == 303


def test_the_login_page_stops_a_password_guesser_on_every_worker(service):
    from mcp_server_ide.hosted.oauth.login import MAX_FAILURES
    from tests.support.oauth import login_form

    client = register(service.url, ["http://127.0.0.1:33418"])
    _, challenge = pkce()
    with httpx.Client(base_url=service.url, timeout=60) as http:
        r = http.get("/authorize", params={"response_type": "code", "client_id": client["client_id"],
                     "code_challenge": challenge, "redirect_uri": "http://127.0.0.1:33418/"})  # fmt: skip
        hidden, scopes = login_form(http.get(r.headers["location"]).text)
        form = {**hidden, "username": "dave", "scope": scopes, "action": "allow"}
        for i in range(MAX_FAILURES):
            assert "Wrong user name" in http.post("/login", data={**form, "password": f"guess {i:04d}"}).text
        locked = http.post("/login", data={**form, "password": PASSWORD})  # even the right one, now
        assert locked.status_code == 429 and int(locked.headers["retry-after"]) > 0
        other = http.post("/login", data={**form, "username": "alice", "password": PASSWORD})
        assert other.status_code == 303  # another user is not locked out
    second = start_hosted(service.data)  # another worker on the same store counts the same guesses
    try:
        client = register(second.url, ["http://127.0.0.1:33418"])
        with httpx.Client(base_url=second.url, timeout=60) as http:
            r = http.get("/authorize", params={"response_type": "code", "client_id": client["client_id"],
                         "code_challenge": challenge, "redirect_uri": "http://127.0.0.1:33418/"})  # fmt: skip
            hidden, scopes = login_form(http.get(r.headers["location"]).text)
            form = {**hidden, "username": "dave", "scope": scopes, "action": "allow"}
            assert http.post("/login", data={**form, "password": PASSWORD}).status_code == 429
    finally:
        second.stop()


def test_a_token_for_one_project_is_refused_at_another_and_b_cannot_use_as(service):
    _, token = project_token(service, "A1")
    access = token["access_token"]
    with httpx.Client(headers={"Authorization": f"Bearer {access}"}, timeout=60) as http:
        assert http.post(service.project_url("A1", "/mcp/project_fs_list"), json={}).status_code == 200
    assert_401_everywhere(
        service, "A2", access, error=True
    )  # the same user's other project: another resource
    _, bobs = project_token(service, "A1", user="bob")  # bob asks for alice's project's resource
    with httpx.Client(headers={"Authorization": f"Bearer {bobs['access_token']}"}, timeout=60) as http:
        r = http.post(service.project_url("A1", "/mcp/project_fs_list"), json={})
        assert r.status_code == 404 and r.json()["error"].startswith("no such project")


def test_a_sign_in_that_names_no_resource_is_for_all_of_the_users_projects(service):
    client = register(service.url, ["http://127.0.0.1:33418"])
    token = sign_in(
        service.url, client["client_id"], "http://127.0.0.1:33418/", "alice", PASSWORD, resource=None
    )
    with httpx.Client(headers={"Authorization": f"Bearer {token['access_token']}"}, timeout=60) as http:
        for project in ("A1", "A2"):
            assert http.post(service.project_url(project, "/mcp/project_fs_list"), json={}).status_code == 200
        r = http.post(service.project_url("B1", "/mcp/project_fs_list"), json={})
        assert r.status_code == 404  # bob's project stays "no such project"


def test_missing_expired_and_revoked_tokens_get_401_with_www_authenticate_on_every_door(service):
    from mcp_server_ide.hosted.oauth.store import OAuthStore
    from mcp_server_ide.hosted.sqlstore import SqlStore, sqlite_url

    assert_401_everywhere(service, "A1", None, error=False)
    store = SqlStore(sqlite_url(service.data))
    try:
        expired = OAuthStore(store.engine).issue(
            "c", service.token_ids["alice"], ("read",), service.project_url("A1"), access_ttl=-60
        )
    finally:
        store.close()
    assert_401_everywhere(service, "A1", expired.access, error=True)
    client, token = project_token(service, "A1")
    r = httpx.post(
        service.url + "/revoke",
        # The SDK's revocation handler wants a client_secret field even from a public client: empty.
        data={"token": token["access_token"], "client_id": client["client_id"], "client_secret": ""},
    )
    assert r.status_code == 200, r.text
    assert_401_everywhere(service, "A1", token["access_token"], error=True)
    refreshed = httpx.post(service.url + "/token", data={"grant_type": "refresh_token", "client_id": client["client_id"],
                           "refresh_token": token["refresh_token"]})  # fmt: skip
    assert refreshed.status_code == 400  # revoking the access token ended its grant's refresh token too


async def test_a_read_scope_sign_in_cannot_write(service):
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    _, token = project_token(service, "A2", scopes=["read"])
    assert token["scope"] == "read"
    auth = {"Authorization": f"Bearer {token['access_token']}"}
    async with (
        create_mcp_http_client(headers=auth) as http,
        Client(streamable_http_client(service.project_url("A2"), http_client=http), mode="legacy") as client,
    ):
        result = await client.call_tool("project_fs_write", {"path": "r.txt", "content": "x"})
        assert result.is_error and "needs a token with the 'write' scope" in text_of(result)
        assert not (await client.call_tool("project_fs_list", {})).is_error
    r = httpx.post(service.project_url("A2", "/mcp/execute_terminal_command"), json={"command": "echo hi"},
                   headers=auth, timeout=60)  # fmt: skip
    assert r.status_code == 403 and "'run' scope" in r.json()["error"]
    assert not (service.data / "projects" / service.projects["A2"] / "r.txt").exists()


def test_api_tokens_keep_working_beside_oauth(service):
    with httpx.Client(headers={"Authorization": f"Bearer {service.tokens['api']}"}, timeout=60) as http:
        for project in ("A1", "A2"):  # an API token is its user's, for every project
            assert http.post(service.project_url(project, "/mcp/project_fs_list"), json={}).status_code == 200


def test_the_admin_cli_sets_passwords(tmp_path: Path):
    from mcp_server_ide.hosted import passwords
    from mcp_server_ide.hosted.sqlstore import SqlStore, sqlite_url

    data = tmp_path / "data"

    def admin(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "mcp_server_ide", "hosted", *args, "--data", str(data)],
                              input=stdin, capture_output=True, text=True, timeout=120)  # fmt: skip

    added = admin("user", "add", "carol", "--password", stdin="first-password\n")
    assert added.returncode == 0, added.stderr
    assert json.loads(added.stdout)["password"] is True
    short = admin("user", "passwd", "carol", stdin="short\n")
    assert short.returncode == 1 and "8-1024 characters" in short.stderr
    assert admin("user", "passwd", "carol", stdin="second-password\n").returncode == 0
    assert admin("user", "passwd", "nobody", stdin="second-password\n").returncode == 1
    store = SqlStore(sqlite_url(data))
    try:
        found = store.password_hash("carol")
        assert found is not None and found[1] is not None and found[1].startswith("scrypt$")
        assert passwords.verify("second-password", found[1]) and not passwords.verify(
            "first-password", found[1]
        )
    finally:
        store.close()
    assert b"second-password" not in (data / "hosted.sqlite3").read_bytes()

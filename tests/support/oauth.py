"""OAuth helpers for the hosted service's tests: a loopback redirect receiver (what VS Code or any
native client runs, RFC 8252), PKCE, the SDK client's token storage, and a sign-in through the
login form with httpx (the browser-driven one is in the test itself)."""

from __future__ import annotations

import base64
import hashlib
import html.parser
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx


@dataclass
class Receiver:
    """A loopback HTTP server that takes the authorization redirect (``?code=…&state=…``)."""

    url: str
    got: list[dict[str, str]] = field(default_factory=list)
    arrived: threading.Event = field(default_factory=threading.Event)


@contextmanager
def redirect_receiver(path: str = "/callback") -> Iterator[Receiver]:
    receiver: Receiver

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            if parts.path == path:
                receiver.got.append({k: v[0] for k, v in parse_qs(parts.query).items()})
                receiver.arrived.set()
            body = b"<!doctype html><title>Signed in</title><p>You can close this window.</p>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver = Receiver(f"http://127.0.0.1:{server.server_address[1]}{path}")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()


def pkce() -> tuple[str, str]:
    """(verifier, S256 challenge)."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return verifier, challenge


class MemoryStorage:
    """The SDK client's ``TokenStorage``, in memory."""

    def __init__(self) -> None:
        self.tokens: Any = None
        self.client_info: Any = None

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client_info

    async def set_client_info(self, client_info: Any) -> None:
        self.client_info = client_info


class _Form(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hidden: dict[str, str] = {}
        self.scopes: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "input" and a.get("type") == "hidden" and a.get("name"):
            self.hidden[a["name"] or ""] = a.get("value") or ""
        if tag == "input" and a.get("name") == "scope":
            self.scopes.append(a.get("value") or "")


def login_form(page_html: str) -> tuple[dict[str, str], list[str]]:
    """The login page's hidden fields and its scope checkboxes."""
    parser = _Form()
    parser.feed(page_html)
    return parser.hidden, parser.scopes


def register(base: str, redirect_uris: list[str], **extra: Any) -> dict[str, Any]:
    r = httpx.post(
        base + "/register",
        json={
            "redirect_uris": redirect_uris,
            "token_endpoint_auth_method": "none",
            "client_name": "test",
            **extra,
        },
        timeout=60,
    )
    assert r.status_code == 201, r.text
    return r.json()


def sign_in(
    base: str,
    client_id: str,
    redirect_uri: str,
    user: str,
    password: str,
    *,
    resource: str | None,
    scopes: list[str] | None = None,
) -> dict[str, Any]:
    """The whole code flow with httpx driving the login form: the token response."""
    verifier, challenge = pkce()
    query: dict[str, str] = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "st-1",
        "scope": "read write run",
    }
    if resource:
        query["resource"] = resource
    with httpx.Client(base_url=base, timeout=60) as http:
        r = http.get("/authorize", params=query)
        assert r.status_code == 302, r.text
        page = http.get(r.headers["location"])
        assert page.status_code == 200, page.text
        hidden, offered = login_form(page.text)
        chosen = offered if scopes is None else scopes
        form = {**hidden, "username": user, "password": password, "action": "allow", "scope": chosen}
        r = http.post("/login", data=form)
        assert r.status_code == 303, r.text
        back = parse_qs(urlsplit(r.headers["location"]).query)
        assert back["state"] == ["st-1"]
        token = http.post(
            "/token",
            data={
                "grant_type": "authorization_code",
                "code": back["code"][0],
                "redirect_uri": redirect_uri,
                "client_id": client_id,
                "code_verifier": verifier,
                **({"resource": resource} if resource else {}),
            },
        )
        assert token.status_code == 200, token.text
        return token.json()

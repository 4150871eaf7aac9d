"""The sign-in page of the embedded authorization server (``/login``): user name and password, and
which of the requested scopes to grant. Server-rendered, no script, no external assets.

``/authorize`` (the SDK's handler, then :meth:`~.provider.HostedProvider.authorize`) keeps the
request and sends the browser here with its id. The form is protected against cross-site posts by a
double-submit token (a random cookie, ``SameSite=Strict``, that the form must repeat) and by the
``Origin`` check; the page cannot be framed. Signing in makes a one-time code and redirects to the
client's redirect URI (``code``, ``state`` and RFC 9207's ``iss``); "Deny" redirects with
``error=access_denied`` (and ``iss``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import html
import secrets
import time
from urllib.parse import urlsplit

import anyio
from mcp.server.auth.provider import construct_redirect_uri
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from .. import passwords
from ..store import SCOPES, Store
from .provider import CODE_TTL, HostedProvider, params_of
from .store import CodeRow

COOKIE = "mide_signin"
MAX_FAILURES = 10
FAILURE_WINDOW = 600.0
"""A user name with this many wrong passwords within this many seconds is refused sign-in (429)
until the window passes; the wrong passwords are counted in the store, so by every worker alike."""
SCOPE_TEXT = {
    "read": "read the project's files, search, code intelligence, git history",
    "write": "change files and the git repository",
    "run": "run commands, jobs, terminals, run configurations and the debugger",
}
STYLE = (
    "body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#1b1b1f}"
    "h1{font-size:1.4rem}label{display:block;margin:.6rem 0 .2rem}"
    "input[type=text],input[type=password]{width:100%;padding:.45rem;font:inherit;box-sizing:border-box}"
    ".scopes label{display:flex;gap:.5rem;align-items:baseline;margin:.3rem 0}"
    ".error{color:#b00020;font-weight:600}.who{color:#555;font-size:.9rem}"
    "button{font:inherit;padding:.45rem 1.1rem;margin:1rem .5rem 0 0}"
    "@media (prefers-color-scheme:dark){body{background:#1b1b1f;color:#e6e6ea}.who{color:#aaa}}"
)
STYLE_HASH = "sha256-" + base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": f"default-src 'none'; style-src '{STYLE_HASH}'; frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",  # "no-referrer" would make the form's Origin "null"
    "X-Content-Type-Options": "nosniff",
}


class LoginPage:
    def __init__(self, provider: HostedProvider, store: Store) -> None:
        self.provider = provider
        self.store = store
        self.oauth = provider.oauth
        self.base = provider.resources.base

    async def handle(self, request: Request) -> Response:
        if request.method == "POST":
            return await self._post(request)
        return await self._get(request)

    async def _get(self, request: Request) -> Response:
        request_id = request.query_params.get("request", "")
        pending = await anyio.to_thread.run_sync(self.oauth.request, request_id) if request_id else None
        if pending is None:
            return _expired()
        csrf = secrets.token_urlsafe(32)
        response = await self._form(request_id, pending, csrf, None, "")
        response.set_cookie(
            COOKIE,
            csrf,
            max_age=600,
            path="/login",
            httponly=True,
            samesite="strict",
            secure=self.base.startswith("https:"),
        )
        return response

    async def _form(
        self,
        request_id: str,
        pending: tuple[str, str],
        csrf: str,
        error: str | None,
        user: str,
        status: int = 200,
    ) -> HTMLResponse:
        client_id, raw = pending
        params = params_of(raw)
        client = await self.provider.get_client(client_id)
        client_name = (client.client_name if client else None) or "An application"
        where = urlsplit(str(params.redirect_uri))
        target = where.netloc or where.scheme
        resource = params.resource
        if resource and resource.rstrip("/") != self.base:
            what = f"the project at <code>{html.escape(resource)}</code>"
        else:
            what = "all your projects on this service"
        boxes = "".join(
            f'<label><input type="checkbox" name="scope" value="{s}" checked> <span><b>{s}</b>: {SCOPE_TEXT[s]}'
            "</span></label>"
            for s in SCOPES
            if s in (params.scopes or SCOPES)
        )
        problem = f'<p class="error" role="alert">{html.escape(error)}</p>' if error else ""
        body = (
            '<!doctype html><html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width,initial-scale=1">'
            f"<title>Sign in: mcp-server-ide</title><style>{STYLE}</style></head><body>"
            "<h1>Sign in to mcp-server-ide</h1>"
            f"<p><b>{html.escape(client_name)}</b> asks to use {what}.</p>"
            f'<p class="who">After you sign in, you go back to {html.escape(target)}.</p>{problem}'
            '<form method="post" action="/login">'
            f'<input type="hidden" name="request" value="{html.escape(request_id)}">'
            f'<input type="hidden" name="csrf" value="{html.escape(csrf)}">'
            '<label for="username">User name</label>'
            f'<input type="text" id="username" name="username" autocomplete="username" required value="{html.escape(user)}">'
            '<label for="password">Password</label>'
            '<input type="password" id="password" name="password" autocomplete="current-password" required>'
            f'<fieldset class="scopes"><legend>Allow it to</legend>{boxes}</fieldset>'
            '<button type="submit" name="action" value="allow" id="allow">Sign in and allow</button>'
            '<button type="submit" name="action" value="deny" id="deny" formnovalidate>Deny</button>'
            "</form></body></html>"
        )
        return HTMLResponse(body, status_code=status, headers=HEADERS)

    async def _post(self, request: Request) -> Response:
        origin = request.headers.get("origin")
        if origin is not None and origin.rstrip("/").lower() != _origin(self.base):
            return _page(403, "Refused", "This form can only be sent from this service's own sign-in page.")
        form = await request.form()
        request_id, csrf = str(form.get("request", "")), str(form.get("csrf", ""))
        cookie = request.cookies.get(COOKIE, "")
        if not cookie or not hmac.compare_digest(cookie.encode(), csrf.encode()):
            return _page(
                403,
                "Refused",
                "The sign-in form was not sent from this page (or its cookie was blocked). Reload it.",
            )
        pending = await anyio.to_thread.run_sync(self.oauth.request, request_id) if request_id else None
        if pending is None:
            return _expired()
        params = params_of(pending[1])
        if form.get("action") == "deny":
            if await anyio.to_thread.run_sync(self.oauth.take_request, request_id) is None:
                return _expired()
            return _back(
                construct_redirect_uri(
                    str(params.redirect_uri),
                    error="access_denied",
                    error_description="the user denied access",
                    state=params.state,
                    iss=self.provider.issuer,
                )
            )
        username, password = str(form.get("username", ""))[:64], str(form.get("password", ""))
        if (wait := await anyio.to_thread.run_sync(self._locked, username)) is not None:
            response = _page(429, "Too many attempts", f"Too many wrong passwords for this user: try again in "
                             f"{max(1, round(wait / 60))} minute(s).")  # fmt: skip
            response.headers["Retry-After"] = str(int(wait) + 1)
            return response
        found = await anyio.to_thread.run_sync(self.store.password_hash, username)
        ok = await anyio.to_thread.run_sync(passwords.verify, password, found[1] if found else None)
        if not ok or found is None:
            now = time.time()
            await anyio.to_thread.run_sync(self.oauth.add_failure, username, now, now - FAILURE_WINDOW)
            return await self._form(request_id, pending, csrf, "Wrong user name or password.", username)
        await anyio.to_thread.run_sync(self.oauth.clear_failures, username)
        chosen = [s for s in (params.scopes or SCOPES) if s in form.getlist("scope")]
        if not chosen:
            return await self._form(request_id, pending, csrf, "Allow at least one of the scopes.", username)
        if await anyio.to_thread.run_sync(self.oauth.take_request, request_id) is None:
            return _expired()
        code = CodeRow(
            client_id=pending[0],
            user_id=found[0].id,
            scopes=tuple(chosen),
            code_challenge=params.code_challenge,
            redirect_uri=str(params.redirect_uri),
            redirect_explicit=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            expires_at=time.time() + CODE_TTL,
        )
        secret = await anyio.to_thread.run_sync(self.oauth.add_code, code)
        return _back(
            construct_redirect_uri(
                str(params.redirect_uri), code=secret, state=params.state, iss=self.provider.issuer
            )
        )

    def _locked(self, username: str) -> float | None:
        """Seconds until this user name may try again, or None."""
        now = time.time()
        recent = self.oauth.failures_since(username, now - FAILURE_WINDOW, MAX_FAILURES)
        if len(recent) < MAX_FAILURES:
            return None
        return max(0.0, FAILURE_WINDOW - (now - recent[-1]))


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def _back(url: str) -> Response:
    response = RedirectResponse(url, status_code=303, headers={"Cache-Control": "no-store"})
    response.delete_cookie(COOKIE, path="/login")
    return response


def _page(status: int, title: str, text: str) -> HTMLResponse:
    body = (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1><p>{html.escape(text)}</p></body></html>"
    )
    return HTMLResponse(body, status_code=status, headers=HEADERS)


def _expired() -> HTMLResponse:
    return _page(
        400,
        "Sign-in link expired",
        "This sign-in link has expired or was used already. Start signing in again from your application.",
    )

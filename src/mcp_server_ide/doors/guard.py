"""The checks every HTTP request passes before any door sees it (SECURITY.md §5).

- ``Host`` must be one this server answers to (DNS-rebinding protection, whatever the bind).
- ``Origin``, when present, must be this server's own origin or one configured with
  ``--allow-origin``; ``null``, look-alikes and userinfo tricks are refused.
- A bearer token, when set, is required on every request except the static reference page,
  compared in constant time, and never logged.
- Bodies are capped (by ``Content-Length`` and while streaming).
Refusals use the seed's envelope ``{"status": null, "error": ...}``; no CORS headers are sent.
"""

from __future__ import annotations

import hmac
import json
from dataclasses import dataclass, field

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from . import jsonrpc

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
MAX_BODY = 32 * 1024 * 1024
BODY_TIMEOUT_S = 30.0
PUBLIC_PATHS = ("/mcp/tools", "/mcp/static/")


@dataclass
class GuardPolicy:
    port: int
    allowed_hosts: set[str] = field(default_factory=set)
    allowed_origins: set[str] = field(default_factory=set)
    token: str | None = None
    max_body: int = MAX_BODY
    body_timeout: float = BODY_TIMEOUT_S

    @classmethod
    def for_bind(
        cls,
        host: str,
        port: int,
        *,
        token: str | None,
        extra_hosts: list[str] | None = None,
        extra_origins: list[str] | None = None,
        body_timeout: float = BODY_TIMEOUT_S,
    ) -> GuardPolicy:
        names: set[str] = set(LOOPBACK_NAMES)
        bound = f"[{host}]" if ":" in host and not host.startswith("[") else host
        if bound not in ("0.0.0.0", "[::]"):
            names.add(bound.lower())
        names.update(h.lower() for h in extra_hosts or [])
        hosts = {f"{n}:{port}" for n in names} | names
        origins = {f"{scheme}://{n}:{port}" for n in names for scheme in ("http", "https")}
        origins.update(o.rstrip("/").lower() for o in extra_origins or [])
        return cls(
            port=port, allowed_hosts=hosts, allowed_origins=origins, token=token, body_timeout=body_timeout
        )


def envelope_error(message: str) -> bytes:
    return json.dumps({"status": None, "error": message}).encode()


class GuardMiddleware:
    def __init__(self, app: ASGIApp, policy: GuardPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        refusal = self._check(scope, headers)
        if refusal is not None:
            status, message, extra = refusal
            await _respond(send, status, message, extra)
            return
        session = headers.get("mcp-session-id")
        if session is not None and scope.get("path") in MCP_PATHS and not jsonrpc.visible_ascii(session):
            await _respond_json(send, 400, _rpc_error(None, -32600, jsonrpc.BAD_SESSION_ID))
            return
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > self.policy.max_body):
            await _respond(
                send, 413, f"refused: the body is over {self.policy.max_body} bytes (rule: bodies are capped)"
            )
            return
        body = b""
        if scope.get("method") in BODY_METHODS:
            # Every body is read here, whole, within the body deadline: a client that sends it a
            # byte at a time gets 408 and the connection is closed, whichever door it was for.
            try:
                with anyio.fail_after(self.policy.body_timeout):
                    body = await _read_body(self._capped(receive, send))
            except BodyTooLarge:
                await _respond(
                    send,
                    413,
                    f"refused: the body is over {self.policy.max_body} bytes (rule: bodies are capped)",
                )
                return
            except TimeoutError:
                await _respond(
                    send,
                    408,
                    f"refused: the body did not arrive within {self.policy.body_timeout:g} s (rule: request "
                    "bodies have a read deadline; send the whole body at once)",
                    {"connection": "close"},
                )
                return
            if body is None:
                return  # the client went away
            receive = _replay(body, receive)
        if scope.get("method") == "POST" and scope.get("path") in JSON_RPC_PATHS:
            duplicate, parsed = _parse_strict(body)
            if duplicate is not None:
                await _respond_json(
                    send,
                    400,
                    _rpc_error(
                        None,
                        -32700,
                        f"Parse error: duplicate key {duplicate!r} (rule: JSON objects must not repeat a key)",
                    ),
                )
                return
            bad = jsonrpc.bad_id(parsed)
            if bad is not None:  # the SDK would read it as a notification and answer 202, nothing
                await _respond_json(send, 400, _rpc_error(None, -32600, bad))
                return
            mixed = jsonrpc.mixed_shape(parsed)
            if mixed is not None:  # the SDK would take it for an answer to one of its requests: 202
                await _respond_json(send, 400, _rpc_error(mixed[0], -32600, mixed[1]))
                return
        await self.app(scope, self._capped(receive, send), send)

    def _check(self, scope: Scope, headers: dict[str, str]) -> tuple[int, str, dict[str, str]] | None:
        host = headers.get("host", "").lower()
        if host not in self.policy.allowed_hosts:
            return (
                403,
                (
                    "refused: this server does not answer to that Host header (rule: DNS-rebinding protection; "
                    "use http://127.0.0.1:PORT or start the server with --allowed-host)"
                ),
                {},
            )
        origin = headers.get("origin")
        if origin is not None and origin.rstrip("/").lower() not in self.policy.allowed_origins:
            return (
                403,
                (
                    "refused: requests from that Origin are not allowed (rule: only this server's own pages and "
                    "origins given with --allow-origin may call it)"
                ),
                {},
            )
        token = self.policy.token
        if token and not _is_public(scope):
            given = headers.get("authorization", "")
            scheme, _, value = given.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(), token.encode()):
                return (
                    401,
                    (
                        "unauthorized: this server needs 'Authorization: Bearer <token>' (rule: every call carries "
                        "the server's token in the header)"
                    ),
                    {"www-authenticate": 'Bearer realm="mcp-server-ide"'},
                )
        return None

    def _capped(self, receive: Receive, send: Send) -> Receive:
        limit = self.policy.max_body
        seen = 0

        async def capped_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge()
            return message

        return capped_receive


JSON_RPC_PATHS = ("/mcp", "/mcp/", "/messages", "/messages/")
MCP_PATHS = ("/mcp", "/mcp/")
BODY_METHODS = ("POST", "PUT", "PATCH")


async def _read_body(receive: Receive) -> bytes | None:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


class _Duplicate(Exception):
    pass


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in pairs:
        if key in out:
            raise _Duplicate(key)
        out[key] = value
    return out


def _parse_strict(body: bytes) -> tuple[str | None, object]:
    """(the first repeated key or None, the parsed JSON or None); other faults are left to the SDK."""
    if b'"' not in body:
        return None, None
    try:
        return None, json.loads(body, object_pairs_hook=_no_duplicates)
    except _Duplicate as dup:
        return str(dup.args[0]), None
    except (ValueError, RecursionError):
        return None, None


def _rpc_error(request_id: object, code: int, message: str) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


class BodyTooLarge(Exception):
    """Raised mid-stream; the REST door turns it into a 413."""


def _is_public(scope: Scope) -> bool:
    path = scope.get("path", "")
    return scope.get("method") == "GET" and any(
        path == p or (p.endswith("/") and path.startswith(p)) for p in PUBLIC_PATHS
    )


def _headers(scope: Scope) -> dict[str, str]:
    out: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", []):
        name = raw_name.decode("latin-1").lower()
        value = raw_value.decode("latin-1")
        if name in out and name in ("host", "origin", "authorization", "content-length"):
            out[name] = "\x00duplicate"  # two Hosts or Origins is never legitimate
            continue
        out[name] = value
    return out


async def _respond(send: Send, status: int, message: str, extra: dict[str, str] | None = None) -> None:
    await _respond_json(send, status, None, extra, body=envelope_error(message))


async def _respond_json(
    send: Send, status: int, data: object, extra: dict[str, str] | None = None, *, body: bytes | None = None
) -> None:
    if body is None:
        body = json.dumps(data).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    for key, value in (extra or {}).items():
        headers.append((key.encode(), str(value).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})

"""SECURITY.md §5, the HTTP doors, attacked over real sockets against the real server process.

Host and Origin are checked on every door (Streamable HTTP ``/mcp``, legacy ``/sse`` and its
``/messages/``, the seed's REST doors), whatever the bind address; no tool runs from a GET; the REST
door takes ``application/json`` only; no CORS header is ever sent; the bearer token is required
when set, read from the header only, and never echoed or logged; malformed, huge, deep, duplicated
and cut-off requests get a clean error and the server keeps answering; two clients using the same
JSON-RPC id each get their own answer; a non-loopback bind without a token is refused.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from .support.net import ACCEPT, initialize, open_session
from .support.security import data_of, registered_specs

TOOL_NAMES = {s.name for s in registered_specs()}
INIT = initialize()
MARKER = "created-by-a-refused-request.txt"


def _port(url: str) -> int:
    port = urlsplit(url).port
    assert port is not None
    return port


def raw(port: int, data: bytes, *, host: str = "127.0.0.1", timeout: float = 5, whole: bool = True) -> bytes:
    """Send bytes on a fresh connection; return what comes back (the head only when not ``whole``)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect((host, port))
        sock.sendall(data)
        out = b""
        try:
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                out += chunk
                if not whole and b"\r\n\r\n" in out:
                    break
        except (TimeoutError, ConnectionResetError):
            pass
        return out


def status_of(response: bytes) -> int:
    assert response.startswith(b"HTTP/1."), response[:200]
    return int(response.split(b" ", 2)[1])


def request(method: str, path: str, headers: dict[str, str], body: bytes = b"") -> bytes:
    lines = [f"{method} {path} HTTP/1.1"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    if body or method in ("POST", "PUT", "PATCH"):
        lines.append(f"Content-Length: {len(body)}")
    lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def doors(port: int) -> list[tuple[str, str, dict[str, str], bytes]]:
    """(method, path, headers, body) for every door; the tool call would create MARKER if it ran."""
    tool_body = json.dumps({"pathInProject": MARKER, "text": "x"}).encode()
    json_h = {"Content-Type": "application/json"}
    mcp_h = {"Content-Type": "application/json", "Accept": ACCEPT}
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "create_new_file_with_text", "arguments": {"pathInProject": MARKER, "text": "x"}},
    }
    return [
        ("GET", "/mcp/status", {}, b""),
        ("POST", "/mcp/status", json_h, b"{}"),
        ("GET", "/mcp/initialize", {}, b""),
        ("GET", "/mcp/list_tools", {}, b""),
        ("POST", "/mcp/create_new_file_with_text", json_h, tool_body),
        ("POST", "/mcp", mcp_h, json.dumps(INIT).encode()),
        ("POST", "/mcp", mcp_h, json.dumps(call).encode()),
        ("GET", "/mcp", {"Accept": "text/event-stream"}, b""),
        ("DELETE", "/mcp", {}, b""),
        ("GET", "/sse", {"Accept": "text/event-stream"}, b""),
        ("POST", "/messages/?session_id=00000000000000000000000000000000", json_h, json.dumps(call).encode()),
    ]


def _no_marker(ws: Path) -> None:
    assert not (ws / MARKER).exists(), "a refused request ran a tool"


def _no_cors(response: bytes) -> None:
    head = response.split(b"\r\n\r\n", 1)[0].lower()
    assert b"access-control-" not in head, f"CORS header sent: {head!r}"


# ----------------------------------------------------------------------------- Host and Origin


def test_bad_host_and_origin_are_refused_on_every_door(http_server, ws_path: Path) -> None:
    server = http_server(ws_path)
    port = _port(server.url)
    good_host = f"127.0.0.1:{port}"
    bad_origins = [
        "null",
        "http://localhost.evil.com",
        f"http://localhost.evil.com:{port}",
        f"http://localhost:{port}@evil.com",
        f"http://127.0.0.1:{port}@evil.com",
        f"http://127.0.0.1:{port}.evil.com",
        f"http://evil.com:{port}",
        "http://evil.com",
        f"http://[::1].evil.com:{port}",
        f"http://localhost:{port + 1}",
        "http://localhost",
        "http://127.0.0.1",
        f"http://0.0.0.0:{port}",
        f"http://127.0.0.2:{port}",
        f"ws://127.0.0.1:{port}.evil.com",
        "file://",
        "chrome-extension://abcdefghijklmnop",
        f"http://127.0.0.1:{port}/../evil",
        f"http://127.0.0.1:{port} http://evil.com",
        f"http://127.0.0.1:{port}, http://evil.com",
    ]
    bad_hosts = [
        "evil.com",
        f"evil.com:{port}",
        f"localhost.evil.com:{port}",
        f"127.0.0.1.evil.com:{port}",
        f"127.0.0.1:{port}.evil.com",
        f"localhost:{port}@evil.com",
        f"127.0.0.1:{port + 1}",
        f"0.0.0.0:{port}",
        f"127.0.0.2:{port}",
        f"[::1].evil.com:{port}",
        f"LOCALHOST.EVIL.COM:{port}",
    ]
    for method, path, headers, body in doors(port):
        for origin in bad_origins:
            h = {"Host": good_host, "Origin": origin, **headers}
            resp = raw(port, request(method, path, h, body), whole=False)
            assert status_of(resp) in (400, 403), f"{method} {path} Origin {origin!r}: {resp[:200]!r}"
            _no_cors(resp)
        for host in bad_hosts:
            h = {"Host": host, **headers}
            resp = raw(port, request(method, path, h, body), whole=False)
            assert status_of(resp) in (400, 403), f"{method} {path} Host {host!r}: {resp[:200]!r}"
            _no_cors(resp)
        # No Host at all (HTTP/1.0 allows it): refused too.
        resp = raw(port, f"{method} {path} HTTP/1.0\r\n\r\n".encode(), whole=False)
        assert status_of(resp) in (400, 403), f"{method} {path} without Host: {resp[:200]!r}"
    _no_marker(ws_path)
    # Our own origins are accepted, IPv6 loopback included, in any case, with or without a slash.
    for origin in (
        f"http://127.0.0.1:{port}",
        f"http://localhost:{port}",
        f"http://[::1]:{port}",
        f"https://localhost:{port}",
        f"http://LOCALHOST:{port}/",
    ):
        resp = raw(port, request("GET", "/mcp/status", {"Host": good_host, "Origin": origin}))
        assert status_of(resp) == 200, f"Origin {origin!r} refused: {resp[:300]!r}"
        _no_cors(resp)
    # The reference page is public (no token) but not exempt from the Host and Origin checks.
    for headers in ({"Host": "evil.com"}, {"Host": good_host, "Origin": "http://evil.com"}):
        resp = raw(port, request("GET", "/mcp/tools", headers), whole=False)
        assert status_of(resp) == 403, f"/mcp/tools with {headers}: {resp[:200]!r}"
    for host in (good_host, f"localhost:{port}", f"[::1]:{port}", "127.0.0.1", "localhost"):
        resp = raw(port, request("GET", "/mcp/status", {"Host": host}))
        assert status_of(resp) == 200, f"Host {host!r} refused: {resp[:300]!r}"


def test_repeated_host_origin_and_authorization_headers_are_refused(http_server, ws_path: Path) -> None:
    server = http_server(ws_path, env={"MCP_IDE_TOKEN": "tok-123456"})
    port = _port(server.url)
    good = f"127.0.0.1:{port}"
    auth = "Bearer tok-123456"
    cases = [
        f"GET /mcp/status HTTP/1.1\r\nHost: {good}\r\nHost: evil.com\r\nAuthorization: {auth}\r\n\r\n",
        f"GET /mcp/status HTTP/1.1\r\nHost: evil.com\r\nHost: {good}\r\nAuthorization: {auth}\r\n\r\n",
        f"GET /mcp/status HTTP/1.1\r\nHost: {good}\r\nHost: {good}\r\nAuthorization: {auth}\r\n\r\n",
        f"GET /mcp/status HTTP/1.1\r\nHost: {good}\r\nOrigin: http://{good}\r\nOrigin: http://evil.com\r\n"
        f"Authorization: {auth}\r\n\r\n",
        f"GET /mcp/status HTTP/1.1\r\nHost: {good}\r\nOrigin: null\r\nOrigin: http://{good}\r\nAuthorization: {auth}\r\n\r\n",
        f"GET /mcp/status HTTP/1.1\r\nHost: {good}\r\nAuthorization: Bearer wrong\r\nAuthorization: {auth}\r\n\r\n",
        f"GET /mcp/status HTTP/1.1\r\nHost: {good}\r\nAuthorization: {auth}\r\nAuthorization: Bearer wrong\r\n\r\n",
        f"POST /mcp/status HTTP/1.1\r\nHost: {good}\r\nAuthorization: {auth}\r\nContent-Length: 2\r\n"
        "Content-Length: 100000000000\r\n\r\n{}",
        # Request smuggling shapes: a length and chunking at once, a folded header.
        f"POST /mcp/get_file_text_by_path HTTP/1.1\r\nHost: {good}\r\nAuthorization: {auth}\r\n"
        "Content-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        f"GET /mcp/status HTTP/1.1\r\nHost: evil.com\r\n {good}\r\nAuthorization: {auth}\r\n\r\n",
    ]
    for case in cases:
        resp = raw(port, case.encode(), whole=False)
        assert status_of(resp) in (400, 401, 403, 413), f"{case!r}: {resp[:200]!r}"
    ok = raw(port, request("GET", "/mcp/status", {"Host": good, "Authorization": auth}))
    assert status_of(ok) == 200


def _has_ipv6() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock:
            sock.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _has_ipv6(), reason="this machine has no IPv6 loopback (::1) to bind")
def test_ipv6_loopback_bind_accepts_its_own_origin(http_server, ws_path: Path) -> None:
    (ws_path / "a.txt").write_text("over ipv6\n")
    server = http_server(ws_path, "--host", "::1")
    assert server.url.startswith("http://[::1]:")
    port = _port(server.url)
    own = f"[::1]:{port}"
    for origin in (f"http://{own}", f"http://127.0.0.1:{port}", f"http://localhost:{port}"):
        resp = raw(port, request("GET", "/mcp/status", {"Host": own, "Origin": origin}), host="::1")
        assert status_of(resp) == 200, f"Origin {origin!r}: {resp[:200]!r}"
    for origin in (
        "null",
        f"http://[::1].evil.com:{port}",
        f"http://[::1]:{port}@evil.com",
        "http://evil.com",
    ):
        resp = raw(
            port, request("GET", "/mcp/status", {"Host": own, "Origin": origin}), host="::1", whole=False
        )
        assert status_of(resp) == 403, f"Origin {origin!r}: {resp[:200]!r}"
    resp = raw(port, request("GET", "/mcp/status", {"Host": "evil.com"}), host="::1", whole=False)
    assert status_of(resp) == 403
    r = httpx.post(f"{server.url}/mcp/get_file_text_by_path", json={"pathInProject": "a.txt"}, timeout=10)
    assert r.status_code == 200 and r.json()["status"]["content"] == "over ipv6\n"


# ----------------------------------------------------------------------------- methods, media types, CORS


def test_no_tool_runs_from_a_get_or_a_non_json_post(http_server, ws_path: Path) -> None:
    server = http_server(ws_path)
    port = _port(server.url)
    host = {"Host": f"127.0.0.1:{port}"}
    query = f"?pathInProject={MARKER}&text=x"
    for method in ("GET", "HEAD", "PUT", "DELETE", "PATCH", "OPTIONS"):
        for tool in ("create_new_file_with_text", "rewrite_file_content", "get_file_text_by_path"):
            resp = raw(port, request(method, f"/mcp/{tool}{query}", host), whole=False)
            assert status_of(resp) in (405, 403, 400), f"{method} /mcp/{tool}: {resp[:200]!r}"
            _no_cors(resp)
    body = json.dumps({"pathInProject": MARKER, "text": "x"}).encode()
    form = f"pathInProject={MARKER}&text=x".encode()
    for media, payload in (
        ("application/x-www-form-urlencoded", form),
        (
            "multipart/form-data; boundary=xyz",
            b"--xyz\r\nContent-Disposition: form-data; name=a\r\n\r\nb\r\n--xyz--",
        ),
        ("text/plain", body),
        ("text/plain;charset=UTF-8", body),
        ("text/json", body),
        ("application/jsonx", body),
        ("application/json-patch+json", body),
        ("application/javascript", body),
        ("", body),
    ):
        headers = dict(host)
        if media:
            headers["Content-Type"] = media
        resp = raw(port, request("POST", "/mcp/create_new_file_with_text", headers, payload))
        assert status_of(resp) == 415, f"{media!r}: {resp[:300]!r}"
        assert json.loads(resp.split(b"\r\n\r\n", 1)[1])["error"].startswith("unsupported media type")
        # The Streamable HTTP door refuses them too.
        call = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {
                    "name": "create_new_file_with_text",
                    "arguments": {"pathInProject": MARKER, "text": "x"},
                },
            }
        ).encode()
        resp = raw(
            port,
            request(
                "POST",
                "/mcp",
                {**headers, "Accept": ACCEPT},
                call if media != "application/x-www-form-urlencoded" else form,
            ),
        )
        assert 400 <= status_of(resp) < 500, f"/mcp {media!r}: {resp[:300]!r}"
    _no_marker(ws_path)
    # application/json (with a charset) does run it.
    ok = raw(
        port,
        request(
            "POST",
            "/mcp/create_new_file_with_text",
            {**host, "Content-Type": "application/json; charset=utf-8"},
            body,
        ),
    )
    assert status_of(ok) == 200 and (ws_path / MARKER).exists()


def test_no_cors_headers_anywhere(http_server, ws_path: Path) -> None:
    server = http_server(ws_path)
    port = _port(server.url)
    host = f"127.0.0.1:{port}"
    for origin in (f"http://{host}", "http://evil.com", "null", None):
        for method, path, headers, body in doors(port):
            h = {"Host": host, **headers}
            if origin:
                h["Origin"] = origin
            resp = raw(port, request(method, path, h, body), whole=False, timeout=3)
            _no_cors(resp)
            preflight = {
                "Host": host,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type, authorization, mcp-session-id",
            }
            if origin:
                preflight["Origin"] = origin
            resp = raw(port, request("OPTIONS", path.split("?")[0], preflight), whole=False)
            _no_cors(resp)
            assert status_of(resp) >= 400, f"OPTIONS {path} from {origin!r} answered {resp[:200]!r}"


# ----------------------------------------------------------------------------- bearer token

TOKEN = "tok-Zq81-very-secret-value"


def test_bearer_token_header_only_never_echoed_or_logged(http_server, ws_path: Path) -> None:
    (ws_path / "a.txt").write_text("alpha\n")
    server = http_server(ws_path, "--log-level", "DEBUG", env={"MCP_IDE_TOKEN": TOKEN})
    port = _port(server.url)
    host = f"127.0.0.1:{port}"
    wrong_tokens = ["WRONG-guess-123", TOKEN[:-1], TOKEN + "x", TOKEN.upper(), " ", ""]
    bad_auth = [f"Bearer {w}" for w in wrong_tokens] + [
        TOKEN,
        f"Basic {TOKEN}",
        f"Token {TOKEN}",
        f"Bearer{TOKEN}",
        f"Bearer {TOKEN} extra",
        "Bearer",
    ]
    seen: list[bytes] = []
    for method, path, headers, body in doors(port):
        for auth in [None, *bad_auth]:
            h = {"Host": host, **headers}
            if auth is not None:
                h["Authorization"] = auth
            resp = raw(port, request(method, path, h, body), whole=False)
            assert status_of(resp) == 401, f"{method} {path} with {auth!r}: {resp[:200]!r}"
            assert b"www-authenticate: bearer" in resp.lower()
            seen.append(resp)
        for param in ("token", "access_token", "auth", "authorization", "bearer"):
            sep = "&" if "?" in path else "?"
            resp = raw(
                port,
                request(method, f"{path}{sep}{param}={TOKEN}", {"Host": host, **headers}, body),
                whole=False,
            )
            assert status_of(resp) == 401, f"{method} {path} with ?{param}=: {resp[:200]!r}"
            seen.append(resp)
        # A cookie is not a header token either.
        resp = raw(
            port,
            request(method, path, {"Host": host, "Cookie": f"token={TOKEN}", **headers}, body),
            whole=False,
        )
        assert status_of(resp) == 401
    _no_marker(ws_path)
    auth = {"Host": host, "Authorization": f"Bearer {TOKEN}"}
    for scheme in ("Bearer", "bearer", "BEARER"):
        ok = raw(port, request("GET", "/mcp/status", {"Host": host, "Authorization": f"{scheme} {TOKEN}"}))
        assert status_of(ok) == 200, ok[:200]
    read = raw(
        port,
        request(
            "POST",
            "/mcp/get_file_text_by_path",
            {**auth, "Content-Type": "application/json"},
            b'{"pathInProject": "a.txt"}',
        ),
    )
    assert status_of(read) == 200 and b"alpha" in read
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10) as http:
        r = http.post("/mcp", json=INIT, headers={"Accept": ACCEPT})
        assert r.status_code == 200, r.text
        seen.append(r.content)
        if "execute_os_specific_command" in TOOL_NAMES:
            # The token is never passed on to the commands the server runs.
            r = http.post("/mcp/execute_os_specific_command", json={"command": "env"})
            assert r.status_code == 200, r.text
            assert "PATH=" in r.text and TOKEN not in r.text
    for resp in seen:
        for secret in [TOKEN, *[w for w in wrong_tokens if len(w) > 3]]:
            assert secret.encode() not in resp, "a token was echoed back"
    time.sleep(0.3)
    log = server.log()
    assert "DEBUG" in log, "the server did not log at DEBUG: this check would prove nothing"
    for secret in [TOKEN, *[w for w in wrong_tokens if len(w) > 3]]:
        assert secret not in log, "a token reached the server log"


def test_reference_page_stays_public_without_the_token(http_server, ws_path: Path) -> None:
    server = http_server(ws_path, env={"MCP_IDE_TOKEN": TOKEN})
    r = httpx.get(f"{server.url}/mcp/tools", timeout=10)
    if r.status_code == 404:
        pytest.skip("this build has no reference page")
    assert r.status_code == 200 and TOKEN not in r.text
    # It is a page, not a door: posting to it runs nothing.
    r = httpx.post(f"{server.url}/mcp/tools", json={}, timeout=10)
    assert r.status_code == 401


# ----------------------------------------------------------------------------- hostile bodies


def _rpc_payload(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of a Streamable HTTP answer (plain JSON or one SSE event)."""
    text = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for line in text.splitlines():
            if line.startswith("data:"):
                return json.loads(line[5:])
        raise AssertionError(f"no data in {text!r}")
    return json.loads(text)


HOSTILE = [
    b"{",
    b"[1, 2",
    b"}",
    b"\xff\xfe\x00{",
    b"",
    b" ",
    b"null",
    b"[]",
    b'"just a string"',
    b"123",
    b"true",
    b"[" * 100_000 + b"]" * 100_000,
    b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
    b'{"x": NaN}',
    b'{"x": 1e999999}',
    b'{"x": ' + b"9" * 100_000 + b"}",
    b'{"pathInProject": "a.txt", "pathInProject": "../../etc/passwd"}',
    b'{"jsonrpc": "2.0", "jsonrpc": "2.0", "id": 1, "method": "ping"}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_file_text_by_path",'
    b'"arguments":{"pathInProject":"a.txt","pathInProject":"/etc/passwd"}}}',
    b'{"a": "\\ud800"}',
    b'{"a": "\x00"}',
]

WRONG_SHAPES: list[Any] = [
    {"id": 1, "method": "ping"},
    {"jsonrpc": "1.0", "id": 1, "method": "ping"},
    {"jsonrpc": "2.0", "id": 1},
    {"jsonrpc": "2.0", "id": 1, "method": 42},
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": [1, 2]},
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": "x"},
    {"jsonrpc": "2.0", "id": {"nested": 1}, "method": "ping"},
    {"jsonrpc": "2.0", "id": [1], "method": "ping"},
    {"jsonrpc": "2.0", "id": 1, "result": {}},
    {"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "x"}},
    [],
    [{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "id": 2, "method": "ping"}],
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}},
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": 5}},
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "no_such_tool", "arguments": {}}},
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "get_file_text_by_path", "arguments": []},
    },
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "get_file_text_by_path", "arguments": "a.txt"},
    },
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "get_file_text_by_path", "arguments": {"pathInProject": 5}},
    },
    {"jsonrpc": "2.0", "id": 1, "method": "no/such/method"},
    {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "file:///etc/passwd"}},
]


def test_hostile_bodies_get_clean_errors_and_the_server_stays_up(http_server, ws_path: Path) -> None:
    (ws_path / "a.txt").write_text("alpha\n")
    server = http_server(ws_path)
    with httpx.Client(base_url=server.url, timeout=20) as http:
        session = open_session(http)
        for body in HOSTILE:
            for path, headers in (
                ("/mcp/get_file_text_by_path", {"Content-Type": "application/json"}),
                ("/mcp/status", {"Content-Type": "application/json"}),
                ("/mcp", {"Content-Type": "application/json", "Accept": ACCEPT}),
                ("/mcp", {"Content-Type": "application/json", **session}),
            ):
                r = http.post(path, content=body, headers=headers)
                where = f"{path} {body[:60]!r}"
                assert r.status_code < 500, f"{where}: {r.status_code} {r.text[:300]}"
                assert "root:x:0" not in r.text
                if path.startswith("/mcp/get_file"):
                    assert r.status_code == 400 and r.json()["error"], f"{where}: {r.text[:300]}"
                elif path == "/mcp" and r.status_code == 200:
                    msg = _rpc_payload(r)
                    assert "error" in msg or msg.get("result", {}).get("isError"), f"{where}: {r.text[:300]}"
        for shape in WRONG_SHAPES:
            r = http.post("/mcp", json=shape, headers={"Content-Type": "application/json", **session})
            where = f"/mcp {json.dumps(shape)[:100]}"
            assert r.status_code < 500, f"{where}: {r.status_code} {r.text[:300]}"
            if r.status_code == 200:
                msg = _rpc_payload(r)
                assert "error" in msg or msg.get("result", {}).get("isError"), f"{where}: {r.text[:300]}"
            assert "root:x:0" not in r.text
        # Unknown fields: refused on the REST door, and as an error result on MCP (a misspelt
        # expectedHash must not silently switch the guard off).
        r = http.post("/mcp/get_file_text_by_path", json={"pathInProject": "a.txt", "evil": 1})
        assert r.status_code == 400 and "evil" in r.json()["error"]
        r = http.post(
            "/mcp/rewrite_file_content",
            json={"pathInProject": "a.txt", "text": "x", "expected_hash": "0" * 64},
        )
        assert r.status_code == 400 and (ws_path / "a.txt").read_text() == "alpha\n"
        call = {
            "jsonrpc": "2.0",
            "id": 9,
            "method": "tools/call",
            "params": {
                "name": "rewrite_file_content",
                "arguments": {"pathInProject": "a.txt", "text": "x", "expected_hash": "0" * 64},
            },
        }
        msg = _rpc_payload(http.post("/mcp", json=call, headers=session))
        assert msg["result"]["isError"] and "expected_hash" in msg["result"]["content"][0]["text"]
        assert (ws_path / "a.txt").read_text() == "alpha\n"
        # Duplicate keys are refused on both doors, whichever value comes first.
        r = http.post("/mcp", content=HOSTILE[18], headers={"Content-Type": "application/json", **session})
        assert r.status_code == 400 and "duplicate key" in r.text
        # Unknown method: the JSON-RPC error, not a crash.
        msg = _rpc_payload(
            http.post("/mcp", json={"jsonrpc": "2.0", "id": 3, "method": "foo/bar"}, headers=session)
        )
        assert msg["error"]["code"] == -32601
        # Still up, same session still works.
        r = http.post("/mcp/get_file_text_by_path", json={"pathInProject": "a.txt"})
        assert r.status_code == 200 and r.json()["status"]["content"] == "alpha\n"
        call = {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "get_file_text_by_path", "arguments": {"pathInProject": "a.txt"}},
        }
        msg = _rpc_payload(http.post("/mcp", json=call, headers=session))
        assert msg["id"] == 4 and not msg["result"].get("isError")
    assert server.process.poll() is None


def test_huge_bodies_are_refused_before_they_are_read(http_server, ws_path: Path) -> None:
    server = http_server(ws_path)
    port = _port(server.url)
    host = f"127.0.0.1:{port}"
    for path, extra in (
        ("/mcp/get_file_text_by_path", {}),
        ("/mcp/status", {}),
        ("/mcp", {"Accept": ACCEPT}),
        ("/messages/?session_id=0", {}),
    ):
        for length in ("1000000000", "1e9", "-1", "99999999999999999999999", "0x10"):
            head = f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            head += "".join(f"{k}: {v}\r\n" for k, v in extra.items())
            head += f"Content-Length: {length}\r\n\r\n"
            start = time.monotonic()
            with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
                sock.sendall(head.encode())
                try:
                    for _ in range(16):  # a little of the 1 GB, then wait for the answer
                        sock.sendall(b"[" + b" " * 4095)
                except OSError:
                    pass  # the server already answered and closed: fine
                answer = b""
                try:
                    while b"\r\n\r\n" not in answer:
                        chunk = sock.recv(4096)
                        if not chunk:
                            break
                        answer += chunk
                except (TimeoutError, ConnectionResetError):
                    pass
            elapsed = time.monotonic() - start
            assert answer, f"{path} Content-Length {length}: no answer"
            assert status_of(answer) in (400, 413), f"{path} Content-Length {length}: {answer[:200]!r}"
            assert elapsed < 3, f"{path}: the refusal took {elapsed:.1f}s"
    # Without a length (chunked), the cap applies while streaming.
    for path, extra in (("/mcp/get_file_text_by_path", {}), ("/mcp", {"Accept": ACCEPT})):

        def chunks():
            yield b'{"pathInProject": "'
            block = b"a" * (1 << 20)
            for _ in range(48):
                yield block

        start = time.monotonic()
        try:
            r = httpx.post(
                server.url + path,
                content=chunks(),
                headers={"Content-Type": "application/json", **extra},
                timeout=30,
            )
            status = r.status_code
        except httpx.HTTPError:
            status = 413  # the server cut the upload short, which is a refusal too
        assert status == 413, f"{path} chunked: {status}"
        assert time.monotonic() - start < 20
    r = httpx.get(server.url + "/mcp/status", timeout=5)
    assert r.status_code == 200
    assert server.process.poll() is None


def test_clients_that_vanish_mid_request_leave_the_server_up(http_server, ws_path: Path) -> None:
    (ws_path / "a.txt").write_text("alpha\n")
    server = http_server(ws_path)
    port = _port(server.url)
    host = f"127.0.0.1:{port}"

    def vanish(data: bytes, wait: float = 0.1, reset: bool = False) -> None:
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        if reset:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        sock.sendall(data)
        time.sleep(wait)
        sock.close()

    body = json.dumps({"pathInProject": "a.txt"}).encode()
    for reset in (False, True):
        # Half a body, then gone.
        vanish(
            f"POST /mcp/get_file_text_by_path HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n".encode()
            + body[:10],
            reset=reset,
        )
        vanish(
            f'POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: {ACCEPT}\r\nContent-Length: 500\r\n\r\n{{"jsonrpc"'.encode(),
            reset=reset,
        )
        # Half the headers, then gone.
        vanish(f"POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Ty".encode(), reset=reset)
        # An event stream opened and dropped.
        vanish(
            f"GET /sse HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n\r\n".encode(),
            wait=0.5,
            reset=reset,
        )
    with httpx.Client(base_url=server.url, timeout=20) as http:
        session = open_session(http)
        sid_headers = "".join(f"{k}: {v}\r\n" for k, v in session.items())
        # The session's own GET stream, dropped.
        vanish(f"GET /mcp HTTP/1.1\r\nHost: {host}\r\n{sid_headers}\r\n".encode(), wait=0.5)
        # A tool call whose answer is still streaming when the client goes.
        if "wait" in TOOL_NAMES:
            call = json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 5,
                    "method": "tools/call",
                    "params": {"name": "wait", "arguments": {"milliseconds": 1500}},
                }
            ).encode()
        else:
            call = json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 5,
                    "method": "tools/call",
                    "params": {"name": "search_in_files_content", "arguments": {"searchText": "alpha"}},
                }
            ).encode()
        head = f"POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n{sid_headers}Content-Length: {len(call)}\r\n\r\n"
        vanish(head.encode() + call, wait=0.3)
        vanish(head.encode() + call, wait=0.3, reset=True)
        time.sleep(1.5)
        # Still up: REST, and the very same MCP session.
        r = http.post("/mcp/get_file_text_by_path", json={"pathInProject": "a.txt"})
        assert r.status_code == 200 and r.json()["status"]["content"] == "alpha\n"
        call_ok = {
            "jsonrpc": "2.0",
            "id": 6,
            "method": "tools/call",
            "params": {"name": "get_file_text_by_path", "arguments": {"pathInProject": "a.txt"}},
        }
        msg = _rpc_payload(http.post("/mcp", json=call_ok, headers=session))
        assert msg["id"] == 6 and "alpha" in json.dumps(msg)
    assert server.process.poll() is None
    assert "Traceback" not in server.log(), server.log()[-3000:]


# ----------------------------------------------------------------------------- same id, two clients


async def _same_id_rounds(base: str, stateless: bool, rounds: int = 12) -> None:
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:

        async def session() -> dict[str, str]:
            if stateless:
                return {"Accept": ACCEPT, "mcp-protocol-version": "2025-06-18"}
            r = await http.post("/mcp", json=INIT, headers={"Accept": ACCEPT})
            assert r.status_code == 200, r.text
            h = {
                "Accept": ACCEPT,
                "mcp-session-id": r.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-06-18",
            }
            r = await http.post(
                "/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=h
            )
            assert r.status_code == 202
            return h

        one, two = await session(), await session()
        if not stateless:
            assert one["mcp-session-id"] != two["mcp-session-id"]

        async def read(headers: dict[str, str], name: str) -> str:
            call = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "get_file_text_by_path", "arguments": {"pathInProject": name}},
            }
            r = await http.post("/mcp", json=call, headers=headers)
            assert r.status_code == 200, r.text
            msg = _rpc_payload(r)
            assert msg["id"] == 1
            return data_of(msg["result"])["content"]

        for _ in range(rounds):
            a, b = await asyncio.gather(read(one, "a.txt"), read(two, "b.txt"))
            assert (a, b) == ("file A\n", "file B\n")


@pytest.mark.parametrize("mode", ["sessions", "stateless"])
def test_two_clients_with_the_same_request_id_get_their_own_answers(
    http_server, ws_path: Path, mode: str
) -> None:
    (ws_path / "a.txt").write_text("file A\n")
    (ws_path / "b.txt").write_text("file B\n")
    args = ["--stateless"] if mode == "stateless" else []
    server = http_server(ws_path, *args)
    asyncio.run(_same_id_rounds(server.url, stateless=mode == "stateless"))


# ----------------------------------------------------------------------------- binding


def test_default_bind_is_loopback(http_server, ws_path: Path) -> None:
    server = http_server(ws_path)
    assert server.url.startswith("http://127.0.0.1:")


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10", "example.com", "[::]"])
def test_non_loopback_bind_without_a_token_is_refused(ws_path: Path, host: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "MCP_IDE_TOKEN"}
    for extra_env in ({}, {"MCP_IDE_TOKEN": ""}):
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "mcp_server_ide",
                "--http",
                "--host",
                host,
                "--port",
                "0",
                "--workspace",
                str(ws_path),
            ],
            env={**env, **extra_env},
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
        assert proc.returncode == 2, f"--host {host}: {proc.returncode} {proc.stderr[-500:]}"
        assert "token" in proc.stderr and "listening" not in proc.stderr


def test_all_interfaces_bind_with_a_token_still_checks_host(http_server, ws_path: Path) -> None:
    # Listening on every interface is allowed with a token; requests here go to loopback only.
    server = http_server(ws_path, "--host", "0.0.0.0", "--token", TOKEN)
    port = _port(server.url)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    ok = raw(port, request("GET", "/mcp/status", {"Host": f"127.0.0.1:{port}", **auth}))
    assert status_of(ok) == 200
    for host in ("evil.com", f"evil.com:{port}", f"0.0.0.0:{port}", f"10.0.0.1:{port}"):
        resp = raw(port, request("GET", "/mcp/status", {"Host": host, **auth}), whole=False)
        assert status_of(resp) == 403, f"Host {host!r}: {resp[:200]!r}"
    resp = raw(
        port,
        request("GET", "/mcp/status", {"Host": f"127.0.0.1:{port}", "Origin": "http://evil.com", **auth}),
        whole=False,
    )
    assert status_of(resp) == 403
    resp = raw(port, request("GET", "/mcp/status", {"Host": f"127.0.0.1:{port}"}), whole=False)
    assert status_of(resp) == 401
    assert TOKEN not in server.log()


def test_kept_alive_connections_answer_without_a_nagle_delay(http_server, ws_path: Path) -> None:
    # A regression guard: with the listening socket created with proto 0, asyncio never set
    # TCP_NODELAY and every answer after the first on a kept-alive connection took ~40 ms more than
    # an answer on a new connection. Compared with new connections in the same run, so a loaded
    # machine slows both alike.
    (ws_path / "a.txt").write_text("alpha\n")
    server = http_server(ws_path)
    body = {"pathInProject": "a.txt"}
    kept, fresh = [], []
    with httpx.Client(base_url=server.url, timeout=10) as http:
        http.post("/mcp/get_file_text_by_path", json=body)
        for _ in range(15):
            start = time.perf_counter()
            r = http.post("/mcp/get_file_text_by_path", json=body)
            kept.append(time.perf_counter() - start)
            assert r.status_code == 200
            with httpx.Client(base_url=server.url, timeout=10) as once:
                start = time.perf_counter()
                r = once.post("/mcp/get_file_text_by_path", json=body)
                fresh.append(time.perf_counter() - start)
                assert r.status_code == 200
    kept_median, fresh_median = sorted(kept)[7], sorted(fresh)[7]
    assert kept_median < fresh_median + 0.03, (
        f"kept-alive {kept_median * 1000:.1f} ms against {fresh_median * 1000:.1f} ms on new connections"
    )

"""HTTP edge cases (issue 13 item 7) against the real ``--http`` server on loopback, over raw
sockets where the case is about the connection itself: read deadlines for a request's head and
body, a connection cap, a JSON-RPC id no request may have, one Origin rule for every door, and a
session id that is not visible ASCII."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from .support.net import ACCEPT, initialize, open_session

INIT = initialize()


def _port(url: str) -> int:
    port = urlsplit(url).port
    assert port is not None
    return port


def _connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.settimeout(0.2)
    return sock


def _dribble_until_closed(sock: socket.socket, head: bytes, drip: bytes, within: float) -> tuple[bool, bytes]:
    """Send ``head``, then ``drip`` a byte at a time, 5 bytes a second; (closed by the server within
    ``within`` seconds, what it sent back)."""
    sock.sendall(head)
    got = b""
    deadline = time.monotonic() + within
    i = 0
    while time.monotonic() < deadline:
        try:
            sock.sendall(drip[i % len(drip) : i % len(drip) + 1])
            i += 1
            chunk = sock.recv(65536)
            if not chunk:
                return True, got
            got += chunk
        except TimeoutError:
            continue
        except (BrokenPipeError, ConnectionResetError):
            return True, got
    return False, got


def test_a_slow_request_head_is_closed_after_the_header_deadline(http_server: Any, ws_path: Path) -> None:
    server = http_server(ws_path, "--http-header-timeout", "1")
    with _connect(_port(server.url)) as sock:
        closed, _ = _dribble_until_closed(
            sock, b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ", b"a", 10.0
        )
    assert closed, "a request head sent a byte at a time kept its connection open past 10x the deadline"
    assert httpx.get(server.url + "/mcp/status", timeout=10).status_code == 200


def test_a_slow_request_body_gets_408_after_the_body_deadline(http_server: Any, ws_path: Path) -> None:
    server = http_server(ws_path, "--http-body-timeout", "1")
    port = _port(server.url)
    head = (
        f"POST /mcp/get_project_modules HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"
    ).encode()
    with _connect(port) as sock:
        closed, got = _dribble_until_closed(sock, head, b" ", 10.0)
    assert closed, (
        f"a body sent a byte at a time kept its connection open past 10x the deadline: {got[:200]!r}"
    )
    assert got.startswith(b"HTTP/1.1 408"), got[:300]
    assert b"read deadline" in got


def test_connections_over_the_cap_are_closed_and_the_server_keeps_serving(
    http_server: Any, ws_path: Path
) -> None:
    server = http_server(ws_path, "--http-max-connections", "3", "--http-header-timeout", "60")
    port = _port(server.url)
    request = f"GET /mcp/status HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
    held: list[socket.socket] = []
    try:
        deadline = time.monotonic() + 20
        refused = None
        while refused is None and time.monotonic() < deadline and len(held) < 10:
            sock = _connect(port)
            sock.settimeout(5)
            try:
                sock.sendall(request)
                answer = sock.recv(65536)
            except (ConnectionResetError, BrokenPipeError):
                answer = b""
            if answer.startswith(b"HTTP/1.1 200"):
                held.append(sock)  # served and kept alive: it counts against the cap
            else:
                refused = answer
                sock.close()
        assert refused is not None and len(held) <= 3, f"{len(held)} kept-alive connections were all served"
        assert refused == b""
    finally:
        for sock in held:
            sock.close()
    deadline = time.monotonic() + 20
    while True:  # the held connections' close reaches the server soon; then it serves again
        try:
            if httpx.get(server.url + "/mcp/status", timeout=5).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, "the server did not serve again after the connections closed"
        time.sleep(0.1)


def test_an_id_no_request_may_have_is_answered_invalid_request(http_server: Any, ws_path: Path) -> None:
    server = http_server(ws_path)
    with httpx.Client(base_url=server.url, timeout=10) as http:
        session = open_session(http)
        for raw_id in (b"1e999999", b"1.5", b"true", b"[1]", b'{"a":1}'):
            body = b'{"jsonrpc":"2.0","id":' + raw_id + b',"method":"ping"}'
            r = http.post("/mcp", content=body, headers={"Content-Type": "application/json", **session})
            assert r.status_code == 400, (raw_id, r.status_code, r.text)
            message = r.json()
            assert message["error"]["code"] == -32600 and message["id"] is None, message
            assert "string or an integer" in message["error"]["message"]
        ok = http.post("/mcp", json={"jsonrpc": "2.0", "id": 7, "method": "ping"}, headers=session)
        assert ok.status_code == 200


def test_a_request_that_is_also_an_answer_is_answered_invalid_request(
    http_server: Any, ws_path: Path
) -> None:
    """Found by the full-budget fuzz: the SDK took it for an answer to one of its requests (202, nothing)."""
    server = http_server(ws_path)
    with httpx.Client(base_url=server.url, timeout=10) as http:
        session = open_session(http)
        for body in (
            {"jsonrpc": "2.0", "id": "n2", "method": {}, "result": {}, "error": -521},
            {"jsonrpc": "2.0", "id": "n2", "method": "ping", "result": {}},
            {"jsonrpc": "2.0", "id": "n2", "result": {}, "error": {"code": 1, "message": "x"}},
        ):
            r = http.post("/mcp", json=body, headers=session)
            assert r.status_code == 400, (body, r.status_code, r.text)
            message = r.json()
            assert message["error"]["code"] == -32600 and message["id"] == "n2", message
            assert "never both" in message["error"]["message"]
        ok = http.post("/mcp", json={"jsonrpc": "2.0", "id": 7, "method": "ping"}, headers=session)
        assert ok.status_code == 200


def test_one_origin_rule_for_every_door_case_insensitive(http_server: Any, ws_path: Path) -> None:
    server = http_server(ws_path)
    port = _port(server.url)
    with httpx.Client(base_url=server.url, timeout=10) as http:
        for origin in (f"HTTP://LOCALHOST:{port}", f"http://LocalHost:{port}", f"Http://127.0.0.1:{port}"):
            rest = http.post("/mcp/get_project_modules", json={}, headers={"Origin": origin})
            mcp = http.post("/mcp", json=INIT, headers={"Accept": ACCEPT, "Origin": origin})
            assert (rest.status_code, mcp.status_code) == (200, 200), (origin, rest.text, mcp.text)
        for origin in ("http://localhost.evil.com", f"HTTP://EVIL.COM:{port}", "null"):
            rest = http.post("/mcp/get_project_modules", json={}, headers={"Origin": origin})
            mcp = http.post("/mcp", json=INIT, headers={"Accept": ACCEPT, "Origin": origin})
            assert (rest.status_code, mcp.status_code) == (403, 403), origin


def test_a_session_id_that_is_not_visible_ascii_is_a_bad_request(http_server: Any, ws_path: Path) -> None:
    server = http_server(ws_path)
    port = _port(server.url)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    for session_id in (b"has space", b"tab\there", b"caf\xc3\xa9", b"\x7f"):
        request = (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Accept: {ACCEPT}\r\nContent-Length: {len(body)}\r\nConnection: close\r\nMcp-Session-Id: "
        ).encode()
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(request + session_id + b"\r\n\r\n" + body)
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 400"), (session_id, answer[:300])
        message = json.loads(answer.split(b"\r\n\r\n", 1)[1])
        assert message["error"]["code"] == -32600 and "visible ASCII" in message["error"]["message"]
    with httpx.Client(base_url=server.url, timeout=10) as http:
        r = http.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers={"Accept": ACCEPT, "mcp-session-id": "0" * 32},
        )
        assert r.status_code == 404  # visible ASCII but unknown: still the spec's 404

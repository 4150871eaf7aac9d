"""A kept-alive connection stays usable longer than the clients' own pool expiry.

The hosted load test found it: with uvicorn's 5 s keep-alive (httpx, which the MCP SDK uses, also
expires idle connections after 5 s), a client sending its next request just as the server closed
the idle connection got "Remote end closed connection without response" for a request the server
never saw (1,183 of 100,000 calls). A real hosted worker; raw HTTP/1.1 on one socket, a second
request 6 s after the first answer.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path
from urllib.parse import urlparse

from tests.support.hosted import start_hosted

REQUEST = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


def read_response(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data or not data.endswith(b"}"):
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def test_a_connection_idle_longer_than_5_s_still_serves_the_next_request(tmp_path: Path):
    service = start_hosted(tmp_path / "data")
    try:
        where = urlparse(service.url)
        with socket.create_connection((where.hostname, where.port), timeout=60) as sock:
            sock.sendall(REQUEST)
            assert read_response(sock).startswith(b"HTTP/1.1 200")
            time.sleep(6)  # longer than a 5 s keep-alive: such a server has closed the connection by now
            try:
                sock.sendall(REQUEST)
                second = read_response(sock)
            except OSError as exc:  # reset by the server
                second = repr(exc).encode()
            assert second.startswith(b"HTTP/1.1 200"), second
    finally:
        service.stop()


def test_a_slow_head_on_a_kept_alive_connection_is_still_cut(tmp_path: Path):
    """The head deadline counts from the next request's first byte: a kept-alive connection that
    then sends its head a byte at a time is closed (after ``header_timeout``, 10 s)."""
    service = start_hosted(tmp_path / "data")
    try:
        where = urlparse(service.url)
        with socket.create_connection((where.hostname, where.port), timeout=60) as sock:
            sock.sendall(REQUEST)
            assert read_response(sock).startswith(b"HTTP/1.1 200")
            sock.sendall(b"GET /healthz HTTP/1.1\r\n")  # and never the rest
            try:
                closed = sock.recv(65536) == b""
            except TimeoutError:  # still open after 60 s
                closed = False
            except OSError:  # reset: closed too
                closed = True
            assert closed
    finally:
        service.stop()

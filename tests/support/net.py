"""Loopback helpers for tests that speak the wire protocol themselves (raw JSON-RPC lines over stdio,
raw HTTP to the Streamable HTTP door) rather than through the SDK's client."""

from __future__ import annotations

import socket
from typing import Any

import httpx

#: The Accept header Streamable HTTP requires of every POST.
ACCEPT = "application/json, text/event-stream"


def free_port() -> int:
    """A loopback TCP port nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def initialize(version: str = "2025-06-18", id: int = 0) -> dict[str, Any]:
    """The ``initialize`` request of a minimal client (no capabilities)."""
    return {
        "jsonrpc": "2.0",
        "id": id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }


def open_session(http: httpx.Client, version: str = "2025-06-18") -> dict[str, str]:
    """Initialize a Streamable HTTP session on ``http`` (base URL = the server) and send
    ``notifications/initialized``; the headers every later request of that session carries."""
    r = http.post("/mcp", json=initialize(version), headers={"Accept": ACCEPT})
    assert r.status_code == 200, r.text
    headers = {
        "Accept": ACCEPT,
        "mcp-session-id": r.headers["mcp-session-id"],
        "mcp-protocol-version": version,
    }
    r = http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    assert r.status_code == 202, r.text
    return headers

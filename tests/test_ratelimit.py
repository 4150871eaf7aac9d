"""Per-caller rate and concurrency limits through the real HTTP doors (issue 16): 429 and Retry-After.

Callers are told apart here by a header the test sets (``--rate-key-header``), as a proxy in
front of the service would; the hosted service keys by user through the same middleware. No
timing is asserted: the rate is one request per 100 s, so a third request in a row is always over.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import httpx

from .support.net import initialize

INIT = initialize("2025-11-25", id=1)
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def call(server: Any, caller: str, tool: str = "get_terminal_info", **arguments: Any) -> httpx.Response:
    return httpx.post(f"{server.url}/mcp/{tool}", json=arguments, headers={"x-caller": caller}, timeout=60)


def test_a_caller_over_its_rate_gets_429_with_retry_after(ws_path: Path, http_server: Any) -> None:
    server = http_server(
        ws_path, "--rate-limit", "0.01", "--rate-burst", "2", "--rate-key-header", "X-Caller"
    )
    assert [call(server, "alice").status_code for _ in range(2)] == [200, 200]
    over = call(server, "alice")
    assert over.status_code == 429
    assert 1 <= int(over.headers["retry-after"]) <= 100
    assert over.json()["status"] is None and "rate limited" in over.json()["error"]
    # the MCP door too, for the same caller
    rpc = httpx.post(server.mcp_url, json=INIT, headers={**MCP_HEADERS, "x-caller": "alice"}, timeout=60)
    assert rpc.status_code == 429 and "retry-after" in rpc.headers
    # another caller has a bucket of its own
    assert call(server, "bob").status_code == 200
    rpc = httpx.post(server.mcp_url, json=INIT, headers={**MCP_HEADERS, "x-caller": "bob"}, timeout=60)
    assert rpc.status_code == 200, rpc.text


def test_a_caller_over_its_concurrency_cap_gets_429(ws_path: Path, http_server: Any) -> None:
    server = http_server(ws_path, "--max-concurrent", "1", "--rate-key-header", "X-Caller")
    for wait_ms in (4000, 30000):  # the longer wait only if the machine stalled through the first
        slow: list[httpx.Response] = []
        thread = threading.Thread(
            target=lambda ms=wait_ms, into=slow: into.append(call(server, "alice", "wait", milliseconds=ms))
        )
        thread.start()
        refused = None
        while thread.is_alive() and refused is None:
            r = call(server, "alice")
            if r.status_code == 429:
                refused = r
        if refused is not None:
            assert refused.headers["retry-after"] == "1"
            assert "in flight" in refused.json()["error"]
            assert call(server, "bob").status_code == 200  # bob is not held by alice's call
            thread.join(60)
            assert slow[0].status_code == 200
            assert call(server, "alice").status_code == 200  # her call ended: her slot is free
            return
        thread.join(60)
    raise AssertionError("alice's second call was never refused while her first was in flight")

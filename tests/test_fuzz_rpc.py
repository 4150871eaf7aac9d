"""Hypothesis against the MCP door, over stdio and Streamable HTTP (tests/support/rpcfuzz.py).

Arbitrary JSON-RPC, valid and broken, tool arguments from each tool's input schema and hostile
paths, to the real server (sandboxed, on a throwaway workspace beside an "outside" folder). Pass:
the server alive with no traceback on stderr, every request answered (its id, or an error for a
broken one), no 5xx, nothing from outside in any answer, nothing outside changed. Silences of the
kinds the first runs found (stdio lines the SDK cannot parse; ids that are not strings or integers)
are tallied apart, named, and fail the run as any silence does; one test each at the end. Short budget in the default run;
``-m fuzz`` runs ``FUZZ_RPC_EXAMPLES`` (default 10,000) per door.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .support.fuzzing import TRACEBACK, Sandbox, budget, start_sandboxed_http, stop
from .support.rpcfuzz import (
    HttpPeer,
    Message,
    RpcFigures,
    StdioPeer,
    run_rpc_fuzz,
)


def _tools(peer: Any, door: str) -> list[dict[str, Any]]:
    request = Message('{"jsonrpc": "2.0", "id": "tools", "method": "tools/list"}', "request", "tools")
    answers = peer.exchange(request) if door == "stdio" else peer.exchange(request)[1]
    (listing,) = [a for a in answers if a.get("id") == "tools"]
    return listing["result"]["tools"]


def _fuzz_stdio(tmp_path: Path, examples: int, derandomize: bool = False) -> RpcFigures:
    box = Sandbox.create(tmp_path / "box")
    before = box.snapshot()
    peer = StdioPeer(box)
    try:
        peer.initialize()
        figures = run_rpc_fuzz(
            "stdio", box, peer, _tools(peer, "stdio"), examples, peer.alive, derandomize=derandomize
        )
        alive = peer.alive()
    finally:
        peer.close()
    _check(figures, alive, peer.stderr(), box, before)
    return figures


def _fuzz_http(tmp_path: Path, examples: int, derandomize: bool = False) -> RpcFigures:
    box = Sandbox.create(tmp_path / "box")
    before = box.snapshot()
    server = start_sandboxed_http(box)
    peer = HttpPeer(server.url)
    try:
        peer.initialize()
        alive = lambda: server.process.poll() is None  # noqa: E731
        figures = run_rpc_fuzz(
            "http", box, peer, _tools(peer, "http"), examples, alive, derandomize=derandomize
        )
        up = alive()
    finally:
        peer.close()
        stop(server)
    _check(figures, up, server.log(), box, before)
    return figures


def _check(figures: RpcFigures, alive: bool, stderr: str, box: Sandbox, before: dict[str, str]) -> None:
    print(figures.summary())
    for reason, example in figures.known_examples.items():
        print(f"  known: {reason}: e.g. {example!r}")
    if TRACEBACK in stderr:
        print(stderr[stderr.index(TRACEBACK) - 2000 :][:6000])
    for line in figures.unanswered[:10]:
        print("  unanswered:", line[:700])
    assert not figures.crashed and alive, stderr[-3000:]
    assert figures.unanswered == []
    assert figures.known == {}, "a silence of a kind fixed before (issue 13 items 7, 8): it is back"
    assert figures.server_errors == []
    assert figures.leaks == []
    assert TRACEBACK not in stderr, stderr[-3000:]
    assert box.snapshot() == before, "a file outside the workspace changed"


def test_stdio_fuzz_short_budget(tmp_path: Path) -> None:
    _fuzz_stdio(tmp_path, budget("FUZZ_RPC_SHORT", 100), derandomize=True)


def test_http_fuzz_short_budget(tmp_path: Path) -> None:
    _fuzz_http(tmp_path, budget("FUZZ_RPC_SHORT", 100), derandomize=True)


@pytest.mark.fuzz
@pytest.mark.timeout(12 * 3600)
def test_stdio_fuzz_full_budget(tmp_path: Path) -> None:
    _fuzz_stdio(tmp_path, budget("FUZZ_RPC_EXAMPLES", 10_000))


@pytest.mark.fuzz
@pytest.mark.timeout(12 * 3600)
def test_http_fuzz_full_budget(tmp_path: Path) -> None:
    _fuzz_http(tmp_path, budget("FUZZ_RPC_EXAMPLES", 10_000))


# The silences the first fuzz runs found (issue 13 items 7 and 8, and ids MCP does not allow), one
# case each: every one is answered now.


def test_stdio_answers_a_line_it_cannot_parse(tmp_path: Path) -> None:
    _stdio_answers(tmp_path, Message("{", "invalid"))


def test_stdio_answers_a_request_holding_a_lone_surrogate(tmp_path: Path) -> None:
    text = '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "get_file_text_by_path", "arguments": {"pathInProject": "\\ud800.txt"}}}'
    _stdio_answers(tmp_path, Message(text, "request", 7))


def test_http_answers_a_huge_number_id(tmp_path: Path) -> None:
    status, answers, body = _http_exchange(tmp_path, '{"jsonrpc": "2.0", "id": 1e999999, "method": "ping"}')
    assert status == 400 and any(a.get("error", {}).get("code") == -32600 for a in answers), (status, body)


def _http_exchange(tmp_path: Path, text: str) -> tuple[int, list[dict[str, Any]], str]:
    """Send ``text`` (an invalid request) in a fresh session of a sandboxed HTTP server."""
    box = Sandbox.create(tmp_path / "box")
    server = start_sandboxed_http(box)
    peer = HttpPeer(server.url)
    try:
        peer.initialize()
        return peer.exchange(Message(text, "invalid"))
    finally:
        peer.close()
        stop(server)


def _stdio_answers(tmp_path: Path, message: Message) -> None:
    box = Sandbox.create(tmp_path / "box")
    peer = StdioPeer(box)
    try:
        peer.initialize()
        answers = peer.exchange(message, patience=5.0)
    finally:
        peer.close()
    assert any("error" in a or a.get("id") == message.rid for a in answers), answers


def test_stdio_answers_a_null_id(tmp_path: Path) -> None:
    _stdio_answers(tmp_path, Message('{"jsonrpc": "2.0", "id": null, "method": "ping"}', "invalid"))


def test_http_answers_a_fractional_id(tmp_path: Path) -> None:
    status, answers, body = _http_exchange(tmp_path, '{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}')
    assert status == 400 and any("error" in a for a in answers), (status, body)


def test_stdio_answers_an_unknown_prompt_without_a_traceback(tmp_path: Path) -> None:
    """Found by the fuzz: the SDK answered ``prompts/get`` of an unknown name, but logged a traceback."""
    box = Sandbox.create(tmp_path / "box")
    peer = StdioPeer(box)
    try:
        peer.initialize()
        message = Message(
            '{"jsonrpc": "2.0", "id": 9, "method": "prompts/get", "params": {"name": "no-such-prompt"}}',
            "request",
            9,
        )
        answers = peer.exchange(message)
        stderr = peer.stderr()
    finally:
        peer.close()
    (answer,) = [a for a in answers if a.get("id") == 9]
    assert answer["error"]["code"] == -32602 and "prompts/list" in answer["error"]["message"], answer
    assert TRACEBACK not in stderr, stderr

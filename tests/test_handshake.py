"""The stdio handshake answered before the SDK loads (doors/handshake.py) is the SDK's, byte for byte.

Real server processes on real pipes. The reference is a server with ``MCP_IDE_FAST_HANDSHAKE=0``
(nothing of the handshake involved); the other one answers ``initialize`` from the answer kept by an
earlier start. Both get the same bytes (the handshake, and requests sent right behind it in the
same write); every answer must be the same bytes. The handshake's own debug line
(``--log-level DEBUG``) shows whether it answered, so the test also proves it was taken, and left
alone for first lines it is not sure of.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

MARK = "handshake answered initialize"


def initialize(version: str = "2025-11-25", request_id: int | str = 1, **params: Any) -> dict[str, Any]:
    body = {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "lines", "version": "1"},
        **params,
    }
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": body}


FOLLOW_UP = [
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "ping"},
    {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
    {
        "jsonrpc": "2.0",
        "id": 4,
        "method": "tools/call",
        "params": {"name": "list_files_in_folder", "arguments": {}},
    },
    {"jsonrpc": "2.0", "id": 5, "method": "resources/list"},
]


def converse(root: Path, messages: list[dict[str, Any]], log: Path, *, fast: bool) -> tuple[list[bytes], str]:
    """The raw answer lines to ``messages`` (sent in one write), in the order the server wrote them,
    and the server's log."""
    env = dict(os.environ)
    env["MCP_IDE_FAST_HANDSHAKE"] = "1" if fast else "0"
    wanted = {m["id"] for m in messages if "id" in m}
    with log.open("wb") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "mcp_server_ide", "--workspace", str(root), "--log-level", "DEBUG"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=env,
        )
        guard = threading.Timer(120, proc.kill)  # a hung server fails the test instead of hanging it
        guard.start()
        try:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
            proc.stdin.flush()
            answers: list[bytes] = []
            while wanted:
                line = proc.stdout.readline()
                assert line, f"the server closed its output; its log:\n{log.read_text()[-3000:]}"
                answer = json.loads(line)
                if "id" in answer and "method" not in answer:
                    answers.append(line)
                    wanted.discard(answer["id"])
            proc.stdin.close()
            proc.wait(timeout=60)
        finally:
            guard.cancel()
            proc.kill()
    return answers, log.read_text()


def by_id(answers: list[bytes]) -> dict[str, bytes]:
    return {json.dumps(json.loads(a)["id"]): a for a in answers}


def kept_answers(state: Path) -> list[Path]:
    return sorted((state / "mcp-server-ide" / "cache").glob("initialize-*.json"))


@pytest.fixture
def other_ws(tmp_path: Path) -> Path:
    """Another workspace: the kept answer does not depend on the folder served."""
    root = tmp_path / "other"
    root.mkdir()
    (root / "x.py").write_text("x = 1\n")
    return root


def test_the_handshake_answers_as_the_sdk_byte_for_byte(
    ws_path: Path, other_ws: Path, tmp_path: Path, _state_home: Path
) -> None:
    (ws_path / "a.txt").write_text("hello\n")
    # The first start of this build: the SDK answers, and its answers are kept (one per version).
    for version in ("2025-11-25", "2024-11-05"):
        _, log = converse(other_ws, [initialize(version)], tmp_path / "warm.log", fast=True)
        assert MARK not in log
    assert len(kept_answers(_state_home)) == 1
    cases = [
        [initialize("2025-11-25"), *FOLLOW_UP],  # requests right behind the handshake, in one write
        [initialize("2024-11-05", "s-1"), *FOLLOW_UP],  # an older version, a string id
        [initialize("1999-01-01"), *FOLLOW_UP[:2]],  # unknown: the SDK's latest handshake version
        [initialize("2026-07-28", 0)],  # a 2026-era version asked through initialize
        [
            initialize(
                "2025-11-25",
                7,
                capabilities={"roots": {"listChanged": True}, "sampling": {}, "elicitation": {"form": {}}},
                clientInfo={"name": "c", "version": "2", "title": "C", "websiteUrl": "https://example.com"},
            ),
            *FOLLOW_UP[:3],
        ],
    ]
    for n, messages in enumerate(cases):
        ours, log = converse(ws_path, messages, tmp_path / f"fast{n}.log", fast=True)
        theirs, _ = converse(ws_path, messages, tmp_path / f"sdk{n}.log", fast=False)
        assert MARK in log, (messages[0], log[-2000:])
        # Each answer byte for byte. Requests sent together run concurrently, so the order of the
        # answers after the handshake's is not fixed (JSON-RPC allows any): compare them by id.
        assert ours[0] == theirs[0], messages[0]
        assert by_id(ours) == by_id(theirs), messages[0]
        assert "differed" not in log


@pytest.mark.parametrize(
    "first",
    [
        initialize(_meta={"progressToken": 1}),  # params beyond the plain shape
        initialize(capabilities={"roots": {"listChanged": "yes"}}),  # what pydantic may or may not take
        {"jsonrpc": "2.0", "id": 9, "method": "ping"},  # not initialize at all
    ],
    ids=["meta", "odd-capability", "ping-first"],
)
def test_first_lines_it_is_not_sure_of_are_the_sdks(
    first: dict[str, Any], ws_path: Path, tmp_path: Path, _state_home: Path
) -> None:
    converse(ws_path, [initialize()], tmp_path / "warm.log", fast=True)  # an answer is kept
    assert kept_answers(_state_home)
    messages = [first, initialize(request_id=10), *FOLLOW_UP[:2]]
    ours, log = converse(ws_path, messages, tmp_path / "fast.log", fast=True)
    theirs, _ = converse(ws_path, messages, tmp_path / "sdk.log", fast=False)
    assert MARK not in log
    assert by_id(ours) == by_id(theirs)


def test_a_kept_answer_that_differs_is_replaced(ws_path: Path, tmp_path: Path, _state_home: Path) -> None:
    """The SDK's answer is compared with the kept one at every start; a difference (here a kept
    answer edited by hand) is logged and the SDK's is kept, so the next start sends the SDK's."""
    reference, _ = converse(ws_path, [initialize()], tmp_path / "sdk.log", fast=False)
    converse(ws_path, [initialize()], tmp_path / "warm.log", fast=True)
    [path] = kept_answers(_state_home)
    kept = json.loads(path.read_text())
    kept["results"]["2025-11-25"] = kept["results"]["2025-11-25"].replace('"IDE"', '"Stale"')
    path.write_text(json.dumps(kept))
    stale, log = converse(ws_path, [initialize()], tmp_path / "stale.log", fast=True)
    assert b'"Stale"' in stale[0] and "differed" in log
    fresh, log = converse(ws_path, [initialize()], tmp_path / "fresh.log", fast=True)
    assert MARK in log and fresh == reference

"""Lines the SDK cannot parse get a JSON-RPC error over stdio (issue 13 item 8), through a real
server process on pipes written raw bytes: before, such a line got no reply at all and the
client waited forever."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from .support.net import initialize

INIT = initialize("2025-11-25", id=1)


class Wire:
    """A server process on pipes, read a line at a time with a deadline."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mcp_server_ide", "--workspace", str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **env},
        )
        self.buffer = b""

    def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def receive(self, within: float = 30) -> dict[str, Any]:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + within
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            assert left > 0, "no answer: the server stayed silent"
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 65536)
                assert chunk, "the server closed its stdout"
                self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)


CALL = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_file_text_by_path","arguments":{"pathInProject":%s}}}'
CASES = [
    # (what is sent, the error code, the id the answer carries)
    (CALL % (11, b'"\\ud800.txt"'), -32700, 11),  # a lone surrogate: valid JSON to Python, not to the SDK
    (CALL % (12, b'"caf\xff.txt"'), -32700, 12),  # invalid UTF-8
    (b'{"jsonrpc":"2.0","id":13,"method":', -32700, 13),  # cut-off JSON, the id still readable
    (b"{not json", -32700, None),
    (b"[]", -32600, None),
    (b'{"jsonrpc":"2.0","id":14}', -32600, 14),  # JSON, but no message
    (b'{"jsonrpc":"2.0","id":1e999999,"method":"ping"}', -32600, None),  # the SDK's "notification"
    (b'{"jsonrpc":"2.0","id":2.5,"method":"ping"}', -32600, None),
    # Found by the full-budget fuzz: both a request and an answer, which the SDK took for an answer
    # to one of its own requests and dropped.
    (b'{"jsonrpc":"2.0","id":"n2","method":{},"result":{},"error":-521}', -32600, "n2"),
    (b'{"jsonrpc":"2.0","id":15,"method":"ping","result":{}}', -32600, 15),
    (b'{"jsonrpc":"2.0","id":16,"result":{},"error":{"code":1,"message":"x"}}', -32600, 16),
]


@pytest.mark.parametrize("lane", ["1", "0"])
def test_every_unparsable_line_gets_an_error_and_the_session_goes_on(ws_path: Path, lane: str) -> None:
    (ws_path / "a.txt").write_text("hello\n")
    wire = Wire(ws_path, {"MCP_IDE_DIRECT_LANE": lane})
    try:
        wire.send(json.dumps(INIT).encode())
        assert wire.receive()["id"] == 1
        wire.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        for sent, code, request_id in CASES:
            wire.send(sent)
            answer = wire.receive()
            assert answer.get("error", {}).get("code") == code, (sent, answer)
            assert answer["id"] == request_id, (sent, answer)
            assert "rule:" in answer["error"]["message"]
        wire.send(CALL % (20, b'"a.txt"'))
        answer = wire.receive()
        assert answer["id"] == 20 and "hello" in answer["result"]["content"][0]["text"]
    finally:
        wire.close()

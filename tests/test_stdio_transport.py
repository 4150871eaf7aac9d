"""The stdio door's transport (doors/faststdio.py) over a real process: pipes, big lines, fallback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .support.net import initialize
from .support.results import payload

pytestmark = pytest.mark.anyio


async def test_big_messages_both_ways_over_pipes(stdio_server_params: Any, ws_path: Path) -> None:
    from mcp import Client

    big = "".join(f"line {i:07d} " + "é" * 40 + "\n" for i in range(40000))  # ~3.5 MB, one JSON line
    async with Client(stdio_server_params(ws_path)) as client:
        written = await client.call_tool("project_fs_write", {"path": "big.txt", "content": big})
        assert not written.is_error, written.content[0].text
        read = await client.call_tool("get_file_text_by_path", {"pathInProject": "big.txt"})
        assert not read.is_error and payload(read)["content"] == big
        listing = await client.call_tool("project_fs_list", {})
        assert [e["path"] for e in payload(listing)["entries"]] == ["big.txt"]
    assert (ws_path / "big.txt").read_text(encoding="utf-8") == big


def test_a_terminal_stdin_falls_back_to_the_sdk_transport(ws_path: Path) -> None:
    """Not a pipe (a terminal here): the SDK's own transport serves, nothing is made non-blocking."""
    import os
    import pty
    import select
    import termios
    import tty

    (ws_path / "a.txt").write_text("hello\n")
    requests = [
        initialize("2025-11-25", id=1),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "project_fs_read", "arguments": {"path": "a.txt"}},
        },
    ]
    master, slave = pty.openpty()
    tty.setraw(slave, termios.TCSANOW)
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcp_server_ide", "--workspace", str(ws_path)],
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    os.close(slave)
    answers: dict[Any, Any] = {}
    buffer = b""
    try:
        for request in requests:
            os.write(master, json.dumps(request).encode() + b"\n")
        while 2 not in answers:
            ready, _, _ = select.select([proc.stdout], [], [], 30)
            assert ready, f"no answer in 30 s; got {answers}"
            chunk = os.read(proc.stdout.fileno(), 1 << 16)  # type: ignore[union-attr]
            assert chunk, "the server closed stdout"
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                message = json.loads(line)
                answers[message.get("id")] = message
    finally:
        os.close(master)
        proc.kill()
        proc.wait(10)
    assert answers[1]["result"]["serverInfo"]["name"] == "mcp-server-ide"
    assert json.loads(answers[2]["result"]["content"][0]["text"])["content"] == "hello\n"


def test_calls_still_running_when_stdin_closes_are_answered(ws_path: Path) -> None:
    """A client that writes its requests and closes stdin (a script, ``printf ... | mcp-server-ide``)
    gets every answer: the calls still running at end of input finish first (they were answered
    ``Connection closed`` before), then the server exits."""
    requests = [
        initialize("2025-11-25", id=1),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "wait", "arguments": {"milliseconds": 1500}},
        },
        {"jsonrpc": "2.0", "id": 3, "method": "ping"},
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "run_command_on_background", "arguments": {"command": "sleep 1; echo done-4"}},
        },
    ]
    stdin = b"".join(json.dumps(request).encode() + b"\n" for request in requests)
    done = subprocess.run(
        [sys.executable, "-m", "mcp_server_ide", "--workspace", str(ws_path)],
        input=stdin,
        capture_output=True,
        timeout=60,
    )
    answers = {message["id"]: message for message in map(json.loads, done.stdout.splitlines())}
    assert sorted(answers) == [1, 2, 3, 4], done.stdout[-2000:]
    assert "error" not in answers[2] and not answers[2]["result"].get("isError"), answers[2]
    assert "done-4" in answers[4]["result"]["content"][0]["text"], answers[4]
    assert done.returncode == 0, done.stderr[-2000:]

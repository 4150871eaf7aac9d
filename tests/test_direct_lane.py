"""The stdio direct lane (doors/directlane.py) answers exactly as the SDK's path would.

Two real servers on one workspace, one with the lane (the default) and one with
``MCP_IDE_DIRECT_LANE=0``, get the same JSON-RPC lines over their pipes; every answer must be the
same bytes. The lane's own debug line (``--log-level DEBUG``) shows which calls it answered, so the
test also proves the lane was really taken where it should be and left alone elsewhere.
"""

from __future__ import annotations

import codecs
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.support.results import payload
from tests.support.servers import stdio_params

LANE_MARK = "direct lane answered tools/call"


class LineClient:
    """A JSON-RPC client writing and reading raw lines on a server's stdio pipes."""

    def __init__(self, root: Path, log: Path, *, lane: bool) -> None:
        env = dict(os.environ)
        env["MCP_IDE_DIRECT_LANE"] = "1" if lane else "0"
        self.log = log
        self._stderr = log.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mcp_server_ide", "--workspace", str(root), "--log-level", "DEBUG"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
        )
        self._next = 0
        self.server_requests: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def send_raw(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line)
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None, **extra: Any) -> bytes:
        """The raw response line to one request (notifications in between are skipped)."""
        self._next += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next, "method": method, **extra}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.read_answer(message["id"])

    def read_answer(self, wanted: Any) -> bytes:
        """The raw answer line to request ``wanted`` (server requests in between are declined)."""
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            assert line, f"the server closed its output; its log:\n{self.log.read_text()[-3000:]}"
            answer = json.loads(line)
            if "method" in answer and "id" in answer:  # the server asks something: decline
                self.server_requests.append(answer)
                self.send({"jsonrpc": "2.0", "id": answer["id"], "result": {"action": "decline"}})
            elif answer.get("id") == wanted or ("error" in answer and answer.get("id") is None):
                return line

    def initialize(self, version: str = "2025-11-25", capabilities: dict[str, Any] | None = None) -> None:
        info = {
            "protocolVersion": version,
            "capabilities": capabilities or {},
            "clientInfo": {"name": "lines", "version": "1"},
        }
        self.request("initialize", info)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def lane_answers(self) -> list[str]:
        self._stderr.flush()
        return [line for line in self.log.read_text().splitlines() if LANE_MARK in line]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=20)
        self._stderr.close()


@pytest.fixture
def files(ws_path: Path) -> Path:
    (ws_path / "lf.py").write_text("def f():\n    return 'é'\n")
    (ws_path / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    (ws_path / "cr.txt").write_bytes(b"one\rtwo\r")
    (ws_path / "mixed.txt").write_bytes(b"a\r\nb\nc\r")
    (ws_path / "utf16.txt").write_bytes(codecs.BOM_UTF16_LE + "héllo\nwörld\n".encode("utf-16-le"))
    (ws_path / "latin.txt").write_bytes("caf\xe9\n".encode("cp1252"))
    (ws_path / "empty.txt").write_bytes(b"")
    (ws_path / "blob.bin").write_bytes(b"\x00\x01\x02" * 100)
    (ws_path / "sub" / "deeper").mkdir(parents=True)
    (ws_path / "sub" / "a.md").write_text("# a\n" * 50)
    (ws_path / "sub" / "deeper" / "b.json").write_text('{"b": 1}\n')
    (ws_path / "out-link").symlink_to("/etc")
    (ws_path / "big.txt").write_text("a line of a big file\n" * 20_000)  # over INLINE_READ_BYTES
    return ws_path


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get_file_text_by_path", {"pathInProject": "lf.py"}),
    ("get_file_text_by_path", {"pathInProject": "crlf.txt"}),
    ("get_file_text_by_path", {"pathInProject": "cr.txt"}),
    ("get_file_text_by_path", {"pathInProject": "mixed.txt"}),
    ("get_file_text_by_path", {"pathInProject": "utf16.txt"}),
    ("get_file_text_by_path", {"pathInProject": "latin.txt"}),
    ("get_file_text_by_path", {"pathInProject": "empty.txt"}),
    ("get_file_text_by_path", {"pathInProject": "/workspace/sub/a.md"}),
    ("get_file_text_by_path", {"pathInProject": "blob.bin"}),  # refused: binary
    ("get_file_text_by_path", {"pathInProject": "nope.txt"}),  # not found
    ("get_file_text_by_path", {"pathInProject": "../../etc/passwd"}),  # outside
    ("get_file_text_by_path", {"pathInProject": "out-link/passwd"}),  # outside, through a link
    ("get_file_text_by_path", {"pathInProject": "sub"}),  # a folder
    ("get_file_text_by_path", {"pathInProject": 5}),  # wrong type: the SDK's refusal
    ("get_file_text_by_path", {"pathInProject": "lf.py", "bogus": 1}),  # unknown argument
    ("get_file_text_by_path", {}),  # missing argument
    ("list_files_in_folder", {"pathInProject": "/"}),
    ("list_files_in_folder", {"pathInProject": "sub"}),
    ("list_files_in_folder", {}),
    ("list_files_in_folder", {"pathInProject": "lf.py"}),  # a file
    ("project_fs_read", {"path": "sub/a.md", "startLine": 3, "endLine": 7}),
    ("project_fs_read", {"path": "/workspace/lf.py"}),
    ("project_fs_read", {"path": "sub/a.md", "startLine": 0}),
    ("project_fs_list", {}),
    ("project_fs_list", {"dir": "sub", "maxEntries": 1}),
    ("project_fs_list", {"dir": "lf.py"}),  # a file
    ("project_fs_list", {"dir": "sub", "recursive": True}),  # a walk: not inline, always the SDK's
    ("get_file_text_by_path", {"pathInProject": "big.txt"}),  # a big file: read on a thread, the SDK's
    ("project_fs_read", {"path": "big.txt", "startLine": 2, "endLine": 3}),  # the same
    ("get_editor_state", {}),  # the editor model may wait for its state lock: never inline
    ("get_open_in_editor_file_path", {}),
    ("get_selected_in_editor_text", {}),
    ("no_such_tool", {}),  # unknown tool: the SDK's error
    ("search_in_files_content", {"searchText": "return"}),  # not inline: always the SDK's
]


def test_the_lane_answers_byte_for_byte_as_the_sdk(files: Path, tmp_path: Path) -> None:
    lane = LineClient(files, tmp_path / "lane.log", lane=True)
    sdk = LineClient(files, tmp_path / "sdk.log", lane=False)
    try:
        for client in (lane, sdk):
            client.initialize()
        for name, arguments in CALLS:
            params = {"name": name, "arguments": arguments}
            ours, theirs = lane.request("tools/call", params), sdk.request("tools/call", params)
            assert ours == theirs, (name, arguments)
        # A progress token changes nothing for a tool that never reports progress.
        params = {"name": "get_file_text_by_path", "arguments": {"pathInProject": "lf.py"}}
        with_token = {**params, "_meta": {"progressToken": "p1"}}
        assert lane.request("tools/call", with_token) == sdk.request("tools/call", with_token)
        # String ids come back as strings.
        assert lane.request("tools/call", params, id="s-1") == sdk.request("tools/call", params, id="s-1")
        answered = lane.lane_answers()
        assert sdk.lane_answers() == []
    finally:
        lane.close()
        sdk.close()
    taken = [line.split(LANE_MARK, 1)[1].split()[0] for line in answered]
    # Every plain call of an eligible tool with valid arguments went through the lane...
    assert taken.count("get_file_text_by_path") == 8 + 5 + 2  # successes + refusals + token/str-id calls
    assert taken.count("list_files_in_folder") == 4
    assert taken.count("project_fs_read") == 2
    assert taken.count("project_fs_list") == 3  # the flat listings; the recursive walk went to the SDK
    # ...and nothing else did.
    editor = {"get_editor_state", "get_open_in_editor_file_path", "get_selected_in_editor_text"}
    assert not {"no_such_tool", "search_in_files_content", *editor} & set(taken)


def test_requests_the_lane_is_not_sure_of_go_to_the_sdk(files: Path, tmp_path: Path) -> None:
    client = LineClient(files, tmp_path / "lane.log", lane=True)
    try:
        params = {"name": "get_file_text_by_path", "arguments": {"pathInProject": "lf.py"}}
        before = json.loads(client.request("tools/call", params))  # before initialize
        assert "error" in before or before["result"].get("isError")
        client.initialize()
        meta = {**params, "_meta": {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}
        traced = json.loads(client.request("tools/call", meta))
        assert "def f()" in json.loads(traced["result"]["content"][0]["text"])["content"]
        assert client.lane_answers() == []
        # A line longer than the lane reads (a large write, here a read padded with JSON whitespace)
        # is the SDK's: never parsed twice.
        padded = {"jsonrpc": "2.0", "id": 77, "method": "tools/call", "params": params}
        client.send_raw(json.dumps(padded).replace(", ", "," + " " * 70_000, 1).encode() + b"\n")
        assert b"def f()" in client.read_answer(77)
        assert client.lane_answers() == []
        # An id JSON-RPC does not allow (a boolean) is never the lane's: the door answers -32600
        # (the SDK would take the line for a notification and answer nothing).
        client.send({"jsonrpc": "2.0", "id": True, "method": "tools/call", "params": params})
        assert b'"code":-32600' in client.read_answer(None)
        assert b"def f()" in client.request("tools/call", params)
        assert len(client.lane_answers()) == 1
    finally:
        client.close()


@pytest.mark.anyio
async def test_both_eras_read_the_same_over_stdio(files: Path) -> None:
    """A 2026-07-28 connection is never the lane's (its requests carry their state in ``_meta``);
    both eras read the same file the same way."""
    params = stdio_params(files)
    seen = []
    for mode in ("2026-07-28", "legacy"):
        async with Client(params, mode=mode) as client:
            result = await client.call_tool("get_file_text_by_path", {"pathInProject": "crlf.txt"})
            seen.append(payload(result))
    assert seen[0] == seen[1]
    assert seen[0]["lineEnding"] == "CRLF" and seen[0]["content"] == "one\ntwo\n"


def test_a_read_through_the_lane_counts_for_the_session(files: Path, tmp_path: Path) -> None:
    """Overwriting a file the session has not read asks first (elicitation); a file read through the
    lane counts as read by that stdio session, so overwriting it does not ask (the lane uses the
    session key of the SDK's path)."""
    client = LineClient(files, tmp_path / "lane.log", lane=True)
    try:
        client.initialize(capabilities={"elicitation": {}})
        client.request(
            "tools/call", {"name": "get_file_text_by_path", "arguments": {"pathInProject": "lf.py"}}
        )
        assert len(client.lane_answers()) == 1
        for name in ("lf.py", "latin.txt"):
            write = {"name": "rewrite_file_content", "arguments": {"pathInProject": name, "text": "x = 1\n"}}
            client.request("tools/call", write)
        asked = [
            r["params"]["message"] for r in client.server_requests if r["method"] == "elicitation/create"
        ]
    finally:
        client.close()
    assert len(asked) == 1 and "latin.txt" in asked[0], asked
    assert (files / "lf.py").read_text() == "x = 1\n"

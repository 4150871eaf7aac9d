"""Editor tools (seed 000 "Editor") on the headless editor model, through an MCP client session and
the seed's REST doors of a real server process: a scripted editing session, restarts, outside
changes, line endings and encodings, and the refusals."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_server_ide.workspace import Policy

from .support.results import call_data as call
from .support.results import error

pytestmark = pytest.mark.anyio

CRLF_SOURCE = b"def greet(name):\r\n    return 'hello ' + name\r\n\r\nprint(greet('world'))\r\n"


async def test_scripted_session_keeps_crlf_and_survives_a_restart(mcp: Any, ws_path: Path) -> None:
    src = ws_path / "app.py"
    src.write_bytes(CRLF_SOURCE)
    async with mcp(ws_path) as client:
        assert await call(client, "get_open_in_editor_file_path") == ""
        assert await call(client, "get_open_in_editor_file_text") == ""

        # Open with line 2 selected (1-based lines, whole line when endCharacter is omitted).
        assert (
            await call(client, "open_file_in_editor", pathInProject="app.py", startLine=2, endLine=2)
            == "file is opened"
        )
        assert await call(client, "get_open_in_editor_file_path") == str(src)
        assert await call(client, "get_selected_in_editor_text") == "    return 'hello ' + name"
        state = await call(client, "get_editor_state")
        assert state["selection"] == {
            "startLine": 2, "startCharacter": 0, "endLine": 2, "endCharacter": 26, "text": "    return 'hello ' + name"
        }  # fmt: skip

        # Replace the selection with two lines: the file stays CRLF, the cursor lands after the new text.
        assert (
            await call(client, "replace_selected_text", text="    message = 'hi ' + name\n    return message")
            == "ok"
        )
        assert src.read_bytes() == (
            b"def greet(name):\r\n    message = 'hi ' + name\r\n    return message\r\n\r\nprint(greet('world'))\r\n"
        )
        state = await call(client, "get_editor_state")
        assert (state["selection"]["startLine"], state["selection"]["startCharacter"]) == (3, 18)
        assert state["selection"]["text"] == ""

        # An empty selection inserts at the cursor.
        assert await call(client, "replace_selected_text", text="  # done") == "ok"
        assert b"    return message  # done\r\n" in src.read_bytes()

        # selectText selects the only occurrence.
        await call(client, "open_file_in_editor", pathInProject="app.py", selectText="'world'")
        await call(client, "replace_selected_text", text="'MCP'")
        assert src.read_bytes().endswith(b"print(greet('MCP'))\r\n")
        assert "\r" not in await call(client, "get_open_in_editor_file_text")

        # Replace the whole file: still CRLF.
        assert await call(client, "replace_current_file_text", text="print('one')\nprint('two')\n") == "ok"
        assert src.read_bytes() == b"print('one')\r\nprint('two')\r\n"
        assert await call(client, "get_open_in_editor_file_text") == "print('one')\nprint('two')\n"

        await call(
            client,
            "open_file_in_editor",
            pathInProject="app.py",
            startLine=2,
            startCharacter=6,
            endCharacter=11,
        )
        assert await call(client, "get_selected_in_editor_text") == "'two'"
        (ws_path / "other.txt").write_text("other\n")
        await call(client, "open_file_in_editor", pathInProject="other.txt")
        await call(client, "open_file_in_editor", pathInProject="app.py")  # keeps its selection

    # A new server on the same workspace: the same editor, selection included.
    async with mcp(ws_path) as client:
        state = await call(client, "get_editor_state")
        assert state["activeFile"] == str(src)
        assert state["openFiles"] == [str(ws_path / "other.txt"), str(src)]
        assert state["selection"]["text"] == "'two'"
        await call(client, "replace_selected_text", text="'deux'")
        assert src.read_bytes() == b"print('one')\r\nprint('deux')\r\n"
        assert await call(client, "close_file_in_editor") == "file is closed"
        assert await call(client, "get_open_in_editor_file_path") == str(ws_path / "other.txt")


async def test_outside_changes_are_seen_and_a_stale_selection_is_never_edited(
    mcp: Any, ws_path: Path
) -> None:
    src = ws_path / "notes.md"
    src.write_text("alpha\nbeta\ngamma\n")
    async with mcp(ws_path) as client:
        await call(client, "open_file_in_editor", pathInProject="notes.md", startLine=2, endLine=2)

        # Another program inserts lines above: the selection finds its line again.
        src.write_text("zero\nalpha\nbeta\ngamma\n")
        assert await call(client, "get_open_in_editor_file_text") == "zero\nalpha\nbeta\ngamma\n"
        assert await call(client, "get_selected_in_editor_text") == "beta"
        await call(client, "replace_selected_text", text="BETA")
        assert src.read_text() == "zero\nalpha\nBETA\ngamma\n"

        # Another program rewrites the selected line itself: the edit is refused, nothing changes.
        await call(client, "open_file_in_editor", pathInProject="notes.md", selectText="gamma")
        src.write_text("zero\nalpha\nBETA\nchanged by someone else\n")
        message = await error(client, "replace_selected_text", text="GAMMA")
        assert "changed on disk" in message
        assert src.read_text() == "zero\nalpha\nBETA\nchanged by someone else\n"

        # The active file deleted on disk: a clear error, then no active editor.
        src.unlink()
        assert "no longer exists" in await error(client, "get_open_in_editor_file_text")
        assert await call(client, "get_open_in_editor_file_path") == ""


async def test_refusals_are_clear(mcp: Any, ws_path: Path) -> None:
    (ws_path / "a.txt").write_text("one\ntwo\n")
    (ws_path / "node_modules/pkg").mkdir(parents=True)
    (ws_path / "node_modules/pkg/index.js").write_text("module.exports = 1;\n")
    (ws_path / "bin.dat").write_bytes(b"\x00\x01\x02")
    async with mcp(ws_path) as client:
        assert "no active editor" in await error(client, "replace_selected_text", text="x")
        assert "no active editor" in await error(client, "replace_current_file_text", text="x")
        assert "not found" in await error(client, "open_file_in_editor", pathInProject="missing.txt")
        assert "outside the workspace" in await error(
            client, "open_file_in_editor", pathInProject="../../etc/passwd"
        )
        assert "binary" in await error(client, "open_file_in_editor", pathInProject="bin.dat")
        assert "outside 1..3" in await error(
            client, "open_file_in_editor", pathInProject="a.txt", startLine=9
        )
        assert "character 7" in await error(
            client, "open_file_in_editor", pathInProject="a.txt", startLine=1, startCharacter=7
        )
        assert "0 times" in await error(
            client, "open_file_in_editor", pathInProject="a.txt", selectText="three"
        )

        # Reading a protected file is fine; writing it through the editor is refused.
        await call(client, "open_file_in_editor", pathInProject="node_modules/pkg/index.js")
        assert "protected path" in await error(client, "replace_current_file_text", text="hacked")
        assert (ws_path / "node_modules/pkg/index.js").read_text() == "module.exports = 1;\n"

        # A stale expectedHash changes nothing.
        await call(client, "open_file_in_editor", pathInProject="a.txt", startLine=1, endLine=1)
        assert "changed since it was read" in await error(
            client, "replace_selected_text", text="x", expectedHash="0" * 64
        )
        read = await call(client, "get_file_text_by_path", pathInProject="a.txt")
        read = read if isinstance(read, dict) else json.loads(read)  # served as JSON text, not structured
        await call(client, "replace_selected_text", text="ONE", expectedHash=read["hash"])
        assert (ws_path / "a.txt").read_text() == "ONE\ntwo\n"


async def test_encodings_survive_editor_edits(mcp: Any, ws_path: Path) -> None:
    utf16 = ws_path / "u16.txt"
    utf16.write_bytes("\ufeffgrüße\r\nzwei\r\n".encode("utf-16-le"))
    latin = ws_path / "latin.txt"
    latin.write_bytes("café\n".encode("cp1252"))
    async with mcp(ws_path) as client:
        await call(client, "open_file_in_editor", pathInProject="u16.txt", selectText="zwei")
        await call(client, "replace_selected_text", text="drei")
        assert utf16.read_bytes() == "\ufeffgrüße\r\ndrei\r\n".encode("utf-16-le")
        await call(client, "open_file_in_editor", pathInProject="latin.txt")
        await call(client, "replace_current_file_text", text="crème brûlée\n")
        assert latin.read_bytes() == "crème brûlée\n".encode("cp1252")
        assert "cannot hold" in await error(client, "replace_current_file_text", text="emoji 🙂\n")
        assert latin.read_bytes() == "crème brûlée\n".encode("cp1252")


async def test_read_only_server_still_navigates(mcp: Any, ws_path: Path) -> None:
    (ws_path / "a.txt").write_text("one\n")
    async with mcp(ws_path, policy=Policy(read_only=True)) as client:
        assert await call(client, "open_file_in_editor", pathInProject="a.txt") == "file is opened"
        assert await call(client, "get_open_in_editor_file_text") == "one\n"
        assert "read-only" in await error(client, "replace_current_file_text", text="two\n")


def post(url: str, tool: str, body: dict[str, Any]) -> dict[str, Any]:
    response = httpx.post(f"{url}/mcp/{tool}", json=body, timeout=30)
    return response.json()


def test_rest_doors_and_status_across_a_restart(http_server: Any, ws_path: Path) -> None:
    (ws_path / "src").mkdir()
    index = ws_path / "src/index.js"
    index.write_bytes(b"console.log('Hello World');\r\nconsole.log('Old Text');\r\n")
    server = http_server(ws_path)
    status = httpx.get(server.url + "/mcp/status", timeout=10).json()["result"]["environment"]
    assert status["activeFile"] == "" and status["openFiles"] == []

    # The seed's example requests, verbatim.
    assert post(server.url, "open_file_in_editor", {"pathInProject": "src/index.js"}) == {
        "status": "file is opened",
        "error": None,
    }
    assert post(server.url, "get_open_in_editor_file_text", {}) == {
        "status": "console.log('Hello World');\nconsole.log('Old Text');\n",
        "error": None,
    }
    assert post(server.url, "get_open_in_editor_file_path", {})["status"] == str(index)
    assert (
        post(
            server.url,
            "open_file_in_editor",
            {"pathInProject": "src/index.js", "selectText": "console.log('Old Text');"},
        )["error"]
        is None
    )
    assert post(server.url, "replace_selected_text", {"text": "console.log('New Text');"}) == {
        "status": "ok",
        "error": None,
    }
    assert index.read_bytes() == b"console.log('Hello World');\r\nconsole.log('New Text');\r\n"
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "replace_current_file_text",
            "arguments": {"text": "// New file content\nconsole.log('Replaced Content');"},
        },
    }
    assert post(server.url, "replace_current_file_text", body) == {"status": "ok", "error": None}
    assert index.read_bytes() == b"// New file content\r\nconsole.log('Replaced Content');"

    status = httpx.post(server.url + "/mcp/status", timeout=10).json()["result"]["environment"]
    assert status["activeFile"] == str(index)
    assert status["openFiles"] == [str(index)]
    assert status["currentDirectory"] == str(ws_path / "src")
    server.stop()

    again = http_server(ws_path)
    status = httpx.get(again.url + "/mcp/status", timeout=10).json()["result"]["environment"]
    assert status["activeFile"] == str(index) and status["openFiles"] == [str(index)]
    init = httpx.get(again.url + "/mcp/initialize", timeout=10).json()["result"]["environment"]
    assert init["activeFile"] == str(index)
    failed = post(again.url, "open_file_in_editor", {"pathInProject": "../outside.js"})
    assert failed["status"] is None and "outside the workspace" in failed["error"]


async def test_two_server_processes_share_one_editor(mcp: Any, http_server: Any, ws_path: Path) -> None:
    """A stdio server (VS Code) and an HTTP server (a script) on one workspace see the same editor."""
    (ws_path / "a.txt").write_text("one\ntwo\n")
    (ws_path / "b.txt").write_text("three\n")
    server = http_server(ws_path)
    async with mcp(ws_path) as client:
        assert (
            post(server.url, "open_file_in_editor", {"pathInProject": "a.txt", "selectText": "two"})["error"]
            is None
        )
        assert await call(client, "get_selected_in_editor_text") == "two"
        await call(client, "open_file_in_editor", pathInProject="b.txt")
        assert post(server.url, "get_open_in_editor_file_path", {})["status"] == str(ws_path / "b.txt")
        await call(client, "toggle_debugger_breakpoint", pathInProject="a.txt", line=2)
        assert post(server.url, "get_debugger_breakpoints", {})["status"] == [
            {"path": str(ws_path / "a.txt"), "line": 2}
        ]


@pytest.mark.parametrize(
    "damaged",
    [
        [],
        {"version": 1, "open": 5},
        {"version": 1, "open": ["a.txt"], "active": "a.txt", "files": [1], "breakpoints": {"/x": 3}},
        {"version": 1, "breakpoints": [["a.txt", 1]], "files": {"a.txt": 7}, "journal": "x"},
    ],
)
async def test_a_damaged_editor_state_is_an_empty_editor(mcp: Any, ws_path: Path, damaged: object) -> None:
    """An editor.json that is JSON of the wrong shape (edited by hand, another version's) gives an
    empty editor, not a crash of every editor call."""
    (ws_path / "a.txt").write_text("one\ntwo\n")
    async with mcp(ws_path) as client:
        opened = await client.call_tool("open_file_in_editor", {"pathInProject": "a.txt"})
        assert not opened.is_error
        state = next(Path(os.environ["XDG_STATE_HOME"]).rglob("editor.json"))
        state.write_text(json.dumps(damaged))
        for tool, args in (
            ("get_open_in_editor_file_path", {}),
            ("get_debugger_breakpoints", {}),
            ("toggle_debugger_breakpoint", {"pathInProject": "a.txt", "line": 1}),
            ("open_file_in_editor", {"pathInProject": "a.txt"}),
        ):
            result = await client.call_tool(tool, args)
            assert not result.is_error, (tool, result.content)
        again = await client.call_tool("get_open_in_editor_file_path", {})
        assert "a.txt" in again.content[0].text  # the editor works on from the empty state

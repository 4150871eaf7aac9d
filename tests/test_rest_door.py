"""The seed's REST interface (seed 000) on the real HTTP server: its own example requests, verbatim,
in both body forms, and the shapes of /mcp/initialize, /mcp/status and /mcp/list_tools."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest

HELPER = """\
// helper module
function helper() { return 'Hello'; }
oldFunction();
oldFunction();
// line 5
oldFunction();
"""

# (tool, the seed's example request body verbatim, a check of the status)
SEED_EXAMPLES = [
    ("get_file_text_by_path", {"pathInProject": "src/utils/helper.js"}, lambda s: s["content"] == HELPER),
    (
        "replace_file_content_at_position",
        {
            "pathInProject": "src/utils/helper.js",
            "startLine": 5,
            "endLine": 5,
            "content": "function helper() { return 'Updated'; }",
            "offset": 0,
        },
        lambda s: s == "ok",
    ),
    (
        "append_file_content",
        {"pathInProject": "src/utils/helper.js", "text": "\n// Appended content\nfunction newHelper() {}"},
        lambda s: {"path", "relativePath", "operationTimeMs"} <= set(s),
    ),
    (
        "replace_specific_text",
        {
            "pathInProject": "src/utils/helper.js",
            "searchText": "oldFunction",
            "replaceText": "newFunction",
            "replaceAll": True,
        },
        lambda s: s["replacements"] == 3 and {"path", "operationTimeMs"} <= set(s),
    ),
    (
        "search_in_files_content",
        {"searchText": "function helper"},
        lambda s: {e["path"] for e in s} >= {os.path.join("src", "utils", "helper.js")},
    ),
    (
        "find_files_by_name_substring",
        {"nameSubstring": "helper"},
        lambda s: {e["name"] for e in s} == {"helper.js", "helper.test.js"},
    ),
    (
        "list_files_in_folder",
        {"pathInProject": "src/utils"},
        lambda s: [e["name"] for e in s] == ["helper.js"],
    ),
    (
        "create_new_file_with_text",
        {
            "pathInProject": "src/utils/newFile.js",
            "text": "// New file content\nfunction newFunc() { return true; }",
        },
        lambda s: {"path", "relativePath", "operationTimeMs"} <= set(s),
    ),
    (
        "rewrite_file_content",
        {"pathInProject": "src/utils/helper.js", "text": "function helper() { return 'Updated'; }"},
        lambda s: {"path", "relativePath", "size", "operationTimeMs"} <= set(s),
    ),
]


@pytest.fixture
def seed_ws(ws_path: Path) -> Path:
    (ws_path / "src/utils").mkdir(parents=True)
    (ws_path / "test").mkdir()
    (ws_path / "src/utils/helper.js").write_text(HELPER)
    (ws_path / "test/helper.test.js").write_text("const { helper } = require('../src/utils/helper');\n")
    return ws_path


@pytest.mark.parametrize("form", ["direct", "jsonrpc"])
def test_seed_examples_verbatim(http_server, seed_ws: Path, form: str) -> None:
    server = http_server(seed_ws)
    for tool, body, check in SEED_EXAMPLES:
        if form == "jsonrpc":
            body = {"jsonrpc": "2.0", "id": 1, "params": {"arguments": body}}
        response = httpx.post(f"{server.url}/mcp/{tool}", json=body, timeout=30)
        envelope = response.json()
        assert response.status_code == 200, (tool, envelope)
        assert envelope["error"] is None, (tool, envelope)
        assert check(envelope["status"]), (tool, envelope["status"])
        if tool == "replace_file_content_at_position":
            lines = (seed_ws / "src/utils/helper.js").read_text().splitlines()
            assert lines[4] == "function helper() { return 'Updated'; }"


def test_initialize_status_and_list_tools_shapes(http_server, seed_ws: Path) -> None:
    server = http_server(seed_ws)
    for method in ("GET", "POST"):
        init = httpx.request(method, f"{server.url}/mcp/initialize").json()
        assert init["jsonrpc"] == "2.0" and init["id"] == 0
        result = init["result"]
        assert set(result) == {"protocolVersion", "capabilities", "serverInfo", "environment"}
        assert result["capabilities"]["tools"] == {"listChanged": True}
        assert set(result["serverInfo"]) == {"name", "version"}
        assert set(result["environment"]) == {"workspaceRoot", "activeFile", "currentDirectory"}
        assert result["environment"]["workspaceRoot"] == str(seed_ws)
        status = httpx.request(method, f"{server.url}/mcp/status").json()["result"]
        assert status["status"] == "running"
        assert set(status["environment"]) == {"workspaceRoot", "activeFile", "currentDirectory", "openFiles"}
    tools = httpx.get(f"{server.url}/mcp/list_tools").json()
    assert isinstance(tools, list)
    names = {t["name"] for t in tools}
    assert {tool for tool, _, _ in SEED_EXAMPLES} <= names
    for entry in tools:
        assert set(entry) == {"name", "description", "inputSchema"}
        assert entry["inputSchema"]["type"] == "object"


def test_errors_use_the_envelope_with_fitting_status(http_server, seed_ws: Path) -> None:
    server = http_server(seed_ws)
    cases = [
        ("no_such_tool", {}, 404, "unknown tool"),
        ("get_file_text_by_path", {}, 400, "'pathInProject' is required"),
        ("get_file_text_by_path", {"pathInProject": 7}, 400, "pathInProject"),
        ("get_file_text_by_path", {"pathInProject": "../../etc/passwd"}, 403, "outside the workspace"),
        ("get_file_text_by_path", {"pathInProject": "missing.txt"}, 404, "does not exist"),
        (
            "create_new_file_with_text",
            {"pathInProject": "src/utils/helper.js", "text": "x"},
            409,
            "already exists",
        ),
        ("rewrite_file_content", {"pathInProject": ".git/config", "text": "x"}, 403, "protected path '.git'"),
    ]
    for tool, body, code, words in cases:
        response = httpx.post(f"{server.url}/mcp/{tool}", json=body)
        envelope = response.json()
        assert response.status_code == code, (tool, envelope)
        assert envelope["status"] is None and words in envelope["error"], (tool, envelope)
        assert str(seed_ws.parent) not in envelope["error"]


def test_no_tool_runs_from_a_get(http_server, seed_ws: Path) -> None:
    server = http_server(seed_ws)
    response = httpx.get(
        f"{server.url}/mcp/create_new_file_with_text", params={"pathInProject": "g.txt", "text": "x"}
    )
    assert response.status_code == 405
    assert response.json()["status"] is None
    assert not (seed_ws / "g.txt").exists()


def test_read_only_server_refuses_writes_on_rest(http_server, seed_ws: Path) -> None:
    server = http_server(seed_ws, "--read-only")
    write = httpx.post(
        f"{server.url}/mcp/rewrite_file_content", json={"pathInProject": "src/utils/helper.js", "text": "x"}
    )
    read = httpx.post(
        f"{server.url}/mcp/get_file_text_by_path", json={"pathInProject": "src/utils/helper.js"}
    )
    assert write.status_code == 403 and "--read-only" in write.json()["error"]
    assert read.status_code == 200 and read.json()["status"]["content"] == HELPER

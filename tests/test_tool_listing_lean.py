"""What ``tools/list`` costs a model on every turn: its size, lean schemas, icons only for clients
that show them, and named tool sets (``--tools seed``), all through a real MCP session."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from jsonschema.validators import validator_for
from mcp import Client
from mcp_types import Implementation

from mcp_server_ide.toolsets import SEED

from .support.servers import stdio_params

pytestmark = pytest.mark.anyio

VSCODE = Implementation(name="Visual Studio Code", version="1.106.0")  # VS Code's product.nameLong


def _compact(value: object) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


async def _listing(client: Any) -> list[dict[str, Any]]:
    result = await client.list_tools()
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)["tools"]


def _schema_nodes(schema: object, at: str = ""):
    """Every schema node of a JSON schema, with where it is (property maps' keys are names, not nodes)."""
    if not isinstance(schema, dict):
        return
    yield at, schema
    for key, value in schema.items():
        if key in ("properties", "$defs", "patternProperties") and isinstance(value, dict):
            for name, sub in value.items():
                yield from _schema_nodes(sub, f"{at}/{key}/{name}")
        elif key in ("anyOf", "allOf", "oneOf", "prefixItems") and isinstance(value, list):
            for i, sub in enumerate(value):
                yield from _schema_nodes(sub, f"{at}/{key}/{i}")
        elif key in ("items", "additionalProperties", "not") and isinstance(value, dict):
            yield from _schema_nodes(value, f"{at}/{key}")


async def test_the_whole_listing_stays_small(mcp: Any, ws_path: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=ws_path, check=True)  # git tools are listed in a repository
    async with mcp(ws_path) as client:
        tools = await _listing(client)
    assert len(tools) >= 69
    total = _compact({"tools": tools})
    # Issue 12's target: the whole listing (every tool, as a client that shows no icons gets it) <= 45 KB.
    assert not any("outputSchema" in t for t in tools)  # only with --structured-content
    assert total <= 45_000, total


async def test_schemas_carry_no_generated_titles_or_null_defaults_and_stay_valid(
    mcp: Any, ws_path: Path
) -> None:
    subprocess.run(["git", "init", "-q"], cwd=ws_path, check=True)
    async with mcp(ws_path) as client:
        tools = await _listing(client)
    for tool in tools:
        for kind in ("inputSchema", "outputSchema"):
            schema = tool.get(kind)
            if schema is None:
                continue
            validator_for(schema).check_schema(schema)  # still a valid JSON Schema
            for at, node in _schema_nodes(schema):
                where = f"{tool['name']} {kind}{at}"
                assert not isinstance(node.get("title"), str), where
                assert node.get("default", 0) is not None, where
                assert node.get("additionalProperties") is not True, where
        schema = tool["inputSchema"]
        for name, prop in schema.get("properties", {}).items():
            if name not in schema.get("required", ()):  # optional: leaving it out is its "null"
                assert {"type": "null"} not in prop.get("anyOf", []), (tool["name"], name)
        annotations = tool.get("annotations", {})
        assert "title" not in annotations and tool["title"]  # clients show the tool's own title


async def test_an_explicit_null_for_an_optional_parameter_is_still_accepted(mcp: Any, ws_path: Path) -> None:
    """The published schema leaves the null branch out (null means "not given"); the server still takes it."""
    (ws_path / "a.py").write_text("needle = 1\n")
    async with mcp(ws_path) as client:
        listed = {t["name"]: t for t in await _listing(client)}
        include = listed["search_in_files_content"]["inputSchema"]["properties"]["include"]
        assert {"type": "null"} not in include["anyOf"]
        result = await client.call_tool("search_in_files_content", {"searchText": "needle", "include": None})
    assert not result.is_error, result.content


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_tool_icons_go_only_to_clients_that_show_them(mcp: Any, ws_path: Path, mode: str) -> None:
    async with mcp(ws_path, mode=mode, client_info=VSCODE) as client:
        shown = await _listing(client)
    async with mcp(
        ws_path, mode=mode, client_info=Implementation(name="claude-code", version="2.0")
    ) as client:
        hidden = await _listing(client)
        if mode == "legacy":
            assert client.server_info.icons  # the server's own icon goes to every client
    assert all(t.get("icons") for t in shown)
    assert len({t["icons"][0]["src"] for t in shown}) > 5  # one per category
    assert not any("icons" in t for t in hidden)
    assert [{k: v for k, v in t.items() if k != "icons"} for t in shown] == hidden


async def test_named_sets_select_tools_over_stdio(ws_path: Path) -> None:
    async def names(*args: str) -> list[str]:
        async with Client(stdio_params(ws_path, *args)) as client:
            return [t.name for t in (await client.list_tools()).tools]

    subprocess.run(["git", "init", "-q"], cwd=ws_path, check=True)
    every = await names()
    seed = await names("--tools", "jetbrains")
    assert len(seed) == 41 and seed == [n for n in every if n in SEED]
    assert "project_fs_read" not in seed and "start_job" not in seed
    mixed = await names("--tools", "jetbrains,project_fs,-wait,-git")
    assert set(mixed) == (set(seed) | {n for n in every if n.startswith("project_fs_")}) - {"wait"} - {
        "get_project_vcs_status",
        "find_commit_by_message",
        "get_file_history",
        "get_file_diff",
        "get_branch_info",
        "get_commit_details",
        "commit_changes",
        "pull_changes",
        "switch_branch",
        "create_branch",
    }
    core = await names("--tools", "core")
    assert {
        "get_file_text_by_path",
        "search_in_files_content",
        "run_command_on_background",
        "commit_changes",
    } <= set(core)
    assert len(core) < len(seed) and await names("--tools", "all") == every

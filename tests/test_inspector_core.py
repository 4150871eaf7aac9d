"""Acceptance 2: the MCP Inspector CLI (a real client, ``@modelcontextprotocol/inspector`` 2.12.0 on
node 22) lists the 13 file, search and project_fs tools with their annotations, and calls each one
successfully, over stdio (it launches the server itself) and over Streamable HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_server_ide import registry

from .support.npm import node, npm_bin

INSPECTOR = ("@modelcontextprotocol/inspector", "2.12.0", "mcp-inspector")

CORE_TOOLS: dict[str, list[str]] = {
    # Each tool's call: --tool-arg key=value pairs (the Inspector turns numbers and booleans into JSON).
    "get_file_text_by_path": ["pathInProject=a.txt"],
    "list_files_in_folder": ["pathInProject=/"],
    "create_new_file_with_text": ["pathInProject=created-{door}.txt", "text=made by the inspector"],
    "rewrite_file_content": ["pathInProject=rewritten-{door}.txt", "text=rewritten by the inspector"],
    "append_file_content": ["pathInProject=a.txt", "text=appended line"],
    "replace_file_content_at_position": [
        "pathInProject=a.txt",
        "startLine=2",
        "endLine=2",
        "content=second line",
    ],
    "replace_specific_text": ["pathInProject=a.txt", "searchText=alpha", "replaceText=ALPHA-{door}"],
    "search_in_files_content": ["searchText=hello"],
    "find_files_by_name_substring": ["nameSubstring=a.t"],
    "project_fs_read": ["path=a.txt", "startLine=1", "endLine=2"],
    "project_fs_list": ["recursive=true"],
    "project_fs_write": ["path=pfs-{door}.txt", "content=written by project_fs"],
    "project_fs_edit": ["path=pfs-{door}.txt", "oldText=written", "newText=edited"],
}


@pytest.fixture(scope="module")
def inspector() -> tuple[Path, dict[str, str]]:
    node_bin = node(22)
    tool = npm_bin(*INSPECTOR, node_version=22)
    env = dict(os.environ)
    env["PATH"] = f"{node_bin.parent}{os.pathsep}{env.get('PATH', '')}"
    return tool, env


def _run(inspector: tuple[Path, dict[str, str]], target: list[str], *args: str) -> dict[str, Any]:
    tool, env = inspector
    done = subprocess.run(
        [str(tool), "--cli", *target, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, (
        f"inspector {' '.join(args)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    )
    return json.loads(done.stdout)


def _workspace(ws: Path) -> None:
    (ws / "a.txt").write_text("alpha hello\nline two\n")
    (ws / "src").mkdir()
    (ws / "src/app.py").write_text("print('hello')\n")


def _stdio_target(ws: Path, state: Path) -> list[str]:
    env = [
        "-e",
        f"XDG_STATE_HOME={state}",
        "-e",
        f"PATH={os.environ.get('PATH', '')}",
        "-e",
        f"HOME={os.environ.get('HOME', '/root')}",
    ]
    return [*env, sys.executable, "-m", "mcp_server_ide", "--workspace", str(ws)]


def _check_listing(listing: dict[str, Any]) -> None:
    tools = {t["name"]: t for t in listing["tools"]}
    missing = set(CORE_TOOLS) - set(tools)
    assert not missing, f"the Inspector does not see {sorted(missing)}"
    registry.load_builtin_tools()
    for name in CORE_TOOLS:
        spec = registry.get(name)
        assert spec is not None
        notes = tools[name].get("annotations") or {}
        assert tools[name]["title"] == spec.title and "title" not in notes, (
            name
        )  # clients show the tool's title
        # Hints equal to the spec's defaults are left out; with the defaults filled in, each says the truth.
        hints = {
            "readOnlyHint": False,
            "destructiveHint": True,
            "idempotentHint": False,
            "openWorldHint": True,
        }
        hints.update(notes)
        assert hints["readOnlyHint"] is spec.read_only and hints["openWorldHint"] is spec.open_world, name
        if not spec.read_only:
            assert hints["destructiveHint"] is spec.destructive, name
            assert hints["idempotentHint"] is spec.idempotent, name
        assert tools[name]["description"] and tools[name]["inputSchema"]["type"] == "object"


def _call_each(inspector: tuple[Path, dict[str, str]], target: list[str], ws: Path, door: str) -> None:
    for name, args in CORE_TOOLS.items():
        flags: list[str] = ["--method", "tools/call", "--tool-name", name]
        for arg in args:
            flags += ["--tool-arg", arg.format(door=door)]
        result = _run(inspector, target, *flags)
        text = json.dumps(result)
        assert result.get("isError") is not True, f"{door} {name}: {text[:600]}"
    assert (ws / f"created-{door}.txt").read_text() == "made by the inspector"
    assert (ws / f"rewritten-{door}.txt").read_text() == "rewritten by the inspector"
    assert (ws / f"pfs-{door}.txt").read_text() == "edited by project_fs"
    assert f"ALPHA-{door} hello" in (ws / "a.txt").read_text()


def test_inspector_over_stdio(inspector, ws_path: Path, tmp_path: Path) -> None:
    _workspace(ws_path)
    target = _stdio_target(ws_path, tmp_path / "state")
    _check_listing(_run(inspector, target, "--method", "tools/list"))
    _call_each(inspector, target, ws_path, "stdio")
    assert (ws_path / "a.txt").read_text().startswith("ALPHA-stdio hello\nsecond line\n")


def test_inspector_over_http(inspector, http_server, ws_path: Path) -> None:
    _workspace(ws_path)
    server = http_server(ws_path)
    target = [server.mcp_url]
    _check_listing(_run(inspector, target, "--method", "tools/list"))
    _call_each(inspector, target, ws_path, "http")
    assert (ws_path / "a.txt").read_text().startswith("ALPHA-http hello\nsecond line\n")

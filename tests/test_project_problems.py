"""Problems of the whole project (``get_project_problems``) and the ``ide://workspace/problems`` resource,
through an MCP client session, with the real checkers.

Acceptance (issue 18): on a Python project with errors in 3 of 50 files the tool lists exactly what the
``basedpyright --outputjson`` CLI lists, plus ruff's findings (``ruff check --output-format json``), both
run by the test; on a TypeScript project with a type error exactly what ``tsc --noEmit -p`` lists; a clean
project answers no files and names the sources that ran. The resource shows what get_file_problems and
get_project_problems found, and a subscriber hears when a fix removes a problem (and not when an unrelated
file changes).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_server_ide.workspace import Policy

from .support.codeprojects import typescript_project, typescript_tools
from .support.results import payload

pytestmark = pytest.mark.anyio

PROBLEMS_URI = "ide://workspace/problems"
BROKEN = {
    "pkg/mod_07.py": "def f() -> int:\n    return undefined_name\n",
    "pkg/mod_21.py": "x: int = 'not a number'\n",
    "pkg/mod_42.py": "def g(a: int) -> int:\n    return a\n\n\ng('one')\n",
}


def python_project(root: Path, broken: dict[str, str] = BROKEN) -> Path:
    """50 modules; the ``broken`` ones have a type error; one clean module has an unused import (ruff F401)."""
    pkg = root / "pkg"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("")
    for i in range(49):
        (pkg / f"mod_{i:02d}.py").write_text(f"def fn_{i}(x: int) -> int:\n    return x * {i}\n")
    (pkg / "mod_03.py").write_text("import os\n\n\ndef fn_3(x: int) -> int:\n    return x\n")
    for rel, text in broken.items():
        (root / rel).write_text(text)
    return root


def basedpyright_cli(root: Path) -> set[tuple[Any, ...]]:
    done = subprocess.run(
        [sys.executable, "-m", "basedpyright", "--outputjson", "-p", str(root)],
        cwd=root, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    report = json.loads(done.stdout)
    return {
        (
            Path(d["file"]).relative_to(root).as_posix(),
            d["range"]["start"]["line"],
            d["range"]["start"]["character"],
            d["range"]["end"]["line"],
            d["range"]["end"]["character"],
            d["severity"],
            d.get("rule", ""),
            d["message"],
        )
        for d in report["generalDiagnostics"]
    }


def ruff_cli(root: Path) -> set[tuple[Any, ...]]:
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--output-format", "json", "--no-cache", "--exit-zero", str(root)],
        cwd=root, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    return {
        (
            Path(d["filename"]).relative_to(root).as_posix(),
            d["location"]["row"] - 1,
            d["location"]["column"] - 1,
            d["code"],
            d["message"],
        )
        for d in json.loads(done.stdout)
    }


def tsc_cli(root: Path) -> set[tuple[Any, ...]]:
    node, tsc = typescript_tools()
    done = subprocess.run(
        [node, str(tsc), "--noEmit", "-p", str(root), "--pretty", "false"],
        cwd=root, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    line = re.compile(r"^(.+?)\((\d+),(\d+)\): error (TS\d+): (.*)$")
    return {
        (m[1], int(m[2]) - 1, int(m[3]) - 1, m[4], m[5])
        for m in map(line.match, done.stdout.splitlines())
        if m
    }


def listed(answer: dict[str, Any], source: str) -> list[tuple[str, dict[str, Any]]]:
    return [(f["path"], p) for f in answer["files"] for p in f["problems"] if p["source"] == source]


async def call(client: Any, name: str, args: dict[str, Any]) -> Any:
    result = await client.call_tool(name, args)
    assert not result.is_error, result.content[0].text
    return payload(result)


async def read_problems(client: Any) -> dict[str, Any]:
    return json.loads((await client.read_resource(PROBLEMS_URI)).contents[0].text)


async def test_python_project_lists_exactly_what_basedpyright_and_ruff_list(ws_path, mcp):
    root = python_project(ws_path)
    async with mcp(root) as client:
        out = await call(client, "get_project_problems", {})
        again = await call(client, "get_project_problems", {})
    expected = basedpyright_cli(root)
    got = {
        (
            path,
            p["line"],
            p["character"],
            p["endLine"],
            p["endCharacter"],
            p["severity"],
            p["code"],
            p["message"],
        )
        for path, p in listed(out, "basedpyright")
    }
    assert got == expected
    assert len(listed(out, "basedpyright")) == len(expected)
    assert {e[0] for e in expected if e[5] == "error"} == set(BROKEN)
    ruff = {(path, p["line"], p["character"], p["code"], p["message"]) for path, p in listed(out, "ruff")}
    assert ruff == ruff_cli(root) and ("pkg/mod_03.py", 0, 7, "F401", "`os` imported but unused") in ruff
    assert out["ran"] == ["basedpyright", "ruff"]
    assert set(out["skipped"]) == {"tsc", "eslint"}
    every = [p for f in out["files"] for p in f["problems"]]
    assert out["counts"] == dict(Counter(p["severity"] for p in every))
    assert out["bySource"] == {"basedpyright": len(expected), "ruff": len(ruff)}
    assert out["total"] == len(out["files"]) and "truncated" not in out
    # The tree did not change: the second call answers from the last run, the same problems.
    assert sorted(again["cached"]) == ["basedpyright", "ruff"]
    assert again["files"] == out["files"]


async def test_typescript_project_lists_exactly_what_tsc_lists(ws_path, mcp):
    root = typescript_project(ws_path)
    (root / "src" / "bad.ts").write_text("export const total: number = 'ten';\n")
    async with mcp(root) as client:
        out = await call(client, "get_project_problems", {"sources": ["tsc"]})
    expected = tsc_cli(root)
    assert expected and {e[0] for e in expected} == {"src/bad.ts"}
    got = {(path, p["line"], p["character"], p["code"], p["message"]) for path, p in listed(out, "tsc")}
    assert got == expected
    assert out["ran"] == ["tsc"] and out["counts"] == {"error": len(expected)}


async def test_clean_project_answers_no_files_and_the_sources_that_ran(ws_path, mcp):
    (ws_path / "app.py").write_text("def double(x: int) -> int:\n    return x * 2\n")
    async with mcp(ws_path) as client:
        out = await call(client, "get_project_problems", {})
    assert out["files"] == [] and out["total"] == 0
    assert out["ran"] == ["basedpyright", "ruff"]
    assert out["skipped"]["tsc"] == "no files of its languages"


async def test_filters_paging_and_bad_arguments(ws_path, mcp):
    root = python_project(ws_path)
    async with mcp(root) as client:
        errors = await call(client, "get_project_problems", {"minSeverity": "error", "maxResults": 2})
        assert [f["path"] for f in errors["files"]] == sorted(BROKEN)[:2]
        assert errors["total"] == 3 and errors["truncated"] is True and errors["nextOffset"] == 2
        rest = await call(client, "get_project_problems", {"minSeverity": "error", "offset": 2})
        assert [f["path"] for f in rest["files"]] == sorted(BROKEN)[2:]
        assert all(p["severity"] == "error" for f in errors["files"] + rest["files"] for p in f["problems"])
        only = await call(client, "get_project_problems", {"paths": ["pkg/mod_2*.py"], "sources": ["ruff"]})
        assert only["ran"] == ["ruff"] and only["files"] == []
        bad = await client.call_tool("get_project_problems", {"paths": [""]})
        assert bad.is_error and "invalid glob" in bad.content[0].text
        bad = await client.call_tool("get_project_problems", {"sources": ["mypy"]})
        assert bad.is_error


async def test_eslint_runs_only_where_declared_trusted_and_installed(ws_path, mcp, tmp_path):
    (ws_path / "package.json").write_text('{"devDependencies": {"eslint": "^9.0.0"}}')
    (ws_path / "index.js").write_text("export const a = 1;\n")
    async with mcp(ws_path, policy=Policy(trusted=False)) as client:
        out = await call(client, "get_project_problems", {"sources": ["eslint"]})
    assert out["skipped"]["eslint"].startswith("untrusted workspace")
    async with mcp(ws_path) as client:
        out = await call(client, "get_project_problems", {"sources": ["eslint"]})
    assert out["skipped"]["eslint"].startswith("not installed")
    other = tmp_path / "plain"
    other.mkdir()
    (other / "index.js").write_text("export const a = 1;\n")
    async with mcp(other) as client:
        out = await call(client, "get_project_problems", {"sources": ["eslint"]})
    assert out["skipped"]["eslint"] == "the project declares no eslint in package.json"


async def test_a_long_run_goes_on_as_a_job(ws_path, mcp, monkeypatch):
    root = python_project(ws_path)
    monkeypatch.setenv("MCP_IDE_PROBLEMS_WAIT", "0")
    async with mcp(root) as client:
        first = await call(client, "get_project_problems", {"sources": ["basedpyright"]})
        assert first["partial"] is True and first["files"] == []
        job = await call(client, "get_job_output", {"jobId": first["jobId"], "waitMs": 120_000})
        assert job["state"] == "exited"
        monkeypatch.setenv("MCP_IDE_PROBLEMS_WAIT", "50")
        done = await call(client, "get_project_problems", {"sources": ["basedpyright"]})
    assert done["cached"] == ["basedpyright"] and {f["path"] for f in done["files"]} >= set(BROKEN)


async def test_resource_shows_file_and_project_problems_and_tells_subscribers_of_a_fix(ws_path, mcp):
    root = python_project(ws_path)
    (root / "README.md").write_text("# readme\n")
    messages: list[Any] = []

    async def handler(message: Any) -> None:
        messages.append(message)

    async with mcp(root, mode="legacy", message_handler=handler) as client:
        before = await read_problems(client)
        assert before["files"] == []
        # After get_file_problems: that file's problems (basedpyright's through its server, ruff's).
        one = await call(client, "get_file_problems", {"pathInProject": "pkg/mod_07.py"})
        assert one["problems"]
        shown = await read_problems(client)
        assert [f["path"] for f in shown["files"]] == ["pkg/mod_07.py"]
        assert {p["message"] for p in shown["files"][0]["problems"]} == {
            p["message"] for p in one["problems"]
        }
        # After get_project_problems: every file's.
        await call(client, "get_project_problems", {})
        shown = await read_problems(client)
        errors = {f["path"] for f in shown["files"] if any(p["severity"] == "error" for p in f["problems"])}
        assert errors == set(BROKEN) and shown["ran"] == ["basedpyright", "ruff"]
        await client.subscribe_resource(PROBLEMS_URI)
        await anyio.sleep(0.5)
        # An unrelated file changes: the problems do not, and nobody is told.
        await call(client, "rewrite_file_content", {"pathInProject": "README.md", "text": "# changed\n"})
        assert not await updated(messages, timeout=2.5)
        # A fix removes a problem: the subscriber is told, and the resource shows it gone.
        await call(
            client, "rewrite_file_content", {"pathInProject": "pkg/mod_21.py", "text": "x: int = 21\n"}
        )
        assert await updated(messages, timeout=60)
        shown = await read_problems(client)
        errors = {f["path"] for f in shown["files"] if any(p["severity"] == "error" for p in f["problems"])}
        assert errors == set(BROKEN) - {"pkg/mod_21.py"}


async def updated(messages: list[Any], timeout: float) -> bool:
    with anyio.move_on_after(timeout):
        while True:
            if any(str(getattr(getattr(m, "params", None), "uri", "")) == PROBLEMS_URI for m in messages):
                return True
            await anyio.sleep(0.05)
    return False


async def test_live_view_follows_edits_and_the_files_they_import(ws_path, mcp):
    """basedpyright is pulled (it publishes nothing then): the open file's diagnostics are pulled again when
    it changes and when the server asks for a refresh (here after an open file it imports changed), so the
    resource shows the current ones with no new get_file_problems. (basedpyright rechecks importers when an
    open file changes, not when a file is first opened with a new text, pushed or pulled alike.)"""
    root = python_project(ws_path, broken={})
    (root / "pkg/value.py").write_text("VALUE = 'text'\n")
    (root / "pkg/uses.py").write_text("from pkg.value import VALUE\n\nx: int = VALUE\n")

    async def pyright_errors(client: Any, want: bool) -> bool:
        """Whether pkg/uses.py shows a basedpyright error, once the view says ``want`` (60 s at most)."""
        with anyio.move_on_after(60):
            while True:
                shown = await read_problems(client)
                found = any(path == "pkg/uses.py" for path, _p in listed(shown, "basedpyright"))
                if found == want:
                    return found
                await anyio.sleep(0.1)
        return not want

    async with mcp(root) as client:
        await call(client, "get_file_problems", {"pathInProject": "pkg/value.py"})
        one = await call(client, "get_file_problems", {"pathInProject": "pkg/uses.py"})
        assert [p for p in one["problems"] if p["source"] == "basedpyright"], one
        assert await pyright_errors(client, want=True)
        # The imported file is fixed: the server asks for a refresh, uses.py is pulled again.
        await call(client, "rewrite_file_content", {"pathInProject": "pkg/value.py", "text": "VALUE = 1\n"})
        assert not await pyright_errors(client, want=False)
        # The open file itself changes: its new text is pulled.
        await call(client, "rewrite_file_content", {"pathInProject": "pkg/uses.py", "text": "y: str = 1\n"})
        assert await pyright_errors(client, want=True)

"""Code intelligence on TypeScript, through an MCP client session, with the real typescript-language-server
and tsserver (typescript@6, installed into the cache on first use exactly as the product does).

One generated tsconfig project and one server are shared by the module. Compilation checks use the
same TypeScript's ``tsc --noEmit``; extraction checks compile and run the project with node. A plain
JavaScript project with no jsconfig (seed 000's layout) checks the whole-project view tsserver gets
without a config, and its cap.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from mcp_server_ide.server import build_server
from mcp_server_ide.workspace import Workspace

from .support.codeprojects import (
    SEED_HELPER,
    SEED_INDEX,
    USERS,
    seed_js_project,
    typescript_project,
    typescript_tools,
)
from .support.results import flat_references, payload

pytestmark = pytest.mark.anyio


class Shared:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.ws = Workspace.open(root)
        self.server, _ = build_server(lambda ctx: self.ws, None)

    async def call(self, name: str, args: dict[str, Any]) -> Any:
        async with Client(self.server) as client:
            result = await client.call_tool(name, args)
        if result.is_error:
            raise AssertionError(f"{name} failed: {result.content[0].text}")
        return payload(result)


@pytest.fixture(scope="module")
def ts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shared]:
    root = typescript_project(tmp_path_factory.mktemp("tsproj"))
    shared = Shared(root)
    yield shared
    shared.ws.close()


def grep_uses(root: Path, name: str) -> set[tuple[str, int, int]]:
    word = re.compile(rf"\b{re.escape(name)}\b")
    hits = set()
    for path in sorted((root / "src").rglob("*.ts")):
        for i, line in enumerate(path.read_text().splitlines()):
            for m in word.finditer(line):
                hits.add((path.relative_to(root).as_posix(), i, m.start()))
    return hits


def snapshot(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in (root / "src").rglob("*")
    }


def tsc(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    node, tsc_js = typescript_tools()
    return subprocess.run(
        [node, str(tsc_js), "-p", str(root), *args], capture_output=True, text=True, timeout=180
    )


def compile_and_run(root: Path) -> str:
    done = tsc(root)
    assert done.returncode == 0, done.stdout + done.stderr
    node, _ = typescript_tools()
    run = subprocess.run([node, str(root / "out" / "main.js")], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return run.stdout.strip()


async def test_symbols_match_the_code(ts: Shared) -> None:
    out = await ts.call("get_symbols_in_file", {"pathInProject": "src/util.ts"})
    top = [(s["name"], s["kind"]) for s in out["symbols"]]
    assert top == [("formatPrice", "Function"), ("Cart", "Class")]
    assert out["symbols"][0]["detail"] == "(cents: number, currency: string = 'EUR'): string"
    assert out["symbols"][0]["line"] == 0 and out["symbols"][0]["endLine"] == 4
    members = [(c["name"], c["kind"]) for c in out["symbols"][1]["children"]]
    assert members == [("items", "Property"), ("add", "Method"), ("total", "Method")]


async def test_references_in_ten_files_match_grep(ts: Shared) -> None:
    out = await ts.call("find_references", {"pathInProject": "src/util.ts", "line": 0, "character": 18})
    assert "partial" not in out, out
    found = {(r["path"], r["line"], r["character"]) for r in flat_references(out)}
    assert found == grep_uses(ts.root, "formatPrice")
    assert len({r["path"] for r in flat_references(out) if r["path"].startswith("src/user")}) == USERS
    assert [(r["path"], r["line"]) for r in flat_references(out) if r.get("isDeclaration")] == [
        ("src/util.ts", 0)
    ]


async def test_rename_preview_then_rename_keeps_the_project_compiling(ts: Shared) -> None:
    before = snapshot(ts.root)
    args = {
        "pathInProject": "src/user4.ts",
        "line": 3,
        "character": 10,
        "refactorType": "rename",
        "options": {"newName": "renderPrice"},
    }
    preview = await ts.call("refactor_code_at_location", {**args, "preview": True})
    assert snapshot(ts.root) == before
    assert preview["diff"].count("+++ b/") == USERS + 1
    done = await ts.call("refactor_code_at_location", args)
    assert "applied" not in done and len(done["changedFiles"]) == USERS + 1  # applied: no `applied: true`
    assert done["message"] == "renamed 'formatPrice' to 'renderPrice'"
    assert not grep_uses(ts.root, "formatPrice")
    assert len(grep_uses(ts.root, "renderPrice")) == 2 * USERS + 2
    result = tsc(ts.root, "--noEmit")
    assert result.returncode == 0, result.stdout
    await ts.call("refactor_code_at_location", {**args, "options": {"newName": "formatPrice"}})
    assert snapshot(ts.root) == before


async def test_extract_function_and_variable_compile_and_run(ts: Shared) -> None:
    path = ts.root / "src/shipping.ts"
    original = path.read_text()
    expected = compile_and_run(ts.root)
    assert expected == "3.08 EUR 1800"
    try:
        # extract_variable: "weight * 150" on line 2 (characters 22-34)
        preview = await ts.call(
            "refactor_code_at_location",
            {
                "pathInProject": "src/shipping.ts",
                "line": 2,
                "character": 22,
                "refactorType": "extract_variable",
                "options": {"newName": "weightCost", "endLine": 2, "endCharacter": 34},
                "preview": True,
            },
        )
        assert path.read_text() == original
        assert "const weightCost = weight * 150;" in preview["diff"]
        await ts.call(
            "refactor_code_at_location",
            {
                "pathInProject": "src/shipping.ts",
                "line": 2,
                "character": 22,
                "refactorType": "extract_variable",
                "options": {"newName": "weightCost", "endLine": 2, "endCharacter": 34},
            },
        )
        text = path.read_text()
        assert "const weightCost = weight * 150;" in text and "base + weightCost +" in text
        assert compile_and_run(ts.root) == expected

        # extract_function: the expression "(express ? 1000 : 0)"
        line = next(i for i, ln in enumerate(text.splitlines()) if "express ?" in ln)
        row = text.splitlines()[line]
        start, end = row.index("(express"), row.index("0)") + 2
        done = await ts.call(
            "refactor_code_at_location",
            {
                "pathInProject": "src/shipping.ts",
                "line": line,
                "character": start,
                "refactorType": "extract_function",
                "options": {"newName": "expressFee", "endLine": line, "endCharacter": end},
            },
        )
        assert "applied" not in done and done["changedFiles"] == ["src/shipping.ts"]
        text = path.read_text()
        assert "function expressFee(" in text and "expressFee(express)" in text
        assert "newFunction" not in text
        # The new function is indented like the rest of the file (2 spaces), not tsserver's default 4.
        body = text.split("function expressFee(", 1)[1].splitlines()[1]
        assert body.startswith("  return") and not body.startswith("    "), body
        assert compile_and_run(ts.root) == expected
    finally:
        path.write_text(original)


async def test_problems_and_format_through_tsserver(ts: Shared) -> None:
    bad = ts.root / "src/bad.ts"
    bad.write_text("export const n: number = 'text';\n")
    try:
        out = await ts.call("get_file_problems", {"pathInProject": "src/bad.ts"})
        assert out["errors"] == 1, out
        assert out["problems"][0]["line"] == 0 and "string" in out["problems"][0]["message"]
        bad.write_text("export function  f( a:number ){return a+1}\n")
        out = await ts.call("format_file", {"pathInProject": "src/bad.ts"})
        assert out["applied"] is True
        assert bad.read_text() == "export function f(a: number) { return a + 1 }\n"
    finally:
        bad.unlink()


RENAME = {
    "pathInProject": "src/utils/helper.js",
    "line": 0,
    "character": 12,
    "refactorType": "rename",
    "options": {"newName": "helperFunction"},
}


@pytest.fixture
def js(tmp_path: Path) -> Iterator[Shared]:
    shared = Shared(seed_js_project(tmp_path / "js"))
    yield shared
    shared.ws.close()


async def test_plain_js_without_jsconfig_renames_and_finds_references_in_every_file(js: Shared) -> None:
    refs = await js.call(
        "find_references", {"pathInProject": "src/utils/helper.js", "line": 0, "character": 12}
    )
    assert "partial" not in refs, refs
    found = {(r["path"], r["line"], r["character"]) for r in flat_references(refs)}
    assert {("src/utils/helper.js", 0, 9), ("src/utils/helper.js", 4, 19), ("src/index.js", 0, 8)} <= found
    assert ("src/index.js", 3, 4) in found
    done = await js.call("refactor_code_at_location", RENAME)
    assert "success" not in done and sorted(done["changedFiles"]) == ["src/index.js", "src/utils/helper.js"]
    assert (js.root / "src/utils/helper.js").read_text() == SEED_HELPER.replace("helper", "helperFunction")
    assert (js.root / "src/index.js").read_text() == SEED_INDEX.replace("helper(", "helperFunction(").replace(
        "{ helper }", "{ helperFunction }"
    )
    assert not list(js.root.glob("*config.json")) and not list(js.root.glob(".mcp*"))  # nothing written
    node, _ = typescript_tools()
    run = subprocess.run([node, str(js.root / "src/index.js")], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr  # the importer still finds what it requires


async def test_plain_js_rename_refuses_when_importers_cannot_all_be_checked(
    js: Shared, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp_server_ide.engines.code import shorthand

    monkeypatch.setattr(shorthand, "MAX_CHECKS", 0)  # a name used in more places than are checked
    refs = await js.call(
        "find_references", {"pathInProject": "src/utils/helper.js", "line": 0, "character": 12}
    )
    assert refs["partial"] is True and "importers may be missing" in refs["reason"], refs
    async with Client(js.server) as client:
        result = await client.call_tool("refactor_code_at_location", RENAME)
    assert result.is_error and "importers may be missing" in result.content[0].text, result.content[0].text
    assert (js.root / "src/utils/helper.js").read_text() == SEED_HELPER


async def test_plain_js_over_the_file_cap_refuses_naming_the_cap(
    js: Shared, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_IDE_TS_PROJECT_MAX_FILES", "1")
    async with Client(js.server) as client:
        result = await client.call_tool("refactor_code_at_location", RENAME)
    assert result.is_error
    text = result.content[0].text
    assert "not renaming from a partial view" in text and "2 JS/TS files" in text, text
    assert "more than the 1 " in text and "MCP_IDE_TS_PROJECT_MAX_FILES" in text, text
    assert (js.root / "src/utils/helper.js").read_text() == SEED_HELPER


async def test_plain_js_view_takes_in_a_file_created_after_the_server_started(js: Shared) -> None:
    first = await js.call(
        "find_references", {"pathInProject": "src/utils/helper.js", "line": 0, "character": 12}
    )
    assert {r["path"] for r in first["references"]} == {"src/utils/helper.js", "src/index.js"}
    (js.root / "src/late.js").write_text("const { helper } = require('./utils/helper');\nhelper();\n")
    out = await js.call(
        "find_references", {"pathInProject": "src/utils/helper.js", "line": 0, "character": 12}
    )
    assert "partial" not in out, out
    assert {r["path"] for r in out["references"]} == {"src/utils/helper.js", "src/index.js", "src/late.js"}

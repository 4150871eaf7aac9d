"""Code intelligence on Python, through an MCP client session, with the real basedpyright, rope and ruff.

One generated ~100-module project and one language server are shared by the module (the
server starts once; every test opens its own MCP session against the same workspace, as
several assistants would). Tests that change files restore them or use files of their own.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from mcp_server_ide.server import build_server
from mcp_server_ide.workspace import Workspace

from .support.codeprojects import USERS, python_project
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

    async def fail(self, name: str, args: dict[str, Any]) -> str:
        async with Client(self.server) as client:
            result = await client.call_tool(name, args)
        assert result.is_error, f"{name} should have failed: {result.content[0].text}"
        return result.content[0].text


@pytest.fixture(scope="module")
def py(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shared]:
    root = python_project(tmp_path_factory.mktemp("pyproj"))
    shared = Shared(root)
    yield shared
    shared.ws.close()


def grep_uses(root: Path, name: str) -> set[tuple[str, int, int]]:
    """Every whole-word occurrence of ``name`` in code (comments and docstrings left out)."""
    hits = set()
    word = re.compile(rf"\b{re.escape(name)}\b")
    for path in sorted(root.rglob("*.py")):
        for i, line in enumerate(path.read_text().splitlines()):
            code = line.split("#", 1)[0]
            if '"""' in code:
                continue
            for m in word.finditer(code):
                hits.add((path.relative_to(root).as_posix(), i, m.start()))
    return hits


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def snapshot(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*.py")
    }


def run_python(root: Path, code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


async def test_symbols_of_a_module_match_the_code(py: Shared) -> None:
    out = await py.call("get_symbols_in_file", {"pathInProject": "pkg/core.py"})
    names = [(s["name"], s["kind"]) for s in out["symbols"]]
    assert names == [("TAX_RATE", "Constant"), ("compute_total", "Function"), ("Basket", "Class")]
    fn = out["symbols"][1]
    assert fn == {
        "name": "compute_total",
        "kind": "Function",
        "line": 7,
        "character": 4,
        "endLine": 10,
        "detail": "(items: list[float], discount: float = 0.0) -> float",
    }
    methods = [(c["name"], c["kind"]) for c in out["symbols"][2]["children"]]
    assert methods == [("__init__", "Method"), ("add", "Method"), ("total", "Method")]


async def test_references_across_the_workspace_match_grep(py: Shared) -> None:
    out = await py.call("find_references", {"pathInProject": "pkg/core.py", "line": 7, "character": 6})
    assert "partial" not in out, out
    found = {(r["path"], r["line"], r["character"]) for r in flat_references(out)}
    expected = grep_uses(py.root, "compute_total")
    assert found == expected
    files = {r["path"] for r in flat_references(out)}
    assert len([f for f in files if f.startswith("pkg/user_")]) == USERS
    declarations = [r for r in flat_references(out) if r.get("isDeclaration")]
    assert [(d["path"], d["line"], d["character"]) for d in declarations] == [("pkg/core.py", 7, 4)]
    assert flat_references(out)[0]["isDeclaration"] is True
    assert out["symbol"] == "compute_total"


async def test_a_position_off_the_identifier_snaps_to_it(py: Shared) -> None:
    # Line 5 of user_03.py is "    return compute_total([3.0, 1.0], discount=0.5)": point at the space before it
    # and at the "(" after it.
    before = await py.call("find_references", {"pathInProject": "pkg/user_03.py", "line": 5, "character": 10})
    after = await py.call("find_references", {"pathInProject": "pkg/user_03.py", "line": 5, "character": 24})
    assert before["symbol"] == after["symbol"] == "compute_total"
    assert len(flat_references(before)) == len(grep_uses(py.root, "compute_total"))
    defs = await py.call("go_to_definition", {"pathInProject": "pkg/user_03.py", "line": 5, "character": 12})
    assert defs["definitions"][0]["path"] == "pkg/core.py"
    assert defs["definitions"][0]["line"] == 7
    assert defs["definitions"][0]["lineText"].startswith("def compute_total(")


async def test_rename_preview_changes_nothing_then_rename_changes_every_use(py: Shared) -> None:
    before = snapshot(py.root)
    uses = grep_uses(py.root, "compute_total")
    args = {
        "pathInProject": "pkg/core.py",
        "line": 7,
        "character": 4,
        "refactorType": "rename",
        "options": {"newName": "grand_total"},
    }
    preview = await py.call("refactor_code_at_location", {**args, "preview": True})
    assert snapshot(py.root) == before
    assert preview["applied"] is False
    assert len(preview["changedFiles"]) == USERS + 1
    assert preview["diff"].count("+++ b/") == USERS + 1
    assert "-from pkg.core import compute_total\n+from pkg.core import grand_total\n" in preview["diff"]

    done = await py.call("refactor_code_at_location", args)
    assert done == {
        "changedFiles": preview["changedFiles"],
        "message": "renamed 'compute_total' to 'grand_total'",
    }
    assert not grep_uses(py.root, "compute_total")
    renamed = grep_uses(py.root, "grand_total")
    assert {(p, ln) for p, ln, _ in renamed} == {(p, ln) for p, ln, _ in uses}
    # Comments that mention the old name are text, not references: they stay.
    assert "# compute_total is called below" in (py.root / "pkg/user_03.py").read_text()
    # The project still imports and computes the same numbers.
    value = run_python(
        py.root,
        "import pkg.user_03, pkg.core; print(pkg.user_03.report_3(), pkg.core.Basket().add(2).total())",
    )
    assert value == "4.2 2.4"
    # Answers follow the change at once (the server was sent didChange for every written file).
    refs = await py.call("find_references", {"pathInProject": "pkg/core.py", "line": 7, "character": 6})
    assert {(r["path"], r["line"], r["character"]) for r in flat_references(refs)} == renamed
    # Rename back, so other tests see the original project.
    await py.call("refactor_code_at_location", {**args, "options": {"newName": "compute_total"}})
    assert snapshot(py.root) == before


async def test_edits_made_through_the_file_tools_reach_the_server(py: Shared) -> None:
    text = "from pkg.core import compute_total\n\nVALUE = compute_total([1.0])\n"
    await py.call("create_new_file_with_text", {"pathInProject": "pkg/late_user.py", "text": text})
    try:
        out = await py.call("find_references", {"pathInProject": "pkg/core.py", "line": 7, "character": 6})
        assert ("pkg/late_user.py", 2, 8) in {
            (r["path"], r["line"], r["character"]) for r in flat_references(out)
        }
        await py.call(
            "rewrite_file_content",
            {
                "pathInProject": "pkg/late_user.py",
                "text": "VALUE = 1\n",
                "expectedHash": sha(py.root / "pkg/late_user.py"),
            },
        )
        out = await py.call("find_references", {"pathInProject": "pkg/core.py", "line": 7, "character": 6})
        assert "pkg/late_user.py" not in {r["path"] for r in flat_references(out)}
    finally:
        (py.root / "pkg/late_user.py").unlink()


async def test_extract_variable_and_function_produce_code_that_runs(py: Shared) -> None:
    path = py.root / "pkg/extractme.py"
    original = path.read_text()
    check = "from pkg.extractme import price_with_shipping as f; print(f([1.0, 2.5], 3), f([4.0], 1))"
    expected = run_python(py.root, check)
    assert expected == "13.0 9.0"
    try:
        # extract_variable: the expression "5.0 + weight * 1.5" (line 2, characters 15-33)
        preview = await py.call(
            "refactor_code_at_location",
            {
                "pathInProject": "pkg/extractme.py",
                "line": 2,
                "character": 15,
                "refactorType": "extract_variable",
                "options": {"newName": "heavy_cost", "endLine": 2, "endCharacter": 33},
                "preview": True,
            },
        )
        assert path.read_text() == original
        assert "+    heavy_cost = 5.0 + weight * 1.5\n" in preview["diff"]
        await py.call(
            "refactor_code_at_location",
            {
                "pathInProject": "pkg/extractme.py",
                "line": 2,
                "character": 15,
                "refactorType": "extract_variable",
                "options": {"newName": "heavy_cost", "endLine": 2, "endCharacter": 33},
            },
        )
        text = path.read_text()
        assert "heavy_cost = 5.0 + weight * 1.5" in text
        assert "shipping = heavy_cost if weight > 2 else 5.0" in text
        assert run_python(py.root, check) == expected

        # extract_function: the two statements computing shipping and total (lines 3-4 after the extract above)
        lines = text.splitlines()
        start = next(i for i, ln in enumerate(lines) if ln.strip().startswith("shipping ="))
        done = await py.call(
            "refactor_code_at_location",
            {
                "pathInProject": "pkg/extractme.py",
                "line": start,
                "character": 4,
                "refactorType": "extract_function",
                "options": {
                    "newName": "add_shipping",
                    "endLine": start + 1,
                    "endCharacter": len(lines[start + 1]),
                },
            },
        )
        assert "applied" not in done and done["message"].startswith("extracted function 'add_shipping'")
        text = path.read_text()
        assert "def add_shipping(" in text and "add_shipping(" in text.split("def add_shipping(")[0]
        assert run_python(py.root, check) == expected
        # ... and the new function is real code: callable on its own.
        assert "def add_shipping" in run_python(
            py.root, "import inspect, pkg.extractme as m; print(inspect.getsource(m.add_shipping))"
        )
    finally:
        path.write_text(original)


async def test_extract_without_an_end_takes_the_expression_or_the_statement(py: Shared) -> None:
    out = await py.call(
        "refactor_code_at_location",
        {
            "pathInProject": "pkg/extractme.py",
            "line": 4,
            "character": 17,
            "refactorType": "extract_variable",
            "options": {"newName": "rounded"},
            "preview": True,
        },
    )
    assert "+    rounded = round(total, 2)\n" in out["diff"]
    out = await py.call(
        "refactor_code_at_location",
        {
            "pathInProject": "pkg/extractme.py",
            "line": 1,
            "character": 0,
            "refactorType": "extract_function",
            "options": {"newName": "sum_prices"},
            "preview": True,
        },
    )
    assert "def sum_prices(prices):" in out["diff"]


async def test_refactor_errors_name_the_fix(py: Shared) -> None:
    text = await py.fail(
        "refactor_code_at_location",
        {"pathInProject": "pkg/core.py", "line": 7, "character": 4, "refactorType": "inline"},
    )
    assert "rename, extract_function or extract_variable" in text
    text = await py.fail(
        "refactor_code_at_location",
        {
            "pathInProject": "pkg/core.py",
            "line": 7,
            "character": 4,
            "refactorType": "rename",
            "options": {"newName": "not valid"},
        },
    )
    assert "valid identifier" in text
    text = await py.fail("find_references", {"pathInProject": "pkg/core.py", "line": 6, "character": 0})
    assert "no identifier on line 6" in text
    text = await py.fail("find_references", {"pathInProject": "../outside.py", "line": 0, "character": 0})
    assert "outside the workspace" in text


async def test_problems_come_from_ruff_and_basedpyright(py: Shared) -> None:
    path = py.root / "pkg/broken.py"
    path.write_text("import os\n\n\ndef f() -> int:\n    return undefined_name + 'x'\n")
    try:
        out = await py.call("get_file_problems", {"pathInProject": "pkg/broken.py"})
        sources = {p["source"] for p in out["problems"]}
        assert "ruff" in sources and "basedpyright" in sources, out
        codes = {p["code"] for p in out["problems"]}
        assert "F401" in codes and "F821" in codes
        undefined = [
            p for p in out["problems"] if p["source"] == "basedpyright" and "undefined_name" in p["message"]
        ]
        assert undefined and undefined[0]["line"] == 4 and undefined[0]["severity"] == "error"
        assert out["errors"] >= 1
        # Fixed through the file tools: the next answer is about the new text.
        await py.call(
            "rewrite_file_content",
            {
                "pathInProject": "pkg/broken.py",
                "text": "def f() -> int:\n    return 1\n",
                "expectedHash": sha(path),
            },
        )
        out = await py.call("get_file_problems", {"pathInProject": "pkg/broken.py"})
        assert out["problems"] == [], out
    finally:
        path.unlink()


def slow_to_check(links: int) -> str:
    """A module whose checking takes basedpyright seconds: a chain of functions whose return types it must
    infer through every earlier one."""
    out = ["from pkg.z_checked_late import g\n\n\ndef f0(x):\n    return [x, {'k': (x, x)}]\n"]
    for i in range(1, links):
        out.append(
            f"\n\ndef f{i}(x):\n    y = f{i - 1}(x)\n    return [y, {{'k': (y, x)}}] if x else f{i - 1}(y)\n"
        )
    out.append(f"\n\nv = f{links - 1}(g())\n")
    return "".join(out)


async def test_problems_are_the_checked_ones_while_another_file_is_being_checked(py: Shared) -> None:
    """basedpyright publishes an empty list for a file it has only bound (here while it checks a slow
    module that imports it), then the checker's findings for the same version: the answer must be the
    findings (a pull, answered after the analysis), not the early empty publication taken as complete."""
    slow = py.root / "pkg/a_slow_check.py"
    late = py.root / "pkg/z_checked_late.py"
    slow.write_text(slow_to_check(400))
    late.write_text("def g() -> int:\n    return undefined_name + 'x'\n")
    try:
        from mcp_server_ide.engines.lsp import servers

        # Both opened at once, as a query across files opens them: the slow one is checked first.
        server = servers(py.ws).server_for(slow)
        assert server is not None
        server.sync_document(slow)
        server.sync_document(late)
        out = await py.call("get_file_problems", {"pathInProject": "pkg/z_checked_late.py"})
        undefined = [
            p for p in out["problems"] if p["source"] == "basedpyright" and "undefined_name" in p["message"]
        ]
        assert undefined and undefined[0]["line"] == 1, out
        assert "partial" not in out, out
    finally:
        slow.unlink()
        late.unlink()


async def test_format_file_with_ruff_and_the_engine_function(py: Shared) -> None:
    from mcp_server_ide.engines import code, sandbox

    path = py.root / "pkg/ugly.py"
    path.write_text("def  f( a,b ):\n  return {'a':a,'b':b}\n")
    try:
        preview = await py.call("format_file", {"pathInProject": "pkg/ugly.py", "preview": True})
        assert preview["changed"] is True and preview["applied"] is False
        assert path.read_text() == "def  f( a,b ):\n  return {'a':a,'b':b}\n"
        out = await py.call("format_file", {"pathInProject": "pkg/ugly.py"})
        assert out["applied"] is True
        assert path.read_text() == 'def f(a, b):\n    return {"a": a, "b": b}\n'
        resolved = sandbox.resolve(py.ws, "pkg/ugly.py")
        assert code.format_file(py.ws, resolved) is False
        path.write_text("x=1\n")
        assert code.format_file(py.ws, resolved) is True
        assert path.read_text() == "x = 1\n"
        # Nothing is written over a syntax error.
        path.write_text("def (:\n")
        text = await py.fail("format_file", {"pathInProject": "pkg/ugly.py"})
        assert "cannot format" in text
        assert path.read_text() == "def (:\n"
    finally:
        path.unlink()


async def test_references_are_grouped_by_file_in_the_json_text(py: Shared) -> None:
    async with Client(py.server) as client:
        result = await client.call_tool(
            "find_references", {"pathInProject": "pkg/core.py", "line": 7, "character": 6}
        )
    data = json.loads(result.content[0].text)
    assert data["symbol"] == "compute_total"
    first = data["references"][0]
    assert first["path"] == "pkg/core.py" and set(first) == {"path", "locations"}
    assert first["locations"][0] == {"line": 7, "character": 4, "isDeclaration": True}
    paths = [group["path"] for group in data["references"]]
    assert len(paths) == len(set(paths))  # each file once
    assert all(
        set(at) == {"line", "character"} for group in data["references"][1:] for at in group["locations"]
    )


async def test_symbols_are_enriched_by_the_running_server(py: Shared) -> None:
    await py.call(
        "find_references", {"pathInProject": "pkg/core.py", "line": 7, "character": 6}
    )  # server running
    out = await py.call("get_symbols_in_file", {"pathInProject": "pkg/core.py"})
    assert out["enrichedBy"] == "basedpyright"
    assert [(s["name"], s["kind"]) for s in out["symbols"]] == [
        ("TAX_RATE", "Constant"),
        ("compute_total", "Function"),
        ("Basket", "Class"),
    ]
    assert [c["kind"] for c in out["symbols"][2]["children"]] == ["Method", "Method", "Method"]


async def test_format_file_of_a_file_with_no_formatter_names_its_kind(py: Shared) -> None:
    """Found by the REST fuzz: a file without an extension read "no formatter for this files here"."""
    for name, kind in (("NOTES", "files without an extension"), ("notes.txt", ".txt files")):
        path = py.root / name
        path.write_text("some text\n")
        try:
            text = await py.fail("format_file", {"pathInProject": name})
        finally:
            path.unlink()
        assert f"no formatter for {kind} here" in text, text

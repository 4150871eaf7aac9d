"""Outlines (get_symbols_in_file) through an MCP client session, checked against the code itself.

The real ``rich`` package (downloaded from PyPI by the test, not committed) is outlined file by file
and compared with Python's own ``ast``: every class, function and method, nested the same way, with
the same line ranges. Other languages are checked on small sources written here.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from mcp_server_ide.engines import treesitter
from mcp_server_ide.engines.treesitter.parsers import plan_for

from .support.codeprojects import rich_source
from .support.results import payload

pytestmark = pytest.mark.anyio


def ast_outline(tree: ast.AST) -> list[tuple[str, str, int, int, list[Any]]]:
    out = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            kind = "Class" if isinstance(node, ast.ClassDef) else "Function"
            start = node.decorator_list[0].lineno if node.decorator_list else node.lineno
            out.append((node.name, kind, start - 1, node.end_lineno - 1, ast_outline(node)))  # type: ignore[operator]
        elif isinstance(node, ast.stmt | ast.ExceptHandler | ast.match_case) and not isinstance(
            node, ast.Lambda
        ):
            out.extend(ast_outline(node))  # definitions under `if TYPE_CHECKING:` / try blocks count too
    return out


def ts_outline(symbols: list[dict[str, Any]]) -> list[tuple[str, str, int, int, list[Any]]]:
    out = []
    for s in symbols:
        if s["kind"] not in ("Class", "Function", "Method", "Constructor"):
            continue
        kind = "Class" if s["kind"] == "Class" else "Function"
        out.append(
            (
                s["name"],
                kind,
                s.get("startLine", s["line"]),
                s.get("endLine", s["line"]),
                ts_outline(s.get("children", [])),
            )
        )
    return out


def strip_locals(entries: list[Any], in_function: bool = False) -> list[Any]:
    """ast lists functions nested in functions too; so does the outline. Keep both as they are."""
    return [(n, k, a, b, strip_locals(c, k == "Function")) for n, k, a, b, c in entries]


async def test_symbols_of_rich_match_pythons_ast(mcp: Any, tmp_path: Path) -> None:
    package, _name = rich_source(tmp_path)
    files = sorted(package.rglob("*.py"))
    assert len(files) >= 25
    checked = 0
    async with mcp(tmp_path) as client:
        for path in files:
            source = path.read_text(encoding="utf-8")
            expected = strip_locals(ast_outline(ast.parse(source)))
            result = await client.call_tool(
                "get_symbols_in_file", {"pathInProject": str(path.relative_to(tmp_path))}
            )
            assert not result.is_error, result.content[0].text
            got = strip_locals(ts_outline(payload(result)["symbols"]))
            assert got == expected, f"{path.relative_to(tmp_path)} differs"
            checked += 1
    assert checked == len(files)


async def test_symbol_shape_for_a_seed_example(mcp: Any, ws_path: Path) -> None:
    (ws_path / "src/utils").mkdir(parents=True)
    (ws_path / "src/utils/helper.js").write_text("function helper() {\n  return 'Hello';\n}\n")
    async with mcp(ws_path) as client:
        compact = await client.call_tool("get_symbols_in_file", {"pathInProject": "src/utils/helper.js"})
        result = await client.call_tool(
            "get_symbols_in_file", {"pathInProject": "src/utils/helper.js", "ranges": True}
        )
    assert payload(compact)["symbols"] == [
        {"name": "helper", "kind": "Function", "line": 0, "character": 9, "endLine": 2, "detail": "()"}
    ]
    symbol = payload(result)["symbols"][0]
    assert {k: symbol[k] for k in ("name", "kind", "range", "text")} == {
        "name": "helper",
        "kind": "Function",
        "range": {"startLine": 0, "startCharacter": 0, "endLine": 2, "endCharacter": 1},
        "text": "helper",
    }
    assert symbol["detail"] == "()"


SOURCES: dict[str, tuple[str, list[tuple[str, str, int]]]] = {
    "main.go": (
        "package main\n\ntype Shape interface {\n\tArea() float64\n}\n\ntype Rect struct {\n\tW, H float64\n}\n\n"
        "func (r Rect) Area() float64 {\n\treturn r.W * r.H\n}\n\nconst Pi = 3.14\n\nfunc main() {}\n",
        [
            ("Shape", "Interface", 0),
            ("Area", "Method", 1),
            ("Rect", "Struct", 0),
            ("W", "Field", 1),
            ("Area", "Method", 0),
            ("Pi", "Constant", 0),
            ("main", "Function", 0),
        ],
    ),
    "lib.rs": (
        "pub struct Point { x: i32 }\n\nimpl Point {\n    pub fn new(x: i32) -> Self { Point { x } }\n}\n\n"
        "pub enum Dir { Up, Down }\n\npub trait Move { fn step(&self); }\n\nfn free() {}\n",
        [
            ("Point", "Struct", 0),
            ("x", "Field", 1),
            ("Point", "Object", 0),
            ("new", "Method", 1),
            ("Dir", "Enum", 0),
            ("Up", "EnumMember", 1),
            ("Down", "EnumMember", 1),
            ("Move", "Interface", 0),
            ("step", "Method", 1),
            ("free", "Function", 0),
        ],
    ),
    "App.java": (
        "public class App {\n  private int count;\n  public App() {}\n  public int next(int by) { return count += by; }\n}\n",
        [("App", "Class", 0), ("count", "Field", 1), ("App", "Constructor", 1), ("next", "Method", 1)],
    ),
    "shapes.cpp": (
        "namespace geo {\nclass Circle {\n public:\n  double area() const;\n};\n}\nint main() { return 0; }\n",
        [("geo", "Namespace", 0), ("Circle", "Class", 1), ("area", "Method", 2), ("main", "Function", 0)],
    ),
    "README.md": ("# Title\n\ntext\n\n## Usage\n\nmore\n", [("Title", "String", 0), ("Usage", "String", 1)]),
    "config.json": (
        '{"name": "x", "scripts": {"test": "pytest"}}\n',
        [("name", "Property", 0), ("scripts", "Property", 0), ("test", "Property", 1)],
    ),
    "app.rb": (
        "module Shop\n  class Cart\n    def add(item)\n    end\n  end\nend\n",
        [("Shop", "Module", 0), ("Cart", "Class", 1), ("add", "Method", 2)],
    ),
}


def flatten(symbols: list[dict[str, Any]], depth: int = 0) -> list[tuple[str, str, int]]:
    out = []
    for s in symbols:
        out.append((s["name"], s["kind"], depth))
        out.extend(flatten(s.get("children", []), depth + 1))
    return out


async def test_symbols_in_other_languages(mcp: Any, ws_path: Path) -> None:
    for name, (text, _) in SOURCES.items():
        (ws_path / name).write_text(text)
    async with mcp(ws_path) as client:
        for name, (_, expected) in SOURCES.items():
            result = await client.call_tool("get_symbols_in_file", {"pathInProject": name})
            assert not result.is_error, result.content[0].text
            assert flatten(payload(result)["symbols"]) == expected, name


async def test_unknown_file_types_fail_clearly(mcp: Any, ws_path: Path) -> None:
    (ws_path / "data.unknownext").write_text("x")
    async with mcp(ws_path) as client:
        result = await client.call_tool("get_symbols_in_file", {"pathInProject": "data.unknownext"})
        assert result.is_error and "no tree-sitter grammar" in result.content[0].text
        result = await client.call_tool("get_symbols_in_file", {"pathInProject": "missing.py"})
        assert result.is_error


def test_every_bundled_grammar_gives_an_outline_plan() -> None:
    languages = treesitter.supported_languages()
    assert len(languages) >= 150
    for lang in (
        "python",
        "typescript",
        "tsx",
        "javascript",
        "go",
        "rust",
        "c",
        "cpp",
        "java",
        "csharp",
        "ruby",
        "php",
        "kotlin",
        "swift",
        "scala",
        "lua",
        "bash",
        "elixir",
        "zig",
        "proto",
        "hcl",
        "ini",
        "markdown",
    ):
        assert plan_for(lang) is not None, lang
    for lang in sorted(languages):
        treesitter.outline("", lang)  # every grammar loads and answers, even when it declares nothing


def test_outline_of_a_2700_line_file_is_whole() -> None:
    """Every class of a 2,700-line file is outlined (its speed is bench/bench_code.py's to measure)."""
    import random

    rnd = random.Random(7)
    parts = []
    for i in range(340):
        parts.append(
            f"class C{i}(Base):\n    attr = {i}\n\n    def m{i}(self, a: int, b: str = 'x') -> int:\n"
            f"        total = a * {rnd.randint(1, 9)}\n        return total\n\n\n"
        )
    text = "".join(parts)
    assert text.count("\n") >= 2700
    symbols = treesitter.outline(text, "python")
    assert [s.name for s in symbols] == [f"C{i}" for i in range(340)]


def test_positions_snap_to_the_nearest_identifier() -> None:
    line = "    return compute_total([1.0], discount=0.5)"
    for ch, want in (
        (10, "compute_total"),
        (11, "compute_total"),
        (24, "compute_total"),
        (0, "return"),
        (30, "discount"),
        (45, "discount"),
    ):
        hit = treesitter.identifier_at(line, "python", 0, ch)
        assert hit is not None and line[hit[1] : hit[2]] == want, (ch, hit)
    assert treesitter.identifier_at("def helper(x):", "python", 0, 3)[1:] == (4, 10)
    assert treesitter.identifier_at("   ", "python", 0, 1) is None
    # UTF-16 columns: an astral character before the name counts as two units.
    hit = treesitter.identifier_at("s = '😀'; name = 1", "python", 0, 11)
    assert hit == (0, 10, 14)

"""Benchmark of the code-intelligence tools, through an in-process MCP client session.

Figures (median of several runs unless said), each with its target and the ratio to it
(< 1.00 is within target), and a floor measured in the same run: the same work without the MCP
layer (the raw LSP request, the bare tree-sitter outline), so the overhead of the tool is visible.

- symbols of a 2,700-line Python file (target 30 ms)
- find_references, warm (target 60 ms), Python (basedpyright) and TypeScript (tsserver)
- rename, warm, applied to 11 files and written through the journal (target 80 ms), both languages
- first find_references on a fresh workspace, cold, including the server's start (target 5 s)
- resident memory of each language server's process group after the runs

Run: ``python bench/bench_code.py`` (about a minute). Projects are generated into a temp folder.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcp import Client
from tests.support.codeprojects import python_project, typescript_project
from tests.support.results import flat_references

from mcp_server_ide.engines import treesitter
from mcp_server_ide.engines.lsp import servers
from mcp_server_ide.server import build_server
from mcp_server_ide.workspace import Workspace

ROWS: list[tuple[str, float, float, str]] = []


def row(name: str, value: float, target: float, floor: str = "") -> None:
    ROWS.append((name, value, target, floor))
    print(
        f"{name:<52} {value * 1000 if target < 10 else value:>9.1f} {'ms' if target < 10 else 's '}  "
        f"target {target * 1000 if target < 10 else target:>6.0f}  ratio {value / target:5.2f}  {floor}",
        flush=True,
    )


def big_python_file() -> str:
    parts = ['"""A generated module of about 2,700 lines."""\n\nimport os\n\n']
    i = 0
    while sum(p.count("\n") for p in parts) < 2700:
        parts.append(
            f"class Widget{i}(Base):\n"
            f'    """Widget number {i}."""\n\n'
            f"    size: int = {i}\n\n"
            f"    def __init__(self, name: str, size: int = {i}) -> None:\n"
            f"        self.name = name\n        self.size = size\n\n"
            f"    def render(self, width: int, *, style: str | None = None) -> list[str]:\n"
            f"        lines = [self.name.center(width)]\n"
            f"        if style:\n            lines.append(style)\n"
            f"        return lines\n\n\n"
            f"def make_widget_{i}(name: str) -> Widget{i}:\n    return Widget{i}(name)\n\n\n"
        )
        i += 1
    return "".join(parts)


async def timed_calls(
    client: Client, name: str, args: dict[str, Any] | list[dict[str, Any]], n: int
) -> float:
    times = []
    for k in range(n):
        a = args[k % len(args)] if isinstance(args, list) else args
        start = time.perf_counter()
        result = await client.call_tool(name, a)
        times.append(time.perf_counter() - start)
        if result.is_error:
            raise SystemExit(f"{name} failed: {result.content[0].text}")
    return statistics.median(times)


def raw_references(ws: Workspace, path: Path, line: int, character: int, n: int = 20) -> float:
    from lsprotocol import types as lsp

    server = servers(ws).server_for(path)
    assert server is not None
    params = lsp.ReferenceParams(
        text_document=lsp.TextDocumentIdentifier(uri=path.as_uri()),
        position=lsp.Position(line=line, character=character),
        context=lsp.ReferenceContext(include_declaration=True),
    )
    times = []
    for _ in range(n):
        start = time.perf_counter()
        server.request("textDocument/references", params)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


async def bench_language(label: str, root: Path, ref: dict[str, Any], rename_names: tuple[str, str]) -> int:
    ws = Workspace.open(root)
    server, _ = build_server(lambda ctx: ws, None)
    try:
        async with Client(server) as client:
            start = time.perf_counter()
            result = await client.call_tool("find_references", ref)
            cold = time.perf_counter() - start
            if result.is_error or json.loads(result.content[0].text).get("partial"):
                raise SystemExit(f"cold references failed or partial: {result.content[0].text[:300]}")
            count = len(flat_references(json.loads(result.content[0].text)))
            row(
                f"{label}: first find_references, cold ({count} refs)",
                cold,
                5.0,
                "includes the server's start",
            )
            await timed_calls(client, "find_references", ref, 3)
            warm = await timed_calls(client, "find_references", ref, 20)
            floor = raw_references(ws, root / ref["pathInProject"], ref["line"], ref["character"])
            row(
                f"{label}: find_references, warm",
                warm,
                0.060,
                f"floor: raw LSP request {floor * 1000:.1f} ms",
            )
            renames = []
            for new in (rename_names[1], rename_names[0]) * 5:
                renames.append({**ref, "refactorType": "rename", "options": {"newName": new}})
            await timed_calls(client, "refactor_code_at_location", renames[:2], 2)
            preview = await timed_calls(
                client, "refactor_code_at_location", [{**r, "preview": True} for r in renames[:1]], 5
            )
            applied = await timed_calls(client, "refactor_code_at_location", renames, len(renames))
            row(
                f"{label}: rename, warm, 11 files written",
                applied,
                0.080,
                f"preview only: {preview * 1000:.1f} ms",
            )
        rss = sum(s.rss() for s in servers(ws).running())
        return rss
    finally:
        ws.close()


async def main() -> None:
    print(f"{'figure':<52} {'value':>12}  {'target':>9}  {'ratio':>11}")
    text = big_python_file()
    lines = text.count("\n")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "big.py").write_text(text)
        treesitter.outline(text, "python")
        times = []
        for _ in range(20):
            start = time.perf_counter()
            treesitter.outline(text, "python")
            times.append(time.perf_counter() - start)
        engine = statistics.median(times)
        ws = Workspace.open(root)
        server, _ = build_server(lambda ctx: ws, None)
        async with Client(server) as client:
            await timed_calls(client, "get_symbols_in_file", {"pathInProject": "big.py"}, 3)
            tool = await timed_calls(client, "get_symbols_in_file", {"pathInProject": "big.py"}, 20)
        ws.close()
        row(
            f"get_symbols_in_file, {lines}-line file (MCP call)",
            tool,
            0.030,
            f"floor: outline alone {engine * 1000:.1f} ms",
        )

        py_root = python_project(root / "py")
        rss_py = await bench_language(
            "python",
            py_root,
            {"pathInProject": "pkg/core.py", "line": 7, "character": 6},
            ("compute_total", "grand_total"),
        )
        ts_root = typescript_project(root / "ts")
        rss_ts = await bench_language(
            "typescript",
            ts_root,
            {"pathInProject": "src/util.ts", "line": 0, "character": 18},
            ("formatPrice", "renderPrice"),
        )
    print(f"{'resident memory, basedpyright (process group)':<52} {rss_py / 2**20:>9.0f} MB")
    print(f"{'resident memory, typescript-language-server+tsserver':<52} {rss_ts / 2**20:>9.0f} MB")
    worst = max(v / t for _, v, t, _ in ROWS)
    print(f"worst ratio to target: {worst:.2f} ({'all within target' if worst <= 1 else 'OVER TARGET'})")


if __name__ == "__main__":
    anyio.run(main)

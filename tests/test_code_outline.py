"""The compact outline of get_symbols_in_file over MCP: small, and enough to rename any symbol from it.

Real files are outlined: this package's own ``call.py`` and the standard library's ``threading.py``
(~1,700 lines), copied into a workspace. Each symbol's ``line``/``character`` from the outline alone
is handed to ``find_references`` (the real basedpyright): the declaration it finds is that symbol,
exactly there; one of them is renamed (preview) through ``refactor_code_at_location``.
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

import pydantic_core
import pytest

from mcp_server_ide import call

from .support.results import data, flat_references, payload

pytestmark = pytest.mark.anyio


def flat(symbols: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for s in symbols:
        out.append(s)
        out.extend(flat(s.get("children", [])))
    return out


def real_files(root: Path) -> tuple[str, str]:
    shutil.copyfile(call.__file__, root / "call.py")
    shutil.copyfile(threading.__file__, root / "threading_copy.py")
    lines = (root / "threading_copy.py").read_text().count("\n")
    assert 1400 <= lines <= 2000, f"threading.py has {lines} lines here: pick another ~1,700-line module"
    return "call.py", "threading_copy.py"


async def outline(client: Any, path: str, **extra: Any) -> dict[str, Any]:
    result = await client.call_tool("get_symbols_in_file", {"pathInProject": path, **extra})
    assert not result.is_error, result.content[0].text
    return payload(result)


async def test_the_outline_is_compact(mcp: Any, ws_path: Path) -> None:
    small, large = real_files(ws_path)
    async with mcp(ws_path) as client:
        for path, limit in ((small, 4_000), (large, 25_000)):
            data = await outline(client, path)
            size = len(pydantic_core.to_json(data))
            assert size <= limit, f"{path}: the outline is {size} bytes (limit {limit})"
            for s in flat(data["symbols"]):
                assert set(s) <= {
                    "name",
                    "kind",
                    "line",
                    "character",
                    "endLine",
                    "startLine",
                    "detail",
                    "children",
                }
                assert s.get("detail", "x") != "" and s.get("children", [1]) != []
                assert s.get("endLine", s["line"] + 1) != s["line"]  # left out when it is `line`
            full = await outline(client, path, ranges=True)
            assert len(pydantic_core.to_json(full)) > 2 * size  # what the option gives: the LSP ranges


async def test_the_outline_keeps_spans_and_names_positions(mcp: Any, ws_path: Path) -> None:
    (ws_path / "m.py").write_text(
        "import functools\n"
        "\n"
        "@functools.cache\n"
        "def cached(x: int) -> int:\n"
        "    return x\n"
        "\n"
        "LIMIT = 3\n"
        "\n"
        "class Box:\n"
        "    size: int\n"
        "\n"
        "    def grow(self):\n"
        "        pass\n"
    )
    async with mcp(ws_path) as client:
        data = await outline(client, "m.py")
        full = await outline(client, "m.py", ranges=True)
    assert data["symbols"] == [
        {
            "name": "cached",
            "kind": "Function",
            "line": 3,
            "character": 4,
            "endLine": 4,
            "startLine": 2,
            "detail": "(x: int) -> int",
        },
        {"name": "LIMIT", "kind": "Constant", "line": 6, "character": 0},
        {
            "name": "Box",
            "kind": "Class",
            "line": 8,
            "character": 6,
            "endLine": 12,
            "children": [
                {"name": "size", "kind": "Variable", "line": 9, "character": 4, "detail": "int"},
                {
                    "name": "grow",
                    "kind": "Method",
                    "line": 11,
                    "character": 8,
                    "endLine": 12,
                    "detail": "(self)",
                },
            ],
        },
    ]
    cached = full["symbols"][0]
    assert cached["range"] == {"startLine": 2, "startCharacter": 0, "endLine": 4, "endCharacter": 12}
    assert cached["selectionRange"] == {"startLine": 3, "startCharacter": 4, "endLine": 3, "endCharacter": 10}
    assert cached["text"] == "cached"


async def test_every_symbol_can_be_renamed_from_the_outline_alone(mcp: Any, ws_path: Path) -> None:
    small, large = real_files(ws_path)
    async with mcp(ws_path) as client:
        picked = [(small, s) for s in flat((await outline(client, small))["symbols"])]
        assert len(picked) >= 20
        big = flat((await outline(client, large))["symbols"])
        assert len(big) >= 100
        picked += [(large, s) for s in big[:: len(big) // 25]]  # a sample spread over the whole file
        for path, symbol in picked:
            result = await client.call_tool(
                "find_references",
                {"pathInProject": path, "line": symbol["line"], "character": symbol["character"]},
            )
            assert not result.is_error, result.content[0].text
            found = payload(result)
            where = f"{path}: {symbol['name']} at {symbol['line']}:{symbol['character']}"
            assert found["symbol"] == symbol["name"], where
            declared = [r for r in flat_references(found) if r.get("isDeclaration") and r["path"] == path]
            assert any(
                r["line"] == symbol["line"] and r["character"] == symbol["character"] for r in declared
            ), f"{where}: declarations {declared}"
        method = next(s for _, s in picked if s["kind"] == "Method" and s["name"] == "check_cancelled")
        result = await client.call_tool(
            "refactor_code_at_location",
            {
                "pathInProject": small,
                "line": method["line"],
                "character": method["character"],
                "refactorType": "rename",
                "options": {"newName": "raise_if_cancelled"},
                "preview": True,
            },
        )
        assert not result.is_error, result.content[0].text
        diff = data(result)["diff"]
        assert "+    def raise_if_cancelled(self) -> None:" in diff and "-    def check_cancelled" in diff

"""Code intelligence on real code: the ``rich`` package from PyPI (downloaded by the test, never committed).

References of a function rich uses across many modules are compared with a grep of its name; the
rename then changes every use and rich still imports and renders.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .support.codeprojects import rich_source
from .support.results import flat_references, payload

pytestmark = pytest.mark.anyio


def code_uses(root: Path, name: str) -> set[tuple[str, int, int]]:
    word = re.compile(rf"(?<![\w.]){re.escape(name)}\b")
    hits = set()
    for path in sorted(root.rglob("*.py")):
        in_doc = False
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            if line.count('"""') % 2 == 1:
                in_doc = not in_doc
                continue
            if in_doc:
                continue
            code = line.split("#", 1)[0]
            for m in word.finditer(code):
                if line.startswith((" ", "\t")) and code[: m.start()].strip() == "def":
                    continue  # a method of the same name (Text.cell_len) is another symbol
                hits.add((path.relative_to(root).as_posix(), i, m.start()))
    return hits


async def test_references_and_rename_on_rich(mcp: Any, tmp_path: Path) -> None:
    package, name = rich_source(tmp_path)
    if name != "rich":
        pytest.skip("PyPI could not be reached for rich")
    cells = (package / "cells.py").read_text().splitlines()
    line = next(i for i, ln in enumerate(cells) if ln.startswith("def cell_len("))
    expected = code_uses(tmp_path, "cell_len")
    files = {p for p, _, _ in expected}
    assert len(files) >= 10
    async with mcp(tmp_path) as client:
        result = await client.call_tool(
            "find_references", {"pathInProject": "rich/cells.py", "line": line, "character": 4}
        )
        assert not result.is_error, result.content[0].text
        out = payload(result)
        assert "partial" not in out
        found = {(r["path"], r["line"], r["character"]) for r in flat_references(out)}
        assert found == expected
        result = await client.call_tool(
            "refactor_code_at_location",
            {
                "pathInProject": "rich/cells.py",
                "line": line,
                "character": 4,
                "refactorType": "rename",
                "options": {"newName": "cell_width"},
            },
        )
        assert not result.is_error, result.content[0].text
        assert set(payload(result)["changedFiles"]) == files
    assert not code_uses(tmp_path, "cell_len")
    check = (
        "import io, rich.console, rich.table, rich.cells as c; con = rich.console.Console(file=io.StringIO(), width=40); "
        "t = rich.table.Table('a', 'b'); t.add_row('x', '\u4e2d\u6587'); con.print(t); "
        "print(c.cell_width('\u4e2d\u6587'), len(con.file.getvalue().splitlines()))"
    )
    done = subprocess.run(
        [sys.executable, "-c", check],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["4", "5"]

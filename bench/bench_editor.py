"""Benchmark of the editor, debug and action tools, through an in-process MCP client session.

Each figure is a median of many calls, printed with a floor measured in the same run and the ratio
to it, so the cost of the editor model is visible:

- get_open_in_editor_file_text vs get_file_text_by_path on the same file (floor: the plain read tool)
- replace_selected_text vs replace_specific_text making the same one-line change (floor: the file tool)
- replace_file_content_at_position on a file with 50 breakpoints and a selection vs on a file the editor
  does not track (the cost of making breakpoints follow their lines)
- run_configuration of a one-step task vs start_job of the same command (floor: the job tool)
- list_available_actions on a Python project with tasks and a git remote (no floor: absolute)

Run: ``python bench/bench_editor.py`` (about 20 seconds).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from mcp_server_ide.server import build_server
from mcp_server_ide.workspace import Workspace

N = 60


async def timed(client: Any, name: str, args: dict[str, Any] | Any, n: int = N) -> float:
    samples = []
    for i in range(n):
        arguments = args(i) if callable(args) else args
        start = time.perf_counter()
        result = await client.call_tool(name, arguments)
        samples.append(time.perf_counter() - start)
        assert not result.is_error, (name, result.content[0].text)
    return statistics.median(samples)


def show(name: str, value: float, floor: float | None, floor_name: str = "") -> None:
    ratio = f"ratio {value / floor:5.2f} vs {floor_name} ({floor * 1000:.2f} ms)" if floor else ""
    print(f"{name:<58} {value * 1000:8.2f} ms  {ratio}", flush=True)


async def main() -> None:
    os.environ.setdefault("XDG_STATE_HOME", tempfile.mkdtemp())
    root = Path(tempfile.mkdtemp()) / "ws"
    root.mkdir()
    body = "".join(f"line {i} of the file\n" for i in range(2000))
    (root / "a.txt").write_text(body)
    (root / "b.txt").write_text(body)
    (root / "tracked.txt").write_text(body)
    (root / "untracked.txt").write_text(body)
    (root / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0"\n')
    (root / "tests").mkdir()
    (root / "tests/test_x.py").write_text("def test_x():\n    pass\n")
    (root / ".vscode").mkdir()
    (root / ".vscode/tasks.json").write_text(
        '{"version": "2.0.0", "tasks": [{"label": "hello", "type": "shell", "command": "true"}]}'
    )
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "remote", "add", "origin", str(root)], cwd=root, check=True)
    ws = Workspace.open(root)
    server, _ = build_server(lambda ctx: ws)
    async with Client(server) as client:
        await client.call_tool("open_file_in_editor", {"pathInProject": "a.txt"})
        text = await timed(client, "get_open_in_editor_file_text", {})
        floor = await timed(client, "get_file_text_by_path", {"pathInProject": "a.txt"})
        show("get_open_in_editor_file_text (2,000 lines)", text, floor, "get_file_text_by_path")

        def select_and_replace(i: int) -> dict[str, Any]:
            return {"text": f"line 1000 of the file {i}"}

        await client.call_tool(
            "open_file_in_editor", {"pathInProject": "a.txt", "startLine": 1001, "endLine": 1001}
        )
        samples = []
        for i in range(N):
            start = time.perf_counter()
            await client.call_tool(
                "open_file_in_editor", {"pathInProject": "a.txt", "startLine": 1001, "endLine": 1001}
            )
            await client.call_tool("replace_selected_text", select_and_replace(i))
            samples.append(time.perf_counter() - start)
        edit = statistics.median(samples)

        def replace_text(i: int) -> dict[str, Any]:
            old = "line 1000 of the file" + (f" {i - 1}" if i else "")
            return {
                "pathInProject": "b.txt",
                "searchText": old + "\n",
                "replaceText": f"line 1000 of the file {i}\n",
            }

        floor = await timed(client, "replace_specific_text", replace_text)
        show("open_file_in_editor + replace_selected_text", edit, floor, "replace_specific_text")

        for line in range(1, 1000, 20):
            await client.call_tool(
                "toggle_debugger_breakpoint", {"pathInProject": "tracked.txt", "line": line + 500}
            )
        await client.call_tool("open_file_in_editor", {"pathInProject": "tracked.txt", "startLine": 1500})
        await client.call_tool("open_file_in_editor", {"pathInProject": "a.txt"})

        def insert(path: str) -> Any:
            return lambda i: {
                "pathInProject": path,
                "startLine": 10,
                "endLine": 9,
                "content": f"inserted {i}\n",
            }

        tracked = await timed(client, "replace_file_content_at_position", insert("tracked.txt"))
        floor = await timed(client, "replace_file_content_at_position", insert("untracked.txt"))
        show("insert a line above 50 breakpoints + a selection", tracked, floor, "same edit, untracked file")

        run = await timed(client, "run_configuration", {"configName": "hello"}, n=15)
        job = await timed(client, "start_job", {"command": "true"}, n=15)
        show("run_configuration (one-step task)", run, job, "start_job")

        listed = await timed(client, "list_available_actions", {}, n=10)
        show("list_available_actions (python + tasks + git remote)", listed, None)
    ws.close()


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    anyio.run(main)

"""How big a typical answer of each tool category is, as an assistant receives it.

Runs a few representative calls per category over stdio (the official ``mcp`` client) against a
copy of this repository's ``src/`` in a fresh git repository, and prints the bytes of each
``tools/call`` result as compact JSON (what travels and what a model reads). The README's tool
table quotes these figures; run ``python bench/bench_answers.py`` to see them on this machine.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from common import params

REPO = Path(__file__).resolve().parent.parent

CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("Files", "get_file_text_by_path", {"pathInProject": "src/mcp_server_ide/call.py"}),
    ("Files", "list_files_in_folder", {"pathInProject": "src/mcp_server_ide/surface"}),
    ("Files", "create_new_file_with_text", {"pathInProject": "notes/todo.txt", "text": "first draft\n"}),
    (
        "Files",
        "replace_specific_text",
        {"pathInProject": "notes/todo.txt", "searchText": "first", "replaceText": "second"},
    ),
    ("Search", "search_in_files_content", {"searchText": "def current"}),
    ("Search", "find_files_by_name_substring", {"nameSubstring": "call"}),
    ("Code analysis", "get_symbols_in_file", {"pathInProject": "src/mcp_server_ide/call.py"}),
    ("Code analysis", "get_file_problems", {"pathInProject": "src/mcp_server_ide/call.py"}),
    ("Terminal", "run_command_on_background", {"command": "echo hello"}),
    ("Terminal", "get_terminal_info", {}),
    ("Git", "get_project_vcs_status", {}),
    ("Git", "get_commit_details", {"commitHash": "HEAD"}),
    ("Git", "get_file_history", {"pathInProject": "src/mcp_server_ide/call.py"}),
    ("Project", "get_project_modules", {}),
    ("Debug and run", "get_run_configurations", {}),
    ("Debugger", "toggle_debugger_breakpoint", {"pathInProject": "demo_debug.py", "line": 5}),
    ("Debugger", "start_debug_session", {"configName": "Demo", "waitMs": 60000}),
    ("Debugger", "get_stack_trace", {}),
    ("Debugger", "get_variables", {}),
    ("Debugger", "evaluate_expression", {"expression": "total / len(xs)"}),
    ("Debugger", "debug_step", {"kind": "over"}),
    ("Debugger", "debug_continue", {"waitMs": 60000}),
    ("Actions", "list_available_actions", {}),
    ("Editor", "get_editor_state", {}),
    ("Change journal", "list_recent_changes", {}),
]


def workspace(into: Path) -> Path:
    root = into / "ws"
    shutil.copytree(REPO / "src", root / "src", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    git = ["git", "-c", "user.name=Bench", "-c", "user.email=bench@example.com"]
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "Initial import"], cwd=root, check=True)
    lazy = root / "src/mcp_server_ide/lazy.py"
    lazy.write_text(lazy.read_text().replace('"""', '"""Lazy loading. ', 1))
    subprocess.run(
        [*git, "commit", "-qam", "Say what lazy.py is for"], cwd=root, check=True
    )  # a typical commit
    (root / "demo_debug.py").write_text(DEMO)
    (root / ".vscode").mkdir()
    (root / ".vscode" / "launch.json").write_text(
        '{"configurations": [{"name": "Demo", "type": "debugpy", "request": "launch", "program": "demo_debug.py"}]}'
    )
    return root


DEMO = """\
def average(xs):
    total = 0
    for x in xs:
        total += x
    count = len(xs) - 1
    return total / count


print(average([2, 4, 6]))
"""


async def measure(root: Path) -> list[tuple[str, str, int]]:
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    server = params([sys.executable, "-m", "mcp_server_ide", "--workspace", str(root)])
    out: list[tuple[str, str, int]] = []
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listing = await session.list_tools()
        size = len(
            json.dumps(
                listing.model_dump(by_alias=True, exclude_none=True, mode="json"), separators=(",", ":")
            )
        )
        out.append(("(listing)", f"tools/list ({len(listing.tools)} tools)", size))
        for category, tool, args in CALLS:
            result = await session.call_tool(tool, args)
            if result.is_error:
                raise SystemExit(f"{tool} failed: {result.content[0].text}")
            dumped = result.model_dump(by_alias=True, exclude_none=True, mode="json")
            dumped.pop("_meta", None)  # the server's stamp, the same on every result
            out.append((category, tool, len(json.dumps(dumped, separators=(",", ":"), ensure_ascii=False))))
    return out


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        rows = asyncio.run(measure(workspace(Path(tmp))))
    width = max(len(t) for _, t, _ in rows)
    for category, tool, size in rows:
        print(f"{category:15} {tool:{width}} {size:7,} B")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

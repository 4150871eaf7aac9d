"""File and search benchmark: this server against @modelcontextprotocol/server-filesystem and the floors.

One run, one workspace (a git repository of a few hundred real files: installed Python packages copied
into a temporary folder), every server over stdio through the SDK's ``Client``:

- read a ~47 KB file: our ``get_file_text_by_path`` vs server-filesystem's ``read_text_file``  (target <= 0.7x)
- ``find_files_by_name_substring`` vs ``rg --files`` (a process) + the floor's no-op call          (target <= 1.5x)
- ``search_in_files_content`` vs ``rg -n`` (a process) + the floor's no-op call                     (target <= 1.5x)
- listing a folder: ``list_files_in_folder`` / ``project_fs_list``                               (target <= 1.5 ms)
- cold start to the first tool result                                                             (target <= 0.6 s)

The floor is a bare SDK ``MCPServer`` with one ``echo`` tool, measured in the same run. Calls are
interleaved (one of each per round, in a new shuffled order each round, process floors included) so
machine noise and cold caches hit every operation alike; medians are printed.

    python bench/bench_files.py [--rounds 60] [--cold 7] [--workspace DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from common import FLOOR_SERVER, interleave, ms, params, process_op, timed

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

MODE = os.environ.get(
    "BENCH_PROTOCOL", "legacy"
)  # VS Code speaks 2025-11-25 (initialize): measure that era by default
FS_VERSION = "2026.8.31"
LIBRARIES = ("pydantic", "starlette", "mcp", "httpx", "anyio")
READ_TARGET = 47 * 1024


def make_workspace(folder: Path) -> Path:
    """A git repository of real source files (installed packages), with a .gitignore."""
    import importlib.util

    root = folder / "repo"
    root.mkdir(parents=True)
    for name in LIBRARIES:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            continue
        src = Path(next(iter(spec.submodule_search_locations)))
        shutil.copytree(src, root / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.so"))
    (root / ".gitignore").write_text("__pycache__/\n*.pyc\nbuild/\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b"}
    env["GIT_COMMITTER_EMAIL"] = "b@b"
    subprocess.run(["git", "init", "-q", "."], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "bench"], cwd=root, check=True, env=env)
    return root


def pick_file(root: Path) -> Path:
    """The .py file whose size is closest to 47 KB."""
    files = [p for p in root.rglob("*.py") if ".git" not in p.parts]
    return min(files, key=lambda p: abs(p.stat().st_size - READ_TARGET))


def server_filesystem_command(root: Path) -> list[str]:
    from tests.support.npm import node, npm_package

    package = npm_package("@modelcontextprotocol/server-filesystem", FS_VERSION)
    return [str(node()), str(package / "dist" / "index.js"), str(root)]


def rg_binary() -> str:
    from mcp_server_ide.engines.search import rg_binary

    return rg_binary()


async def warm(
    rounds: int, root: Path, ours: list[str], theirs: list[str], floor: list[str]
) -> dict[str, float]:
    from mcp import Client

    target = pick_file(root)
    rel = target.relative_to(root).as_posix()
    rg = rg_binary()
    times: dict[str, list[float]] = {}

    def add(key: str, value: float) -> None:
        times.setdefault(key, []).append(value)

    async with AsyncExitStack() as stack:
        our = await stack.enter_async_context(Client(params(ours), mode=MODE))
        fs = await stack.enter_async_context(Client(params(theirs), mode=MODE))
        bare = await stack.enter_async_context(Client(params(floor), mode=MODE))
        print(f"workspace: {root} ({sum(1 for _ in root.rglob('*') if '.git' not in _.parts)} entries)")
        print(f"read target: {rel} ({target.stat().st_size} bytes)")
        ops: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
            ("ours.read", lambda: our.call_tool("get_file_text_by_path", {"pathInProject": rel})),
            ("fs.read", lambda: fs.call_tool("read_text_file", {"path": str(target)})),
            ("floor.echo", lambda: bare.call_tool("echo", {"text": "x"})),
            ("ours.find", lambda: our.call_tool("find_files_by_name_substring", {"nameSubstring": "schema"})),
            ("ours.search", lambda: our.call_tool("search_in_files_content", {"searchText": "def validate"})),
            ("ours.list", lambda: our.call_tool("list_files_in_folder", {"pathInProject": "pydantic"})),
            ("ours.project_fs_list", lambda: our.call_tool("project_fs_list", {"dir": "pydantic"})),
            ("fs.list", lambda: fs.call_tool("list_directory", {"path": str(root / "pydantic")})),
            (
                "fs.search_files",
                lambda: fs.call_tool("search_files", {"path": str(root), "pattern": "*schema*"}),
            ),
        ]

        ops.append(("rg.files", lambda: process_op([rg, "--files"], root)))
        ops.append(("rg.search", lambda: process_op([rg, "-n", "def validate"], root)))
        for _, op in ops:  # warm-up: imports, caches, JIT
            for _ in range(3):
                await timed(op)
        await interleave(ops, rounds, add)
    return {key: ms(values) for key, values in times.items()}


async def cold(
    runs: int, root: Path, ours: list[str], theirs: list[str], floor: list[str]
) -> dict[str, float]:
    """Spawn to the first tool result (initialize + one call), each server started afresh."""
    from mcp import Client

    first_calls = {
        "ours": (ours, "list_files_in_folder", {"pathInProject": "/"}),
        "fs": (theirs, "list_directory", {"path": str(root)}),
        "floor": (floor, "echo", {"text": "x"}),
    }
    times: dict[str, list[float]] = {}
    for _ in range(runs):
        for key, (argv, tool, args) in first_calls.items():
            start = time.perf_counter()
            async with Client(params(argv), mode=MODE) as client:
                result = await client.call_tool(tool, args)
                elapsed = time.perf_counter() - start
            assert not result.is_error, result.content[0].text
            times.setdefault(key, []).append(elapsed)
    return {key: ms(values) for key, values in times.items()}


def report(w: dict[str, float], c: dict[str, float]) -> list[tuple[str, float, str, bool]]:
    floor = w["floor.echo"]
    rows = [
        (
            "read 47 KB: ours / server-filesystem",
            w["ours.read"] / w["fs.read"],
            "<= 0.70",
            w["ours.read"] / w["fs.read"] <= 0.7,
        ),
        (
            "find by name: ours / (rg --files + no-op)",
            w["ours.find"] / (w["rg.files"] + floor),
            "<= 1.50",
            w["ours.find"] / (w["rg.files"] + floor) <= 1.5,
        ),
        (
            "search content: ours / (rg -n + no-op)",
            w["ours.search"] / (w["rg.search"] + floor),
            "<= 1.50",
            w["ours.search"] / (w["rg.search"] + floor) <= 1.5,
        ),
        ("list folder (ms, list_files_in_folder)", w["ours.list"], "<= 1.5 ms", w["ours.list"] <= 1.5),
        ("cold start to first result (s)", c["ours"] / 1000, "<= 0.60 s", c["ours"] <= 600),
    ]
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--cold", type=int, default=7)
    parser.add_argument(
        "--workspace", type=Path, help="an existing repository to use instead of a generated one"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-files-") as tmp:
        folder = Path(tmp)
        root = args.workspace.resolve() if args.workspace else make_workspace(folder)
        floor_script = folder / "floor_server.py"
        floor_script.write_text(FLOOR_SERVER)
        ours = [sys.executable, "-m", "mcp_server_ide", "--workspace", str(root)]
        theirs = server_filesystem_command(root)
        floor = [sys.executable, str(floor_script)]
        w = anyio.run(warm, args.rounds, root, ours, theirs, floor)
        c = anyio.run(cold, args.cold, root, ours, theirs, floor)
    print(f"\nmedians over {args.rounds} interleaved rounds (ms):")
    for key in sorted(w):
        print(f"  {key:<24} {w[key]:8.2f}")
    print(f"cold start to first tool result, median of {args.cold} (ms):")
    for key in sorted(c):
        print(f"  {key:<24} {c[key]:8.1f}")
    print("\nratios:")
    ok = True
    for name, value, target, passed in report(w, c):
        ok &= passed
        print(f"  {name:<44} {value:7.2f}   target {target:<10} {'ok' if passed else 'MISSED'}")
    print(
        f"  (project_fs_list of the same folder: {w['ours.project_fs_list']:.2f} ms; no-op floor {w['floor.echo']:.2f} ms)"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

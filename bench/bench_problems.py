"""Benchmark of ``get_project_problems`` on a 500-file Python project, through the server over stdio,
against the ``basedpyright --outputjson`` CLI alone, measured in the same run (interleaved rounds).

Every round first changes one module (a comment line: a new size and mtime), so the server's cache
misses and it runs its checkers again, as after an edit; the CLI always runs from scratch. Rows:

- ``get_project_problems`` (every source: basedpyright and ruff, in parallel) / the CLI: target 1.2
- ``get_project_problems(sources=["basedpyright"])`` / the CLI (context)
- the answer from the cache while the tree is unchanged (context)

Run: ``python bench/bench_problems.py [--rounds 5] [--files 500]`` (a few minutes on two cores).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from common import answer, interleave, params, process_op

TARGET = 1.2


def make_project(root: Path, files: int) -> None:
    """``files`` modules in 10 packages, module i using module i // 2 (a class, a function); 3 have a
    type error, and a few have lint findings."""
    for i in range(files):
        pkg = root / "app" / f"part{i % 10}"
        pkg.mkdir(parents=True, exist_ok=True)
        (pkg / "__init__.py").touch()
        j = i // 2  # imports form a tree: chains stay short (basedpyright stops at 256 deep)
        head = f"from app.part{j % 10}.mod{j:03d} import Item{j}, total_{j}\n" if i else ""
        convert = (
            f"\n\ndef convert_{i}(other: Item{j}) -> Item{i}:\n"
            f"    return Item{i}(name=other.name, size=other.size + total_{j}([other]))\n"
            if i
            else ""
        )
        broken = "\n\ndef broken() -> int:\n    return 'not an int'\n" if i in (7, 250, 499) else ""
        unused = "import os\n" if i % 50 == 0 else ""
        (pkg / f"mod{i:03d}.py").write_text(
            f'"""Module {i}."""\n\nfrom __future__ import annotations\n\n{unused}from dataclasses import dataclass\n\n'
            f"{head}\n\n"
            f"@dataclass\nclass Item{i}:\n    name: str = 'item{i}'\n    size: int = {i}\n\n"
            f"    def scaled(self, factor: float) -> float:\n        return self.size * factor\n\n\n"
            f"def total_{i}(items: list[Item{i}]) -> int:\n    return sum(item.size for item in items)\n"
            f"\n\ndef names_{i}(items: list[Item{i}]) -> list[str]:\n    return [item.name.upper() for item in items]\n"
            + convert
            + broken
        )


async def measure(root: Path, rounds: int) -> dict[str, list[float]]:
    from mcp import Client

    cli = [sys.executable, "-m", "basedpyright", "--outputjson", "-p", str(root)]
    times: dict[str, list[float]] = {}
    edited = root / "app" / "part3" / "mod003.py"
    original = edited.read_text()
    counter = [0]

    def edit() -> None:
        counter[0] += 1
        edited.write_text(original + f"# edit {counter[0]}\n")

    server = params([sys.executable, "-m", "mcp_server_ide", "--workspace", str(root)], cwd=root)
    async with Client(server) as session:

        async def tool(args: dict[str, Any], fresh: bool = True) -> Any:
            if fresh:
                edit()
            result = await session.call_tool("get_project_problems", args)
            if result.is_error:
                raise RuntimeError(result.content[0].text)
            return result

        async def cli_op() -> None:
            edit()
            await process_op(cli, root)

        first = await tool({})  # warm: imports, the first run
        found = answer(first)
        print(f"first answer: { ({k: found.get(k) for k in ('counts', 'bySource', 'ran')}) }", flush=True)

        async def all_sources() -> Any:
            return await tool({})

        async def only_basedpyright() -> Any:
            return await tool({"sources": ["basedpyright"]})

        async def cached() -> Any:
            return await tool({}, fresh=False)

        ops = [("cli", cli_op), ("ours.all", all_sources), ("ours.basedpyright", only_basedpyright)]
        await interleave(ops, rounds, lambda key, s: times.setdefault(key, []).append(s))
        await cached()  # the last round's edit: this run sees it; the next calls find the tree unchanged
        for _ in range(3):
            start = time.perf_counter()
            await cached()
            times.setdefault("ours.cached", []).append(time.perf_counter() - start)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--files", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-problems-") as tmp:
        root = Path(tmp) / "proj"
        make_project(root, args.files)
        os.environ.setdefault("MCP_IDE_PROBLEMS_WAIT", "600")
        times = anyio.run(measure, root, args.rounds)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"rounds: {args.rounds}; {args.files} Python files; medians in s")
    print(f"  basedpyright --outputjson (CLI alone)            {med['cli']:7.2f}")
    print(f"  get_project_problems (basedpyright + ruff)       {med['ours.all']:7.2f}")
    print(f"  get_project_problems(sources=[basedpyright])     {med['ours.basedpyright']:7.2f}")
    print(f"  get_project_problems, tree unchanged (cache)     {med['ours.cached']:7.3f}")
    ratio = med["ours.all"] / med["cli"]
    only = med["ours.basedpyright"] / med["cli"]
    print(
        f"  {'get_project_problems / basedpyright CLI':<48} {ratio:5.2f}x  target {TARGET}  ({'ok' if ratio <= TARGET else 'OVER'})"
    )
    print(f"  {'basedpyright-only call / basedpyright CLI':<48} {only:5.2f}x  (context)")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())

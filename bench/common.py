"""What the benchmarks share: the SDK's no-op floor server, stdio parameters, timing helpers.

Run a benchmark as ``python bench/bench_NAME.py``: this folder is then on ``sys.path``.
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

FLOOR_SERVER = """
from mcp.server import MCPServer

server = MCPServer("floor")


@server.tool()
def echo(text: str) -> str:
    return text


server.run()
"""
"""The floor: a bare ``MCPServer`` with one no-op tool, over stdio (write it to a file and run it)."""


def answer(result: Any) -> Any:
    """A tool result's data: the JSON of its one text block (results carry no structuredContent)."""
    import json

    text = result.content[0].text if result.content else ""
    return json.loads(text) if text.startswith(("{", "[")) else text


def params(argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> Any:
    """``StdioServerParameters`` for a server command (the caller's environment unless ``env``)."""
    from mcp import StdioServerParameters

    return StdioServerParameters(
        command=argv[0],
        args=argv[1:],
        env=dict(env if env is not None else os.environ),
        cwd=str(cwd) if cwd else None,
    )


async def timed(fn: Callable[[], Awaitable[Any]]) -> float:
    """Seconds one tool call takes; a failed call stops the benchmark."""
    start = time.perf_counter()
    result = await fn()
    elapsed = time.perf_counter() - start
    if getattr(result, "is_error", False):
        raise RuntimeError(f"tool call failed: {result.content[0].text}")
    return elapsed


ORDER_SEED = 20261129


async def interleave(
    ops: list[tuple[str, Callable[[], Awaitable[Any]]]], rounds: int, record: Callable[[str, float], None]
) -> None:
    """Run every operation once per round, in a new (seeded) order each round, recording its seconds.

    Interleaving makes machine noise hit every side alike; shuffling makes whatever runs right after a
    process spawn (cold CPU caches) or a heavy call a different operation each round, not always the
    same one."""
    order = random.Random(ORDER_SEED)
    ops = list(ops)
    for _ in range(rounds):
        order.shuffle(ops)
        for key, op in ops:
            record(key, await timed(op))


async def process_op(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
    """A process run as an operation for :func:`interleave` (its time is spawn to exit)."""
    run_process(argv, cwd, env)


def run_process(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    """Seconds a process takes from spawn to exit (the floor of tools that run one)."""
    start = time.perf_counter()
    subprocess.run(
        argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    return time.perf_counter() - start


def ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def process_children() -> dict[int, list[int]]:
    """Every process's children (parent pid -> pids), from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    return children

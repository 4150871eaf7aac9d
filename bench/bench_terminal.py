"""Command benchmark: ``run_command_on_background("true")`` against its floor.

One run, every server over stdio through the SDK's ``Client``:

- ours: ``python -m mcp_server_ide --workspace DIR`` and ``run_command_on_background({"command": "true"})``
  (a contained run: own session, scrubbed environment, head+tail capture, leftover sweep)
- floor: spawning ``/bin/true`` from Python (``subprocess.run``) plus the SDK's no-op call (a bare SDK
  ``MCPServer`` with one ``echo`` tool, measured in the same run)                             (target <= 2.0x)

Also printed for context: a job round trip (``start_job("true")`` + ``get_job_output(waitMs)``) and a
terminal round trip (``execute_terminal_command("true", waitMs)``). Calls are interleaved (one of each
per round) so machine noise hits every side alike; medians are printed.

    python bench/bench_terminal.py [--rounds 200] [--workspace DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from common import FLOOR_SERVER, ms, params, timed

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))


TARGET = 2.0


def spawn_true() -> float:
    start = time.perf_counter()
    subprocess.run(["/bin/true"], stdin=subprocess.DEVNULL, capture_output=True)
    return time.perf_counter() - start


async def measure(rounds: int, root: Path, floor_script: Path) -> dict[str, float]:
    from mcp import Client

    ours = [sys.executable, "-m", "mcp_server_ide", "--workspace", str(root)]
    floor = [sys.executable, str(floor_script)]
    times: dict[str, list[float]] = {}

    def add(key: str, value: float) -> None:
        times.setdefault(key, []).append(value)

    async with AsyncExitStack() as stack:
        our = await stack.enter_async_context(Client(params(ours, cwd=root)))
        bare = await stack.enter_async_context(Client(params(floor, cwd=root)))

        async def job_round_trip() -> Any:
            started = await our.call_tool("start_job", {"command": "true"})
            job_id = json.loads(started.content[0].text)["jobId"]
            return await our.call_tool("get_job_output", {"jobId": job_id, "waitMs": 5000})

        terminal: dict[str, str] = {}

        async def terminal_round_trip() -> Any:
            args: dict[str, Any] = {"command": "true", "waitMs": 5000}
            if terminal:
                args["terminalId"] = terminal["id"]
            result = await our.call_tool("execute_terminal_command", args)
            terminal["id"] = json.loads(result.content[0].text)["terminalId"]
            return result

        ops: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
            ("ours.run_true", lambda: our.call_tool("run_command_on_background", {"command": "true"})),
            ("floor.echo", lambda: bare.call_tool("echo", {"text": "x"})),
            ("ours.job_true", job_round_trip),
            ("ours.terminal_true", terminal_round_trip),
        ]
        for _, op in ops:  # warm-up: imports, caches, worker threads
            for _ in range(5):
                await timed(op)
        for _ in range(5):
            spawn_true()
        for _ in range(rounds):
            for key, op in ops:
                add(key, await timed(op))
            add("spawn.true", spawn_true())
    return {key: ms(values) for key, values in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--workspace", type=Path, help="workspace folder (default: a new temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-terminal-") as tmp:
        root = args.workspace or Path(tmp) / "ws"
        root.mkdir(parents=True, exist_ok=True)
        floor_script = Path(tmp) / "floor_server.py"
        floor_script.write_text(FLOOR_SERVER)
        w = anyio.run(measure, args.rounds, root, floor_script)
    floor = w["spawn.true"] + w["floor.echo"]
    ratio = w["ours.run_true"] / floor
    print(f"rounds: {args.rounds}; medians in ms")
    print(f"  spawn /bin/true (subprocess.run)        {w['spawn.true']:7.3f}")
    print(f"  floor no-op call (SDK echo over stdio)  {w['floor.echo']:7.3f}")
    print(f"  floor total                             {floor:7.3f}")
    print(f"  ours run_command_on_background('true')  {w['ours.run_true']:7.3f}")
    print(f"  ours start_job + get_job_output         {w['ours.job_true']:7.3f}  (context)")
    print(f"  ours execute_terminal_command(waitMs)   {w['ours.terminal_true']:7.3f}  (context)")
    ok = ratio <= TARGET
    print(
        f"run_command_on_background('true') / (spawn /bin/true + no-op): {ratio:.2f}x  target <= {TARGET:.1f}x  {'PASS' if ok else 'FAIL'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

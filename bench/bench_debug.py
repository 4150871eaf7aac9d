"""Debugger benchmark: ``start_debug_session`` to the first stop, and a ``debug_step`` round trip.

Three sides, each stopping a Python program at a breakpoint and stepping over one line, reading
what an assistant needs at each stop (location and the frame's locals), measured in the same run
with their order shuffled every round so machine noise hits every side alike:

- ours: ``python -m mcp_server_ide --workspace DIR`` over stdio; ``start_debug_session`` (answers
  with the stop and the locals), ``debug_step`` (the same), ``stop_debug_session``.
- floor: a bare DAP client (a process of its own, timed inside) driving debugpy (``python -m debugpy.adapter``) with the
  same requests the engine sends: initialize, launch (the program started on ``runInTerminal``),
  setBreakpoints, setExceptionBreakpoints, configurationDone, the stop, stackTrace, scopes,
  variables; ``next`` and the same three reads; disconnect.                   (target: ours <= 1.3x)
- mcp-debugger: ``@debugmcp/mcp-debugger`` (npm, on node 22, installed into the test cache) over
  stdio through its tools: create_debug_session, set_breakpoint, start_debugging (it answers once
  paused), get_local_variables; step_over, get_local_variables; close_debug_session.
                                                                    (target: ours faster, fewer bytes)

Every side runs with bytecode caches on (``PYTHONDONTWRITEBYTECODE`` is dropped for all alike).
Bytes per step are the tool results' text an assistant reads (for mcp-debugger, step_over plus the
get_local_variables it needs for the locals ours returns with the step; the floor's are DAP bytes).

    python bench/bench_debug.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import anyio
from common import ORDER_SEED, params

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO))

FLOOR_TARGET = 1.3
MCP_DEBUGGER = ("@debugmcp/mcp-debugger", "0.24.2")

PROGRAM = """\
def average(xs):
    total = 0
    for x in xs:
        total += x
    count = len(xs) - 1
    return total / count


if __name__ == "__main__":
    print(average([2, 4, 6]))
"""
LINE = 5


def workspace(into: Path) -> Path:
    root = into / "ws"
    (root / ".vscode").mkdir(parents=True)
    (root / "calc.py").write_text(PROGRAM)
    config = {"name": "Calc", "type": "debugpy", "request": "launch", "program": "${workspaceFolder}/calc.py"}
    config["python"] = sys.executable
    (root / ".vscode" / "launch.json").write_text(json.dumps({"configurations": [config]}))
    return root


def text_of(result: Any) -> str:
    if getattr(result, "is_error", False):
        raise RuntimeError(f"tool call failed: {result.content[0].text}")
    return result.content[0].text if result.content else ""


# -- the floor: a bare DAP client ---------------------------------------------------------------


class Floor:
    """debugpy driven directly over its stdio: the least any client of it can spend."""

    def __init__(self, root: Path) -> None:
        from mcp_server_ide.engines.debug.wire import FrameReader, encode

        self.encode = encode
        self.root = root
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "debugpy.adapter"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.reader = FrameReader(self.proc.stdout)  # type: ignore[arg-type]
        self.seq = 0
        self.cond = threading.Condition()
        self.responses: dict[int, dict[str, Any]] = {}
        self.events: list[dict[str, Any]] = []
        self.program: subprocess.Popen[bytes] | None = None
        self.bytes = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while (message := self.reader.read()) is not None:
            size = len(json.dumps(message, separators=(",", ":")))
            with self.cond:
                self.bytes += size
                if message["type"] == "response":
                    self.responses[message["request_seq"]] = message
                elif message["type"] == "event":
                    self.events.append(message)
                self.cond.notify_all()
            if message["type"] == "request" and message["command"] == "runInTerminal":
                args = message["arguments"]
                env = {**os.environ, **{k: v for k, v in (args.get("env") or {}).items() if v is not None}}
                self.program = subprocess.Popen(
                    args["args"], cwd=args.get("cwd"), env=env, stdout=subprocess.DEVNULL
                )
                self._send(
                    {
                        "type": "response",
                        "request_seq": message["seq"],
                        "command": "runInTerminal",
                        "success": True,
                        "body": {"processId": self.program.pid},
                    }
                )

    def _send(self, message: dict[str, Any]) -> int:
        with self.cond:
            self.seq += 1
            message["seq"] = self.seq
            assert self.proc.stdin is not None
            self.proc.stdin.write(self.encode(message))
            self.proc.stdin.flush()
            return self.seq

    def request(self, command: str, arguments: dict[str, Any] | None = None, wait: bool = True) -> Any:
        seq = self._send({"type": "request", "command": command, "arguments": arguments or {}})
        if not wait:
            return seq
        with self.cond:
            self.cond.wait_for(lambda: seq in self.responses, 60)
            return self.responses[seq].get("body") or {}

    def event(self, name: str, count: int = 1) -> None:
        with self.cond:
            self.cond.wait_for(lambda: sum(e["event"] == name for e in self.events) >= count, 60)

    def top(self, thread: int) -> dict[str, Any]:
        frame = self.request("stackTrace", {"threadId": thread, "startFrame": 0, "levels": 1})["stackFrames"][
            0
        ]
        scope = self.request("scopes", {"frameId": frame["id"]})["scopes"][0]
        return self.request("variables", {"variablesReference": scope["variablesReference"]})

    def start(self) -> int:
        self.request(
            "initialize",
            {
                "clientID": "floor",
                "adapterID": "debugpy",
                "pathFormat": "path",
                "linesStartAt1": True,
                "columnsStartAt1": True,
                "supportsRunInTerminalRequest": True,
            },
        )
        launch = self.request(
            "launch",
            {
                "type": "python",
                "request": "launch",
                "program": str(self.root / "calc.py"),
                "cwd": str(self.root),
                "console": "integratedTerminal",
                "justMyCode": True,
                "python": [sys.executable],
            },
            wait=False,
        )
        self.event("initialized")
        self.request(
            "setBreakpoints",
            {"source": {"path": str(self.root / "calc.py")}, "breakpoints": [{"line": LINE}]},
        )
        self.request("setExceptionBreakpoints", {"filters": ["uncaught"]})
        self.request("configurationDone")
        with self.cond:
            self.cond.wait_for(lambda: launch in self.responses, 60)
        self.event("stopped")
        thread = next(e for e in self.events if e["event"] == "stopped")["body"]["threadId"]
        self.top(thread)
        return thread

    def step(self, thread: int) -> int:
        before = self.bytes
        self.request("next", {"threadId": thread})
        self.event("stopped", 2)
        self.top(thread)
        return self.bytes - before

    def close(self) -> None:
        self.request("disconnect", {"terminateDebuggee": True})
        for proc in (self.program, self.proc):
            if proc is not None:
                proc.kill()
                proc.wait()


def floor_round() -> tuple[float, float, int]:
    root = Path(tempfile.mkdtemp(prefix="bench-debug-floor-"))
    (root / "calc.py").write_text(PROGRAM)
    t0 = time.perf_counter()
    floor = Floor(root)
    thread = floor.start()
    t1 = time.perf_counter()
    size = floor.step(thread)
    t2 = time.perf_counter()
    floor.close()
    return t1 - t0, t2 - t1, size


def floor_in_own_process() -> tuple[float, float, int]:
    """:func:`floor_round` in a fresh process of its own (its timings taken inside it), so the bench's
    event loop and MCP clients share no interpreter with the floor."""
    done = subprocess.run(
        [sys.executable, __file__, "--floor-round"], capture_output=True, text=True, check=True, timeout=300
    )
    start, step, size = json.loads(done.stdout.strip().splitlines()[-1])
    return float(start), float(step), int(size)


# -- the MCP sides ------------------------------------------------------------------------------


async def ours_round(client: Any) -> tuple[float, float, int]:
    t0 = time.perf_counter()
    stop = json.loads(
        text_of(await client.call_tool("start_debug_session", {"configName": "Calc", "waitMs": 60000}))
    )
    t1 = time.perf_counter()
    assert stop["state"] == "stopped" and stop["at"] == f"calc.py:{LINE}", stop
    step = text_of(await client.call_tool("debug_step", {"kind": "over"}))
    t2 = time.perf_counter()
    assert json.loads(step)["at"] == f"calc.py:{LINE + 1}", step
    text_of(await client.call_tool("stop_debug_session", {"sessionId": stop["sessionId"]}))
    return t1 - t0, t2 - t1, len(step.encode())


async def theirs_round(client: Any, root: Path) -> tuple[float, float, int]:
    program = str(root / "calc.py")
    t0 = time.perf_counter()
    created = json.loads(
        text_of(
            await client.call_tool(
                "create_debug_session", {"language": "python", "executablePath": sys.executable}
            )
        )
    )
    sid = created["sessionId"]
    text_of(await client.call_tool("set_breakpoint", {"sessionId": sid, "file": program, "line": LINE}))
    started = json.loads(
        text_of(await client.call_tool("start_debugging", {"sessionId": sid, "scriptPath": program}))
    )
    assert started.get("state") == "paused", started
    text_of(await client.call_tool("get_local_variables", {"sessionId": sid}))
    t1 = time.perf_counter()
    step = text_of(await client.call_tool("step_over", {"sessionId": sid}))
    local = text_of(await client.call_tool("get_local_variables", {"sessionId": sid}))
    t2 = time.perf_counter()
    assert json.loads(step)["location"]["line"] == LINE + 1, step
    text_of(await client.call_tool("close_debug_session", {"sessionId": sid}))
    return t1 - t0, t2 - t1, len(step.encode()) + len(local.encode())


async def measure(rounds: int, root: Path, peer: bool) -> dict[str, list[tuple[float, float, int]]]:
    from mcp import Client

    ours_argv = [sys.executable, "-m", "mcp_server_ide", "--workspace", str(root)]
    results: dict[str, list[tuple[float, float, int]]] = {"ours": [], "floor": []}
    async with Client(params(ours_argv, cwd=root)) as ours:
        text_of(
            await ours.call_tool("toggle_debugger_breakpoint", {"pathInProject": "calc.py", "line": LINE})
        )
        theirs_client = None
        if peer:
            from tests.support.npm import node, npm_package

            cli = npm_package(*MCP_DEBUGGER, node_version=22) / "dist" / "cli.mjs"
            theirs_client = Client(params([str(node(22)), str(cli), "stdio"], cwd=root))
            results["mcp-debugger"] = []
        async with theirs_client if theirs_client is not None else _Nothing() as theirs:
            sides = ["ours", "floor", *(["mcp-debugger"] if peer else [])]
            for side in sides:  # warm-up: imports, caches, the peer's first adapter start
                await _one(side, ours, theirs, root)
            order = random.Random(ORDER_SEED)
            for _ in range(rounds):
                order.shuffle(sides)
                for side in sides:
                    results[side].append(await _one(side, ours, theirs, root))
    return results


class _Nothing:
    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *exc: object) -> None:
        return None


async def _one(side: str, ours: Any, theirs: Any, root: Path) -> tuple[float, float, int]:
    if side == "ours":
        return await ours_round(ours)
    if side == "floor":
        return await anyio.to_thread.run_sync(floor_in_own_process)
    return await theirs_round(theirs, root)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-peer", action="store_true", help="without @debugmcp/mcp-debugger")
    parser.add_argument("--floor-round", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.floor_round:
        print(json.dumps(floor_round()))
        return 0
    # Every side's Python reads and writes bytecode caches (our server's children never inherit this
    # variable; the floor and the peer would, and would compile debugpy anew at every start).
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory() as tmp:
        root = workspace(Path(tmp))
        results = anyio.run(measure, args.rounds, root, not args.no_peer)
    med = {k: [statistics.median(x[i] for x in v) for i in range(3)] for k, v in results.items()}
    print(f"rounds: {args.rounds}; load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}; medians")
    print(f"  {'side':14} {'start→stop ms':>14} {'step ms':>9} {'bytes/step':>11}")
    for side, (start, step, size) in med.items():
        print(f"  {side:14} {start * 1000:14.1f} {step * 1000:9.1f} {size:11.0f}")
    ours, floor = med["ours"], med["floor"]
    print(
        f"  ours/floor: start {ours[0] / floor[0]:.2f}x, step {ours[1] / floor[1]:.2f}x "
        f"(target <= {FLOOR_TARGET}x)"
    )
    ok = ours[0] / floor[0] <= FLOOR_TARGET and ours[1] / floor[1] <= FLOOR_TARGET
    if "mcp-debugger" in med:
        them = med["mcp-debugger"]
        print(
            f"  ours/mcp-debugger: start {ours[0] / them[0]:.2f}x, step {ours[1] / them[1]:.2f}x, "
            f"bytes per step {ours[2] / them[2]:.2f}x (target < 1 each)"
        )
        ok = ok and ours[0] < them[0] and ours[1] < them[1] and ours[2] < them[2]
    print("targets met" if ok else "a target is missed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

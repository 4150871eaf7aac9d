"""Benchmark of start-up over stdio: the answer to ``initialize`` and the first calls of a session.

Every figure is measured on fresh server processes spoken to over real pipes, the way a client
launches the server (raw JSON-RPC lines, so no client library sits in the timing). Each round runs
every side once, one after the other (noise hits every side alike); the medians are printed with
their target and ratio (< 1.00 is within target), then the ratios between sides.

- time to the ``initialize`` answer: this server (its kept answer, doors/handshake.py), this server
  with the handshake off (``MCP_IDE_FAST_HANDSHAKE=0``: the SDK answers), and the SDK's floor
  server (bench/common.py), same run; target 0.25 s
- the first ``get_symbols_in_file`` of a 1,800-line module, with and without warming
  (``MCP_IDE_WARM=0``), target 100 ms, beside a warm outline of the same file (the session's
  second); and the first ``find_references`` (basedpyright) right after it, both ways
- the first other call (``list_files_in_folder``) and the ``initialize`` answer, with and without
  warming: warming must slow neither

A session's first tool call comes after the client has listed the tools and the model has read
them and written its first turn: the outline and references are called ``PAUSE`` seconds after the
tools were listed (``--pause``); the first outline and the first other call also at once.

Run: ``python bench/bench_startup.py [--rounds N] [--pause S]`` (about three minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import FLOOR_SERVER
from tests.support.codeprojects import python_project

PAUSE = 5.0
INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "bench", "version": "1"},
}
OUTLINE = ("get_symbols_in_file", {"pathInProject": "pkg/big.py"})
REFERENCES = ("find_references", {"pathInProject": "pkg/core.py", "line": 7, "character": 6})
LISTING = ("list_files_in_folder", {"pathInProject": "pkg"})


class Session:
    """One server process on pipes; ``request`` gives the seconds to its answer."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd
        )
        self._guard = threading.Timer(120, self.proc.kill)
        self._guard.start()
        self._id = 0

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> tuple[float, dict[str, Any]]:
        self._id += 1
        start = time.perf_counter()
        self.send({"jsonrpc": "2.0", "id": self._id, "method": method, "params": params or {}})
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit(f"the server closed its output during {method}")
            answer = json.loads(line)
            if answer.get("id") == self._id and "method" not in answer:
                if "error" in answer or answer.get("result", {}).get("isError"):
                    raise SystemExit(f"{method} failed: {line[:400]!r}")
                return time.perf_counter() - start, answer
            if "method" in answer and "id" in answer:  # roots/list and the like: no roots here
                self.send({"jsonrpc": "2.0", "id": answer["id"], "error": {"code": -32601, "message": "no"}})

    def initialize(self) -> float:
        """Seconds from spawn to the ``initialize`` answer; then ``initialized`` is sent."""
        self.request("initialize", INITIALIZE)
        elapsed = time.perf_counter() - self.started
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return elapsed

    def call(self, tool: tuple[str, dict[str, Any]]) -> float:
        elapsed, answer = self.request("tools/call", {"name": tool[0], "arguments": tool[1]})
        result = answer["result"]
        text = result["content"][0]["text"] if result.get("content") else ""
        partial = text.startswith("{") and json.loads(text).get("partial")
        if partial:
            raise SystemExit(f"{tool[0]} answered partial: {json.dumps(result)[:300]}")
        return elapsed

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        finally:
            self._guard.cancel()
            self.proc.kill()


def big_module(lines: int = 1800) -> str:
    parts = ['"""A generated module."""\n\nimport os\n\n']
    i = 0
    while sum(p.count("\n") for p in parts) < lines:
        parts.append(
            f"class Widget{i}(object):\n"
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pause", type=float, default=PAUSE)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    root = python_project(tmp / "ws")
    (root / "pkg" / "big.py").write_text(big_module())
    floor = tmp / "floor.py"
    floor.write_text(FLOOR_SERVER)
    base = dict(os.environ, XDG_STATE_HOME=str(tmp / "state"))
    ours = [sys.executable, "-m", "mcp_server_ide", "--workspace", str(root)]
    sides: dict[str, tuple[list[str], dict[str, str]]] = {
        "this server": (ours, base),
        "this server, handshake off (the SDK answers)": (ours, {**base, "MCP_IDE_FAST_HANDSHAKE": "0"}),
        "SDK floor server (bench/common.py)": ([sys.executable, str(floor)], base),
    }
    one(ours, base, root, [])  # the first start of this build keeps the SDK's answer
    times: dict[str, list[float]] = {}

    def record(key: str, value: float) -> None:
        times.setdefault(key, []).append(value)

    warm = {"warming": base, "no warming": {**base, "MCP_IDE_WARM": "0"}}
    for _ in range(args.rounds):
        for name, (argv, env) in sides.items():
            record(f"initialize: {name}", one(argv, env, root, [])[0])
        for label, env in warm.items():
            for tool in (OUTLINE, LISTING):
                init, (first,) = one(ours, env, root, [tool])
                record(f"initialize, {label}", init)
                record(f"first {tool[0]} at once, {label}", first)
            _, (outline, references, again) = one(ours, env, root, [OUTLINE, REFERENCES, OUTLINE], args.pause)
            record(f"first get_symbols_in_file after {args.pause:g} s, {label}", outline)
            record(f"first find_references after {args.pause:g} s, {label}", references)
            record(f"second get_symbols_in_file (warm), {label}", again)
    print(f"start-up over stdio: medians of {args.rounds} fresh processes each\n")
    targets = {"initialize": 0.25, "first get_symbols_in_file": 0.1}
    for key, values in times.items():
        target = next((t for prefix, t in targets.items() if key.startswith(prefix)), None)
        value = statistics.median(values)
        tail = f"  target {target * 1000:4.0f} ms  ratio {value / target:5.2f}" if target else ""
        print(f"{key:<62} {value * 1000:8.1f} ms{tail}")
    med = {k: statistics.median(v) for k, v in times.items()}
    floor_init = med["initialize: SDK floor server (bench/common.py)"]
    print(
        f"\ninitialize: this server / SDK floor {med['initialize: this server'] / floor_init:.2f}, "
        f"handshake off / SDK floor {med['initialize: this server, handshake off (the SDK answers)'] / floor_init:.2f}"
    )
    print(
        f"initialize: warming / no warming {med['initialize, warming'] / med['initialize, no warming']:.2f}"
    )
    for tool in (OUTLINE, REFERENCES):
        key = f"first {tool[0]} after {args.pause:g} s"
        print(f"{key}: warming / no warming {med[key + ', warming'] / med[key + ', no warming']:.2f}")
    for tool in (OUTLINE, LISTING):
        key = f"first {tool[0]} at once"
        print(f"{key}: warming / no warming {med[key + ', warming'] / med[key + ', no warming']:.2f}")
    warm_outline = med["second get_symbols_in_file (warm), warming"]
    first_outline = med[f"first get_symbols_in_file after {args.pause:g} s, warming"]
    print(
        f"first get_symbols_in_file after {args.pause:g} s, warming / a warm outline {first_outline / warm_outline:.2f}"
    )


def one(
    argv: list[str],
    env: dict[str, str],
    cwd: Path,
    tools: list[tuple[str, dict[str, Any]]],
    pause: float = 0.0,
) -> tuple[float, list[float]]:
    """(seconds to the initialize answer, seconds of each of ``tools`` called in turn ``pause``
    seconds after the client listed the tools)."""
    session = Session(argv, env, cwd)
    try:
        init = session.initialize()
        if not tools:
            return init, []
        session.request("tools/list")
        time.sleep(pause)
        return init, [session.call(tool) for tool in tools]
    finally:
        session.close()


if __name__ == "__main__":
    main()

"""Sandbox isolation benchmark (issue 16, acceptance 2): project B's latency while project A runs hogs.

Two hosted projects (``Policy(hosted=True)``: bubblewrap, own uid, own cgroup with its limits,
one CPU core each as the hosted service's default, a disk quota) served by one process, each through its own SDK ``Client`` session:

- B: a read/search mix (``get_file_text_by_path``, ``search_in_files_content``,
  ``list_files_in_folder``, ``find_files_by_name_substring``) on a 300-file project;
- A, in the load windows only: the three hogs of acceptance 2 at once, each as a job that starts
  again as soon as its limit stops it: a fork bomb (the pids limit), a 10 GB disk filler (the file
  size limit at the quota) and a memory hog (the memory limit).

Windows alternate (baseline, load, baseline, load…) so the machine's own noise hits both alike;
B's p50 and p99 are taken over every call of each kind of window. Target: B's p99 under load
within 1.5x of its baseline p99.

    python bench/bench_sandbox.py [--calls 150] [--windows 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from common import timed

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))

TARGET = 1.5
MiB = 1 << 20
HOGS = {
    "fork bomb": "bomb() { bomb | bomb & }; while true; do (bomb) 2>/dev/null; sleep 0.2; done",
    "disk filler": "while true; do head -c 10G /dev/zero > fill.bin; rm -f fill.bin; done",
    "memory hog": (
        "while true; do python3 -c 'x = bytearray(2 << 30); x[::4096] = b\"1\" * len(x[::4096])' "
        "2>/dev/null; done"
    ),
}


def make_project(root: Path, files: int) -> None:
    for i in range(files):
        folder = root / f"pkg{i % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = [
            f"def function_{i}_{j}(value):\n    return value * {j}  # needle {j % 7}\n" for j in range(40)
        ]
        (folder / f"module_{i}.py").write_text("".join(lines))


def policy(**extra: Any) -> Any:
    from mcp_server_ide.engines.processes.limits import CommandLimits, Limits
    from mcp_server_ide.workspace import Policy

    limits = Limits(
        command=CommandLimits(pids=128, memory=256 * MiB, cpu_s=None, file_size=None),
        workspace_pids=256,
        workspace_memory=512 * MiB,
        workspace_cpus=1.0,  # the hosted service's default: one core a project
    )
    return Policy(hosted=True, confirm_policy="allow", limits=limits, disk_quota=64 * MiB, **extra)


def limits_hit(ws: Any) -> set[str]:
    """What A's project cgroup counted: pids refused (``pids.events``), out-of-memory kills."""
    from mcp_server_ide.engines.processes import containment

    group = containment._WS_GROUPS.get(ws)
    found: set[str] = set()
    if group is None:
        return found
    for d in group.dirs.values():
        for sub in [d, *d.glob("cmd-*")]:
            for name, key, what in (
                ("pids.events", "max", "fork bomb: pids limit"),
                ("memory.events", "oom_kill", "memory hog: memory limit (OOM kill)"),
                ("memory.oom_control", "oom_kill", "memory hog: memory limit (OOM kill)"),
            ):
                try:
                    text = (sub / name).read_text()
                except OSError:
                    continue
                for line in text.splitlines():
                    k, _, v = line.partition(" ")
                    if k == key and v.strip().isdigit() and int(v) > 0:
                        found.add(what)
    return found


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000


async def measure(calls: int, windows: int, base: Path) -> dict[str, Any]:
    from mcp import Client

    from mcp_server_ide.server import build_server
    from mcp_server_ide.workspace import Workspace

    a_root, b_root = base / "projects" / "a", base / "projects" / "b"
    a_root.mkdir(parents=True)
    make_project(b_root, 300)
    wa, wb = Workspace.open(a_root, policy=policy()), Workspace.open(b_root, policy=policy())
    sa, _ = build_server(lambda ctx: wa, None)
    sb, _ = build_server(lambda ctx: wb, None)
    out: dict[str, Any] = {"baseline": [], "load": [], "hits": set()}
    try:
        async with AsyncExitStack() as stack:
            ca = await stack.enter_async_context(Client(sa))
            cb = await stack.enter_async_context(Client(sb))
            mix = [
                ("get_file_text_by_path", {"pathInProject": "pkg3/module_13.py"}),
                ("search_in_files_content", {"searchText": "needle 3", "maxResults": 20}),
                ("list_files_in_folder", {"pathInProject": "pkg5"}),
                ("find_files_by_name_substring", {"nameSubstring": "module_2"}),
            ]

            async def b_calls(n: int) -> list[float]:
                times = []
                for i in range(n):
                    name, args = mix[i % len(mix)]
                    times.append(await timed(lambda name=name, args=args: cb.call_tool(name, args)))
                return times

            await b_calls(40)  # warm-up: imports, ripgrep, caches
            for _ in range(windows):
                out["baseline"] += await b_calls(calls)
                jobs = []
                for command in HOGS.values():
                    r = await ca.call_tool("start_job", {"command": command})
                    if r.is_error:
                        raise RuntimeError(r.content[0].text)
                    jobs.append(json.loads(r.content[0].text)["jobId"])
                await anyio.sleep(1.5)  # every hog is at its limit by now
                out["load"] += await b_calls(calls)
                out["hits"] |= limits_hit(wa)
                for job, name in zip(jobs, HOGS, strict=True):
                    r = await ca.call_tool("get_job_output", {"jobId": job})
                    text = r.content[0].text
                    if "File size limit exceeded" in text:
                        out["hits"].add(f"{name}: file size limit (SIGXFSZ)")
                    await ca.call_tool("cancel_job", {"jobId": job})
                await anyio.sleep(0.5)
    finally:
        wa.close()
        wb.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=150, help="B's calls in each window")
    parser.add_argument("--windows", type=int, default=3, help="baseline/load window pairs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as tmp:
        started = time.monotonic()
        out = anyio.run(measure, args.calls, args.windows, Path(tmp))
    base, load = out["baseline"], out["load"]
    print(f"B's calls: {len(base)} baseline, {len(load)} under A's hogs ({time.monotonic() - started:.0f} s)")
    print(
        f"  baseline  p50 {p(base, 0.5):7.2f} ms  p99 {p(base, 0.99):7.2f} ms  mean {statistics.mean(base) * 1000:7.2f} ms"
    )
    print(
        f"  A's hogs  p50 {p(load, 0.5):7.2f} ms  p99 {p(load, 0.99):7.2f} ms  mean {statistics.mean(load) * 1000:7.2f} ms"
    )
    print(f"  limits A's jobs reported: {', '.join(sorted(out['hits'])) or 'none'}")
    ratio = p(load, 0.99) / p(base, 0.99)
    ok = ratio <= TARGET
    print(
        f"B's p99 under A's hogs / baseline p99: {ratio:.2f}x  target <= {TARGET:.1f}x  {'PASS' if ok else 'FAIL'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""Load test of the hosted service: many clients of several users calling tools at once, one worker,
the embedded SQLite store, driven by locust (headless).

Makes ``--users`` users with a token each and ``--projects`` projects each (a small Python package,
docs and a README in every project), starts one ``mcp-server-ide hosted`` worker on loopback, and
runs ``locust --headless`` with ``bench/locustfile_hosted.py``: ``--clients`` clients, each with its
own MCP session over Streamable HTTP (or, for 3 in 10, the JSON-style REST interface), each making
``--calls`` tool calls drawn from a mix of reads, listings, searches, writes (new files, guarded
rewrites, edits in place) and a few commands (which run in the project's sandbox). Then every file
a client wrote is read back through the service and compared with what its last write left.

Printed: calls, errors (the first ones in full), writes made and read back intact, p50 / p90 / p99
latency of the tool calls (and per door), throughput, the worker's and locust's CPU seconds, and
the machine's load average during the run. Exit status 0 only with no error and every write read
back; ``--json FILE`` also writes the figures as JSON.

Run: ``python bench/load_hosted.py`` (100 clients x 1,000 calls: the full run, tens of minutes on
2 cores), or ``python bench/load_hosted.py --clients 10 --calls 30`` (seconds).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
LOCUSTFILE = Path(__file__).resolve().parent / "locustfile_hosted.py"


def seed_project(folder: Path, number: int) -> list[str]:
    """A small project to read, list and search: a Python package, docs, a README. Its files' paths."""
    made = []
    for i in range(12):
        rel = f"src/pkg/mod_{i}.py"
        body = f'"""Module {i} of project {number}."""\n\nimport os\n\n\n' + "".join(
            f"def load_{i}_{j}(x):\n    # TODO: check x\n    return os.path.join(str(x), '{j}')\n\n\n"
            for j in range(20)
        )
        made.append(rel)
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(body)
    for i in range(4):
        rel = f"docs/guide_{i}.md"
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(f"# Guide {i}\n\n" + "Load the data, then import it. TODO more.\n" * 30)
        made.append(rel)
    (folder / "README.md").write_text(f"# Project {number}\n\nA project for the load test.\n")
    (folder / ".gitignore").write_text("build/\n")
    made.append("README.md")
    return made


def setup(data: Path, users: int, projects_each: int) -> dict[str, Any]:
    from mcp_server_ide.hosted import tokens
    from mcp_server_ide.hosted.projects import HostedProjects
    from mcp_server_ide.hosted.sqlstore import SqlStore, sqlite_url
    from mcp_server_ide.workspace import Policy

    data.mkdir(parents=True)
    store = SqlStore(sqlite_url(data))
    hosted = HostedProjects(store, data, Policy(hosted=True))
    described: list[dict[str, Any]] = []
    seeded: list[str] = []
    for u in range(users):
        user = store.add_user(f"user{u}")
        secret, _ = tokens.create(store, user.id, ("read", "write", "run"), "load")
        own = []
        for k in range(projects_each):
            project = hosted.create(user.id, f"project {u}-{k}")
            seeded = seed_project(hosted.folder(project.id), len(described) * projects_each + k)
            own.append({"id": project.id})
        described.append({"name": user.name, "token": secret, "projects": own})
    store.close()
    return {"users": described, "seeded_files": seeded}


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process and its waited-for children (from /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = os.sysconf("SC_CLK_TCK")
    return sum(int(v) for v in fields[11:15]) / ticks  # utime stime cutime cstime


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    k = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


def read_back(url: str, users: list[dict[str, Any]], writes: dict[str, str]) -> tuple[int, list[str]]:
    """Read every written file through the service (the REST door); (intact, problems)."""
    import httpx

    token_of = {p["id"]: u["token"] for u in users for p in u["projects"]}
    http = httpx.Client(
        timeout=120, limits=httpx.Limits(max_connections=8)
    )  # one client: kept-alive connections

    def check(key: str) -> str | None:
        project, path = key.split("/", 1)
        r = http.post(
            f"{url}/p/{project}/mcp/project_fs_read",
            json={"path": path},
            headers={"Authorization": f"Bearer {token_of[project]}"},
        )
        if r.status_code != 200 or r.json().get("error") is not None:
            return f"{key}: HTTP {r.status_code} {r.text[:200]}"
        if r.json()["status"]["content"] != writes[key]:
            return f"{key}: its content is not what the last write left"
        return None

    with http, concurrent.futures.ThreadPoolExecutor(8) as pool:
        problems = [p for p in pool.map(check, sorted(writes)) if p is not None]
    return len(writes) - len(problems), problems


class LoadSampler(threading.Thread):
    """The machine's 1-minute load average, every few seconds while the run lasts."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.samples: list[float] = []
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(5):
            self.samples.append(os.getloadavg()[0])


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, default=100, help="concurrent clients (default 100)")
    parser.add_argument("--calls", type=int, default=1000, help="tool calls each client makes (default 1000)")
    parser.add_argument("--users", type=int, default=5, help="users (default 5)")
    parser.add_argument("--projects", type=int, default=2, help="projects per user (default 2)")
    parser.add_argument(
        "--rest-share", type=float, default=0.3, help="share of clients on REST (default 0.3)"
    )
    parser.add_argument("--spawn-rate", type=float, default=20, help="clients started per second")
    parser.add_argument("--think", type=float, default=0, help="seconds a client waits between calls")
    parser.add_argument("--json", type=Path, help="also write the figures here, as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the data folder and the worker's log")
    args = parser.parse_args()

    from tests.support.hosted import start_hosted

    made = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="load-hosted-"))
    data = work / "data"
    described = setup(data, args.users, args.projects)
    config_path, results_path = work / "config.json", work / "results.json"
    config = {
        **described,
        "clients": args.clients,
        "calls": args.calls,
        "rest_share": args.rest_share,
        "think": args.think,
        "results": str(results_path),
    }
    config_path.write_text(json.dumps(config))
    service = start_hosted(data)
    print(f"set up and started in {time.perf_counter() - made:.0f} s", flush=True)
    sampler = LoadSampler()
    load_before = os.getloadavg()
    print(
        f"load test: {args.clients} clients x {args.calls} calls, {args.users} users x {args.projects} "
        f"projects, one worker (SQLite) at {service.url}; load average before {load_before[0]:.2f}",
        flush=True,
    )
    locust = [
        sys.executable, "-m", "locust", "-f", str(LOCUSTFILE), "--headless", "--host", service.url,
        "--users", str(args.clients), "--spawn-rate", str(args.spawn_rate),
        "--only-summary", "--loglevel", "WARNING", "--exit-code-on-error", "0",
    ]  # fmt: skip
    env = {**os.environ, "LOAD_CONFIG": str(config_path)}
    worker_cpu_before = cpu_seconds(service.process.pid)
    sampler.start()
    started = time.perf_counter()
    try:
        run = subprocess.run(
            locust, env=env, cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL
        )
        elapsed = time.perf_counter() - started
        worker_cpu = cpu_seconds(service.process.pid) - worker_cpu_before
        sampler.stop.set()
        if run.returncode != 0 or not results_path.exists():
            print(f"locust failed (exit {run.returncode}):\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}")
            return 2
        results = json.loads(results_path.read_text())
        locust_cpu = _children_cpu()
        checked = time.perf_counter()
        intact, problems = read_back(service.url, described["users"], results["writes"])
        print(
            f"read back {len(results['writes'])} files in {time.perf_counter() - checked:.0f} s", flush=True
        )
    finally:
        stopping = time.perf_counter()
        code = service.stop()
        print(f"the worker stopped in {time.perf_counter() - stopping:.1f} s (exit {code})", flush=True)
    figures = summarize(
        args, results, elapsed, worker_cpu, locust_cpu, intact, problems, sampler, load_before
    )
    figures["worker_exit"] = code
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    if args.keep:
        print(f"kept: {work} (worker log {service.log_path})")
    else:
        shutil.rmtree(work, ignore_errors=True)
        service.log_path.unlink(missing_ok=True)
    ok = figures["errors"] == 0 and figures["writes_intact"] == figures["writes"] and figures["calls"] > 0
    return 0 if ok else 1


def _children_cpu() -> float:
    usage = os.times()
    return usage.children_user + usage.children_system


def summarize(
    args: argparse.Namespace,
    results: dict[str, Any],
    elapsed: float,
    worker_cpu: float,
    locust_cpu: float,
    intact: int,
    problems: list[str],
    sampler: LoadSampler,
    load_before: tuple[float, float, float],
) -> dict[str, Any]:
    calls = {k: v for k, v in results["latencies_ms"].items() if k != "mcp initialize"}
    every = [t for v in calls.values() for t in v]
    by_door = {
        door: [t for k, v in calls.items() if k.startswith(door + " ") for t in v] for door in ("mcp", "rest")
    }
    figures: dict[str, Any] = {
        "clients": args.clients,
        "calls_per_client": args.calls,
        "calls": len(every),
        "sessions": len(results["latencies_ms"].get("mcp initialize", [])),
        "errors": results["error_count"],
        "first_errors": results["errors"][:20],
        "writes": len(results["writes"]),
        "writes_intact": intact,
        "write_problems": problems[:20],
        "seconds": round(elapsed, 1),
        "calls_per_s": round(len(every) / elapsed, 1),
        "p50_ms": round(percentile(every, 50), 1),
        "p90_ms": round(percentile(every, 90), 1),
        "p99_ms": round(percentile(every, 99), 1),
        "max_ms": round(max(every, default=0), 1),
        "by_door": {
            d: {"calls": len(v), "p50_ms": round(percentile(v, 50), 1), "p99_ms": round(percentile(v, 99), 1)}
            for d, v in by_door.items()
        },
        "worker_cpu_s": round(worker_cpu, 1),
        "locust_cpu_s": round(locust_cpu, 1),
        "load_average_before": round(load_before[0], 2),
        "load_average_mean": round(statistics.fmean(sampler.samples), 2) if sampler.samples else None,
        "load_average_max": round(max(sampler.samples), 2) if sampler.samples else None,
    }
    print(
        f"\n{figures['calls']} tool calls in {figures['seconds']} s ({figures['calls_per_s']} calls/s), "
        f"{figures['sessions']} MCP sessions; errors: {figures['errors']}"
    )
    for e in figures["first_errors"]:
        print(f"  error: {e}")
    print(f"writes: {figures['writes']} files written, {intact} read back intact")
    for p in figures["write_problems"]:
        print(f"  lost: {p}")
    print(
        f"latency of a tool call: p50 {figures['p50_ms']} ms, p90 {figures['p90_ms']} ms, p99 {figures['p99_ms']} ms, max {figures['max_ms']} ms"
    )
    for door, f in figures["by_door"].items():
        print(f"  {door:<4} {f['calls']} calls: p50 {f['p50_ms']} ms, p99 {f['p99_ms']} ms")
    print("  per tool (calls, p50 ms, p99 ms):")
    for name, v in sorted(calls.items()):
        print(f"    {name:<42} {len(v):>7} {percentile(v, 50):>8.1f} {percentile(v, 99):>8.1f}")
    print(
        f"CPU: worker {figures['worker_cpu_s']} s, locust {figures['locust_cpu_s']} s; load average "
        f"before {figures['load_average_before']}, during mean {figures['load_average_mean']} max {figures['load_average_max']}"
    )
    return figures


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark of hosted scale-out: throughput of a mixed read/search/write load with two workers
against one, behind the same HAProxy, with PostgreSQL and Redis (tests/support/services.py).

One data folder, ``--projects`` projects of ``--files`` small source files each. Two
``mcp-server-ide hosted`` workers (``--database`` PostgreSQL, ``--redis``), and two HAProxy fronts
with the project affinity of deploy/scaleout.sh (the project id hashed): one over both workers, one
with the first worker only; the projects' split over the two workers is printed. The load:
``--sessions`` Streamable HTTP sessions per project, opened (and warmed with two calls each) by this
script; then tool calls (``tools/call`` over ``POST /p/X/mcp``) on one connection per session, each
the next request as soon as the last was answered: 50% ``project_fs_read``, 30%
``search_in_files_content``, 20% ``project_fs_write`` (each session its own file), every answer
checked. Rounds alternate one worker / two workers (``--rounds`` of ``--seconds`` each), so that
the noise of a shared machine falls on both alike. Printed per round: calls/s, errors, the CPU the
load generator itself used (user + system, as a share of one core), the workers', PostgreSQL's,
Redis's and HAProxy's CPU, the load average and the latency; then the median ratio of two workers
to one.

Projects are placed by hashing their ids, so with few projects the split over two workers is a
matter of luck (8 projects came out 1/7 once); 24 make it even enough to measure the workers rather
than the split. The load is driven by wrk (bench/wrk_mcp.py, ~1% of a core) when it is installed.

Run: ``python bench/bench_scaleout.py [--projects 24] [--sessions 1] [--seconds 20] [--rounds 3]`` (~3 min).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import wrk_mcp  # noqa: E402
from common import process_children  # noqa: E402

ACCEPT = "application/json, text/event-stream"
VERSION = "2025-11-25"


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process (from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree_cpu(pid: int) -> float:
    """CPU seconds of a process and every process below it (PostgreSQL's backends, say)."""
    children = process_children()
    total, todo = 0.0, [pid]
    while todo:
        one = todo.pop()
        try:
            total += cpu_seconds(one)
        except (OSError, IndexError, ValueError):
            continue
        todo += children.get(one, [])
    return total


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def last_message(text: str) -> dict[str, Any]:
    lines = [line[5:] for line in text.splitlines() if line.startswith("data:") and line[5:].strip()]
    return json.loads(lines[-1]) if lines else json.loads(text)


class Session:
    def __init__(self, http: Any, url: str, number: int) -> None:
        self.http = http
        self.url = url
        self.number = number
        self.headers: dict[str, str] = {}
        self.next_id = 1
        self.rng = random.Random(number)

    async def rpc(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        body = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        r = await self.http.post(self.url, json=body, headers=self.headers or {"Accept": ACCEPT})
        r.raise_for_status()
        if not self.headers:
            self.headers = {
                "Accept": ACCEPT,
                "mcp-session-id": r.headers["mcp-session-id"],
                "mcp-protocol-version": VERSION,
            }
        return last_message(r.text)

    async def open(self) -> None:
        await self.rpc(
            "initialize",
            {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
        )
        r = await self.http.post(
            self.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=self.headers
        )
        r.raise_for_status()

    async def call(self, name: str, arguments: dict[str, Any]) -> None:
        answer = await self.rpc("tools/call", {"name": name, "arguments": arguments})
        result = answer.get("result")
        if result is None or result.get("isError"):
            raise RuntimeError(f"{name}: {answer}")

    async def one(self, files: int, times: dict[str, list[float]] | None = None) -> None:
        pick = self.rng.random()
        started = time.perf_counter()
        if pick < 0.5:
            kind = "read"
            await self.call("project_fs_read", {"path": f"src/m{self.rng.randrange(files)}.py"})
        elif pick < 0.8:
            kind = "search"
            await self.call("search_in_files_content", {"searchText": f"value_{self.rng.randrange(files)}"})
        else:
            kind = "write"
            await self.call(
                "project_fs_write",
                {"path": f"out/s{self.number}.txt", "content": f"{self.next_id}\n" * 20},
            )
        if times is not None:
            times.setdefault(kind, []).append(time.perf_counter() - started)


async def run_round(
    urls: list[str], token: str, sessions: int, seconds: float, files: int, generator: str = "wrk"
) -> dict[str, float]:
    import httpx

    total = sessions * len(urls)
    limits = httpx.Limits(max_connections=total, max_keepalive_connections=total)
    async with httpx.AsyncClient(
        headers={"Authorization": f"Bearer {token}"}, timeout=120, limits=limits
    ) as http:
        group = [Session(http, urls[n % len(urls)], n) for n in range(total)]
        await asyncio.gather(*(s.open() for s in group))
        for _ in range(2):  # warm-up
            await asyncio.gather(*(s.one(files) for s in group))
        if generator == "wrk":
            base = urls[0].split("/p/", 1)[0]
            opened = [(s.url[len(base) :], s.headers["mcp-session-id"]) for s in group]
            got = await asyncio.to_thread(
                wrk_mcp.run, base, opened, token, VERSION, seconds, files, len(urls)
            )
            for s in group:
                await http.delete(s.url, headers=s.headers)
            if got["errors"]:
                print(got.pop("stderr"), file=sys.stderr)
            got.pop("stderr", None)
            return got
        done = errors = 0
        times: dict[str, list[float]] = {}
        stop = time.monotonic() + seconds

        async def loop(s: Session) -> None:
            nonlocal done, errors
            while time.monotonic() < stop:
                try:
                    await s.one(files, times)
                    done += 1
                except Exception:
                    errors += 1

        cpu0, wall0 = own_cpu(), time.monotonic()
        await asyncio.gather(*(loop(s) for s in group))
        cpu1, wall1 = own_cpu(), time.monotonic()
        for s in group:
            await http.delete(s.url, headers=s.headers)
    return {
        "calls_per_s": done / (wall1 - wall0),
        "errors": errors,
        "generator_cpu": (cpu1 - cpu0) / (wall1 - wall0),
        "wall": wall1 - wall0,
        **{f"p50_{kind}": statistics.median(ts) for kind, ts in times.items()},
    }


def main() -> int:
    from tests.support.hosted import hosted_cli, start_hosted
    from tests.support.net import free_port
    from tests.support.services import start_haproxy, start_postgres, start_redis

    parser = argparse.ArgumentParser()
    parser.add_argument("--projects", type=int, default=24, help="projects (default 24)")
    parser.add_argument("--sessions", type=int, default=1, help="concurrent sessions per project (default 1)")
    parser.add_argument("--seconds", type=float, default=20.0, help="length of each round (default 20)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each setup (default 3)")
    parser.add_argument("--files", type=int, default=200, help="source files in the project (default 200)")
    parser.add_argument(
        "--generator",
        choices=("wrk", "httpx"),
        default="wrk" if wrk_mcp.available() else "httpx",
        help="the load generator: wrk (Debian's wrk, light; the default when installed) or this "
        "process with httpx (~3 ms of CPU per call)",
    )
    args = parser.parse_args()

    pg, redis = start_postgres(), start_redis()
    parts = [pg, redis]
    workers = []
    try:
        data = Path(tempfile.mkdtemp(prefix="bench-scaleout-")) / "data"
        data.mkdir()
        db = ("--database", pg.url)
        for argv in (("user", "add", "alice"),):
            assert hosted_cli(data, *argv, *db).returncode == 0
        token = hosted_cli(data, "token", "create", "alice", *db).stdout.strip()
        projects = []
        for n in range(args.projects):
            made = hosted_cli(data, "project", "create", "alice", f"bench{n}", *db)
            project = json.loads(made.stdout)["id"]
            projects.append(project)
            src = data / "projects" / project / "src"
            src.mkdir(parents=True)
            for i in range(args.files):
                (src / f"m{i}.py").write_text(
                    f'"""Module {i}."""\n\nvalue_{i} = {i}\n\n\ndef f_{i}(x):\n    return x + value_{i}\n' * 5
                )
        fronts = [free_port(), free_port()]
        extra = [a for port in fronts for a in ("--allowed-host", f"127.0.0.1:{port}")]
        for _ in range(2):
            workers.append(start_hosted(data, *db, "--redis", redis.url, *extra, timeout=180))
        ports = [int(w.url.rsplit(":", 1)[1]) for w in workers]
        one = start_haproxy({"w0": ports[0]}, port=fronts[0])
        two = start_haproxy({"w0": ports[0], "w1": ports[1]}, port=fronts[1])
        parts += [one, two]
        setups = {"1 worker": one.url, "2 workers": two.url}
        import httpx

        split = [httpx.get(f"{two.url}/p/{p}/mcp/tools").headers["x-mcp-ide-worker"] for p in projects]
        counts = sorted(split.count(w) for w in set(split))
        print(
            f"machine: {os.cpu_count()} cores; generator {args.generator}; "
            f"{args.projects} projects x {args.sessions} sessions; "
            f"rounds of {args.seconds:.0f} s; projects per worker with two: {counts}"
        )
        results: dict[str, list[dict[str, float]]] = {name: [] for name in setups}
        for round_no in range(args.rounds):
            for name, front in setups.items():
                urls = [f"{front}/p/{p}/mcp" for p in projects]
                load0 = os.getloadavg()[0]
                workers_cpu0 = [cpu_seconds(w.process.pid) for w in workers]
                services = {"postgres": pg, "redis": redis, "haproxy": one if name == "1 worker" else two}
                services_cpu0 = {k: tree_cpu(s.process.pid) for k, s in services.items()}
                got = asyncio.run(
                    run_round(urls, token, args.sessions, args.seconds, args.files, args.generator)
                )
                workers_cpu = [
                    (cpu_seconds(w.process.pid) - c) / got["wall"]
                    for w, c in zip(workers, workers_cpu0, strict=True)
                ]
                services_cpu = {
                    # never below 0: a process that ended meanwhile takes its CPU time with it
                    k: max(0.0, tree_cpu(s.process.pid) - services_cpu0[k]) / got["wall"]
                    for k, s in services.items()
                }
                got["load"] = (load0 + os.getloadavg()[0]) / 2
                results[name].append(got)
                print(
                    f"round {round_no + 1} {name:<9}: {got['calls_per_s']:7.1f} calls/s, "
                    f"{int(got['errors'])} errors; load generator CPU {got['generator_cpu'] * 100:5.1f}% of a core; "
                    f"workers' CPU {' + '.join(f'{c * 100:.0f}%' for c in workers_cpu)}; "
                    + ", ".join(f"{k} {v * 100:.0f}%" for k, v in services_cpu.items())
                    + "; "
                    f"load average {got['load']:.1f}; latency "
                    + ", ".join(
                        f"{k[4:]} {k[:3]} {v * 1e3:.0f} ms"
                        for k, v in got.items()
                        if k.startswith(("p50_", "p99_"))
                    )
                )
        ratios = [
            b["calls_per_s"] / a["calls_per_s"]
            for a, b in zip(results["1 worker"], results["2 workers"], strict=True)
        ]
        medians = {name: statistics.median(r["calls_per_s"] for r in rs) for name, rs in results.items()}
        errors = sum(r["errors"] for rs in results.values() for r in rs)
        print(
            f"\nmedian: 1 worker {medians['1 worker']:.1f} calls/s, 2 workers {medians['2 workers']:.1f} calls/s; "
            f"2 workers / 1 worker per round: {', '.join(f'{x:.2f}x' for x in ratios)} "
            f"(median {statistics.median(ratios):.2f}x; ratio of the medians "
            f"{medians['2 workers'] / medians['1 worker']:.2f}x); errors {int(errors)}"
        )
        return 1 if errors else 0
    finally:
        for w in workers:
            w.stop()
        for part in reversed(parts):
            part.stop()


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark of tenancy timing in the hosted service: for user A, user B's project, a deleted project
and a random id must not be told apart by how long the answer takes (their bytes are the same: see
tests/test_hosted.py).

A real ``mcp-server-ide hosted`` process on loopback; for each door (the JetBrains-style HTTP
interface's ``POST /p/X/mcp/project_fs_read``, Streamable HTTP's ``POST /p/X/mcp`` initialize, the
reference ``GET /p/X/mcp/tools``), ``--calls`` timed calls of each kind, interleaved in a random
order so that machine noise hits every kind alike, over one kept-alive connection. Printed: the
median and mean of each kind, and Welch's t-test of each pair (p > 0.01: no difference found).
The p-value uses the normal approximation of Student's t, exact enough at these degrees of
freedom (well over 1,000).

Run: ``python bench/bench_hosted_tenancy.py [--calls 1000]`` (about a minute per 1,000 calls a kind).
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "b", "version": "1"},
    },
}


def welch(a: list[float], b: list[float]) -> tuple[float, float]:
    """(t, two-sided p) of Welch's t-test."""
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    if va + vb == 0:
        return 0.0, 1.0
    t = (statistics.fmean(a) - statistics.fmean(b)) / math.sqrt(va + vb)
    return t, math.erfc(abs(t) / math.sqrt(2))


def main() -> int:
    import httpx
    from tests.support.hosted import start_hosted

    from mcp_server_ide.hosted import tokens
    from mcp_server_ide.hosted.projects import HostedProjects
    from mcp_server_ide.hosted.sqlstore import SqlStore, sqlite_url
    from mcp_server_ide.workspace import Policy

    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=1000, help="timed calls of each kind, per door")
    args = parser.parse_args()

    data = Path(tempfile.mkdtemp(prefix="bench-hosted-")) / "data"
    data.mkdir()
    store = SqlStore(sqlite_url(data))
    projects = HostedProjects(store, data, Policy(hosted=True))
    alice, bob = store.add_user("alice"), store.add_user("bob")
    secret, _ = tokens.create(store, alice.id, ("read", "write", "run"))
    b_project = projects.create(bob.id, "b")
    gone = projects.create(alice.id, "gone")
    projects.delete(alice.id, gone.id)
    for i in range(50):  # a store with more than one row a table
        projects.create(alice.id if i % 2 else bob.id, f"filler-{i}")
    store.close()
    kinds = {"B's": b_project.id, "deleted": gone.id, "random": "p_" + f"{random.getrandbits(80):020x}"}
    service = start_hosted(data)
    doors = {
        "REST project_fs_read": ("POST", "/mcp/project_fs_read", {"json": {"path": "a.txt"}}),
        "MCP initialize": (
            "POST",
            "/mcp",
            {"json": INIT, "headers": {"Accept": "application/json, text/event-stream"}},
        ),
        "reference page": ("GET", "/mcp/tools", {}),
    }
    failed = False
    try:
        with httpx.Client(headers={"Authorization": f"Bearer {secret}"}, timeout=60) as http:
            for door, (method, rest, options) in doors.items():
                times: dict[str, list[float]] = {k: [] for k in kinds}
                bodies: dict[str, set[bytes]] = {k: set() for k in kinds}
                order = [k for k in kinds for _ in range(args.calls)]
                for k in kinds:  # warm-up, untimed
                    http.request(method, f"{service.url}/p/{kinds[k]}{rest}", **options)
                random.shuffle(order)
                for k in order:
                    url = f"{service.url}/p/{kinds[k]}{rest}"
                    started = time.perf_counter()
                    r = http.request(method, url, **options)
                    times[k].append(time.perf_counter() - started)
                    bodies[k].add(bytes([r.status_code % 256]) + r.content)
                print(f"\n{door}: {args.calls} calls of each kind")
                for k, ts in times.items():
                    print(
                        f"  {k:<8} median {statistics.median(ts) * 1e3:7.3f} ms   mean {statistics.fmean(ts) * 1e3:7.3f} ms"
                    )
                same = len(set().union(*bodies.values())) == 1
                print(f"  one answer for all kinds: {'yes' if same else 'NO'}")
                failed |= not same
                names = list(kinds)
                for i, a in enumerate(names):
                    for b in names[i + 1 :]:
                        t, p = welch(times[a], times[b])
                        verdict = "no difference found" if p > 0.01 else "DIFFERENT"
                        print(f"  Welch {a} vs {b}: t = {t:+.2f}, p = {p:.3f}  ({verdict})")
                        failed |= p <= 0.01
    finally:
        service.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

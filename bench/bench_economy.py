"""What an assistant pays: bytes of tool results and calls per task, this server against Serena and the
reference servers (issue 12, acceptance 1).

Three peers run the same tasks, each over stdio through the official ``mcp`` client, each task on a
fresh copy of a fixture repository built here (``economy_fixtures``):

- ``ours``: this server, ``python -m mcp_server_ide --workspace DIR`` with the bench's interpreter (so
  the checkout it runs in is measured: a venv's ``mcp-server-ide`` script may carry another checkout's
  interpreter in its shebang, as a worktree's does here);
- ``serena``: Serena (PyPI ``serena-agent``, classic tools interface, ``desktop-app`` context, its
  ``python_basedpyright`` language server pointed at the basedpyright of this venv);
- ``reference``: ``@modelcontextprotocol/server-filesystem`` + ``mcp-server-git`` + Desktop Commander
  (for running commands and content search), used together as one assistant would.

Tasks, each step done with the peer's natural tool(s) for it, every result checked (a failed step is
reported loudly and the bench exits 1):

- T1 fix-and-rename: search for a definition, outline the file, read the function, run the failing
  tests, fix the bug, rename the function across files, run the tests again, git status, commit, diff
  the commit;
- T2 review: the branch's diff against main, the changed function's context, its references, the
  file's problems (the change uses an undefined name);
- T3 failing-test hunt in the real ``h11`` package (vendored, one planted bug): run the tests, read
  the failing one's traceback, search for the code it points at, read it, go to the helper it calls,
  read that, fix it, rerun the tests.

Counted: the ``result`` object of every ``tools/call`` response as compact JSON (UTF-8 bytes, as
received on the wire, before the client parses it), and the calls; per step, per task, per peer. Also
each server's ``tools/list`` (compact bytes and tool count). Targets: ours <= 0.5x Serena's bytes on
each task; ours ``tools/list`` <= 45 KB.

    python bench/bench_economy.py [--peers ours,serena,reference] [--tasks T1,T2,T3] [--json FILE]
                                  [--verbose] [--keep] [--check-targets]

Exit status: 0 when every step of every peer succeeded (targets are printed, and with
``--check-targets`` a missed one exits 3), 1 when a step failed or a peer could not be installed
(the message names what is missing), 2 for bad arguments.

Counted as on the wire, so a server that sends its data twice (a text block and ``structuredContent``)
pays twice; the line "content blocks only" gives the bytes of the ``content`` lists alone, what a client
that shows the model only the text blocks pays. Desktop Commander answers ``start_process`` as soon as
the output pauses (taking pytest's pause before its summary for a prompt), so its number of
``read_process_output`` calls, and its bytes, vary by a few from run to run; the other peers' bytes
are the same every run.

The steps of each task, per peer, are in ``economy_tasks``. Peers are installed on first use under
``~/.cache/mcp-server-ide-bench`` (``economy_peers``; about 2 minutes once); a run takes about 200 s
after that (nine peer-task pairs in turn, each starting its servers and language server afresh). ``BENCH_PROTOCOL`` picks the client mode (default ``legacy``: the
initialize handshake, as VS Code and Claude speak today).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import traceback
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import economy_fixtures as fx
from economy_peers import PeerMissing, Server, Wire, recording, reference_servers, serena_servers
from economy_tasks import FIXTURES, SCRIPTS, Listing, Outcome, Session, StepFailed

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
MODE = os.environ.get("BENCH_PROTOCOL", "legacy")
START_TIMEOUT = 120.0
TASK_TIMEOUT = 900.0
TOOLS_LIST_TARGET = 45 * 1024
RATIO_TARGET = 0.5
PEERS = ("ours", "serena", "reference")
TASKS = {
    "T1": "fix-and-rename (the issue's task)",
    "T2": "review a branch's diff",
    "T3": "failing-test hunt in h11",
}


# ---------------------------------------------------------------------------------------------------
# running


def base_env(scratch: Path) -> dict[str, str]:
    """The environment of every peer: this interpreter's folder first on PATH (python with pytest, ruff,
    rg), a private git config, the fixed committer and dates."""
    gitconfig = scratch / "gitconfig"
    if not gitconfig.exists():
        gitconfig.write_text(
            "[user]\n\tname = Bench\n\temail = bench@example.com\n[init]\n\tdefaultBranch = main\n"
        )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "VIRTUAL_ENV", "PYTHON"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(fx.GIT_ENV, GIT_CONFIG_GLOBAL=str(gitconfig), GIT_CONFIG_NOSYSTEM="1", NO_COLOR="1")
    return env


def servers_of(peer: str, root: Path, scratch: Path) -> list[Server]:
    env = base_env(scratch)
    if peer == "ours":
        argv = [
            sys.executable,
            "-m",
            "mcp_server_ide",
            "--workspace",
            str(root),
            "--state-dir",
            str(scratch / "state"),
        ]
        return [Server("ide", argv, env, root)]
    if peer == "serena":
        return serena_servers(root, scratch, env)
    return reference_servers(root, scratch, env)


async def run_one(outcome: Outcome, scratch: Path, verbose: bool) -> Outcome:
    """Run one task on one peer, filling ``outcome`` (its listings stay filled when a step fails)."""
    peer, task = outcome.peer, outcome.task
    work = scratch / f"{task}-{peer}"
    work.mkdir()
    root = FIXTURES[task](work / "repo")
    servers = servers_of(peer, root, work)
    session = Session(outcome, verbose)
    log_path = work / "servers.log"
    started = time.perf_counter()
    try:
        with open(log_path, "w") as log, anyio.fail_after(TASK_TIMEOUT):
            async with AsyncExitStack() as stack:
                for server in servers:
                    session.clients[server.label] = await start(stack, server, log, outcome)
                await SCRIPTS[task][peer](session, root)
    except TimeoutError:
        raise StepFailed(
            f"{peer} / {task}: not done in {TASK_TIMEOUT:.0f} s (step '{session.step}')"
        ) from None
    except BaseExceptionGroup as group:  # task groups of the client wrap what a step raised
        raise first_cause(group) from None
    outcome.seconds = time.perf_counter() - started
    return outcome


async def start(stack: AsyncExitStack, server: Server, log: Any, outcome: Outcome) -> tuple[Any, Wire]:
    """Start one server (its client enters ``stack``) and note its ``tools/list``."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    wire = Wire()
    params = StdioServerParameters(
        command=server.argv[0],
        args=server.argv[1:],
        env=server.env,
        cwd=str(server.cwd) if server.cwd else None,
    )
    try:
        client = await stack.enter_async_context(Client(recording(params, wire, log), mode=MODE))
        since = len(wire.order)
        with anyio.fail_after(START_TIMEOUT):
            listed = await client.list_tools(cache_mode="bypass")
    except TimeoutError:
        raise StepFailed(
            f"{outcome.peer}: {server.label} did not list its tools in {START_TIMEOUT:.0f} s"
        ) from None
    except Exception as exc:
        raise StepFailed(
            f"{outcome.peer}: {server.label} did not start: {type(exc).__name__}: {exc}"
        ) from None
    outcome.listings.append(Listing(server.label, len(listed.tools), sum(wire.take("tools/list", since))))
    return client, wire


def first_cause(group: BaseExceptionGroup) -> BaseException:
    """The first StepFailed or PeerMissing inside nested exception groups (else the group itself)."""
    for exc in group.exceptions:
        if isinstance(exc, (StepFailed, PeerMissing)):
            return exc
        if isinstance(exc, BaseExceptionGroup):
            found = first_cause(exc)
            if found is not exc:
                return found
    return group


def kb(size: int) -> str:
    return f"{size / 1024:.1f} KB"


def report(outcomes: list[Outcome], listed: dict[str, Outcome], tasks: list[str], peers: list[str]) -> bool:
    """Print the tables; True when every target holds."""
    ok = True
    by = {(o.task, o.peer): o for o in outcomes}
    print("\n== tools/list (compact JSON of the result) ==")
    for peer in peers:
        first = listed.get(peer)
        if first is None or not first.listings:
            print(f"  {peer:<10} (not measured)")
            continue
        total = sum(x.size for x in first.listings)
        tools = sum(x.tools for x in first.listings)
        parts = ", ".join(f"{x.server} {x.tools} tools {x.size:,} B" for x in first.listings)
        line = f"  {peer:<10} {tools:>3} tools {total:>8,} B ({kb(total)})"
        if len(first.listings) > 1:
            line += f"  [{parts}]"
        if peer == "ours":
            hit = total <= TOOLS_LIST_TARGET
            ok &= hit
            line += f"  target <= {kb(TOOLS_LIST_TARGET)}: {'ok' if hit else 'MISSED'}"
        print(line)
    for task in tasks:
        print(f"\n== {task}: {TASKS[task]} ==")
        present = [p for p in peers if (task, p) in by]
        if not present:
            print("  (no peer finished this task)")
            continue
        steps: list[str] = []
        for p in present:
            for step in by[(task, p)].steps():
                if step not in steps:
                    steps.append(step)
        print(f"  {'step':<22}" + "".join(f"{p:>20}" for p in present))
        for step in steps:
            cells = []
            for p in present:
                size, n = by[(task, p)].steps().get(step, (0, 0))
                cells.append(f"{size:>8,} B {n:>2} call{'s' if n != 1 else ' '}" if n else f"{'-':>19}")
            print(f"  {step:<22}" + "".join(f"{c:>20}" for c in cells))
        print(
            f"  {'total':<22}"
            + "".join(f"{by[(task, p)].size:>8,} B {len(by[(task, p)].calls):>2} calls" for p in present)
        )
        print(
            f"  {'(content blocks only)':<22}"
            + "".join(f"{by[(task, p)].content_size:>8,} B{'':>9}" for p in present)
        )
        print(f"  {'seconds':<22}" + "".join(f"{by[(task, p)].seconds:>19.1f}s" for p in present))
        if (task, "ours") in by and (task, "serena") in by:
            ratio = by[(task, "ours")].size / max(1, by[(task, "serena")].size)
            hit = ratio <= RATIO_TARGET
            ok &= hit
            print(
                f"  ours / serena bytes: {ratio:.2f}  (target <= {RATIO_TARGET}: {'ok' if hit else 'MISSED'})"
            )
            ratio = by[(task, "ours")].content_size / max(1, by[(task, "serena")].content_size)
            print(f"  ours / serena, content blocks only: {ratio:.2f}")
        if (task, "ours") in by and (task, "reference") in by:
            ratio = by[(task, "ours")].size / max(1, by[(task, "reference")].size)
            print(f"  ours / reference bytes: {ratio:.2f}")
    return ok


def as_json(outcomes: list[Outcome]) -> list[dict[str, Any]]:
    return [
        {
            "peer": o.peer,
            "task": o.task,
            "bytes": o.size,
            "contentBytes": o.content_size,
            "calls": len(o.calls),
            "seconds": round(o.seconds, 2),
            "steps": {k: {"bytes": v[0], "calls": v[1]} for k, v in o.steps().items()},
            "perCall": [c.__dict__ for c in o.calls],
            "toolsList": [x.__dict__ for x in o.listings],
        }
        for o in outcomes
    ]


async def main_async(args: argparse.Namespace) -> int:
    peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    tasks = [t.strip().upper() for t in args.tasks.split(",") if t.strip()]
    for name in peers:
        if name not in PEERS:
            print(f"unknown peer {name!r}: choose from {', '.join(PEERS)}", file=sys.stderr)
            return 2
    for name in tasks:
        if name not in TASKS:
            print(f"unknown task {name!r}: choose from {', '.join(TASKS)}", file=sys.stderr)
            return 2
    scratch = Path(tempfile.mkdtemp(prefix="bench-economy-"))
    outcomes: list[Outcome] = []
    failures: list[str] = []
    missing: dict[str, str] = {}
    listed: dict[str, Outcome] = {}
    started = time.perf_counter()
    print(f"bench_economy: peers {', '.join(peers)}; tasks {', '.join(tasks)}; protocol {MODE}; in {scratch}")
    try:
        for task in tasks:
            for peer in peers:
                if peer in missing:
                    continue
                print(f"- {task} {peer} ...", flush=True)
                outcome = Outcome(peer, task)
                listed.setdefault(peer, outcome)
                try:
                    await run_one(outcome, scratch, args.verbose)
                except PeerMissing as exc:
                    missing[peer] = str(exc)
                    print(f"  PEER MISSING: {peer}: {exc}", flush=True)
                    continue
                except StepFailed as exc:
                    failures.append(str(exc))
                    print(f"  STEP FAILED: {exc}", flush=True)
                    log = scratch / f"{task}-{peer}" / "servers.log"
                    if log.exists():
                        tail = log.read_text(errors="replace").strip().splitlines()[-12:]
                        if tail:
                            print("  last lines the servers wrote on stderr:\n    " + "\n    ".join(tail))
                    continue
                outcomes.append(outcome)
                print(
                    f"  {outcome.size:,} B in {len(outcome.calls)} calls, {outcome.seconds:.1f} s", flush=True
                )
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    targets_ok = report(outcomes, listed, tasks, peers)
    print(f"\nwall time {time.perf_counter() - started:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(as_json(outcomes), indent=1) + "\n")
    for peer, why in missing.items():
        print(f"PEER MISSING: {peer}: {why}", file=sys.stderr)
    for failure in failures:
        print(f"FAILED: {failure.splitlines()[0]}", file=sys.stderr)
    if missing or failures:
        return 1
    if not targets_ok:
        print("targets missed (see above)")
        if args.check_targets:
            return 3
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--peers", default=",".join(PEERS), help="comma-separated: ours, serena, reference")
    parser.add_argument("--tasks", default=",".join(TASKS), help="comma-separated: T1, T2, T3")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument(
        "--verbose", action="store_true", help="print every call's size and the start of its text"
    )
    parser.add_argument("--check-targets", action="store_true", help="exit 3 when a target is missed")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder (fixtures, server logs)")
    args = parser.parse_args()
    try:
        return anyio.run(main_async, args)
    except KeyboardInterrupt:
        return 130
    except Exception:
        traceback.print_exc()
        return 1


if __name__ == "__main__":
    sys.exit(main())

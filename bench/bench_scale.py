"""Scale benchmark: find, search and the recursive listing on a 100,000-file tree, against ripgrep.

One run, one tree, this server over stdio through the SDK's ``Client``; calls interleaved with the
ripgrep processes they are compared with (one of each per round, in a new shuffled order each round)
so machine noise hits every side alike; medians are printed.

The tree (built once, cached under the temp folder keyed by :data:`TREE_VERSION`, deterministic) is a
monorepo of 240 packages: nested source folders of Python, TypeScript, JSON and Markdown files of
varied sizes (a few hundred bytes to ~200 KB), binary assets, hidden ``.github`` files, a root
``.gitignore`` (``build/``, ``coverage/``, ``*.log``) with ignored build output beside the sources,
``node_modules`` folders, a few symlinks and empty folders: 100,000 files in all.

What each side does (the same ignore rules on both: ripgrep gets the flags the server gives it,
``--hidden --no-require-git --no-ignore-parent --no-ignore-global``, never ``.git``, ``node_modules``
nor ``dist``):

- find: ``find_files_by_name_substring`` (a name substring, case-insensitive; it ranks every match
  and returns the first page of 100 with the total) vs ``rg --files --iglob '*X*'`` (every matching
  name printed). The substring is chosen so no ignored file matches it (a ripgrep glob would bring
  those back), and the run checks both sides count the same files.
- search: ``search_in_files_content`` (fixed text, case-sensitive; every matching line of every file
  is read and counted, 100 files and 5 lines each returned) vs ``rg -n --fixed-strings`` (every
  matching line printed); both count the same files.
- list: recursive ``project_fs_list`` of the root (files, folders and symlinks with their types,
  .gitignore applied, the first page of 2,000 entries with sizes and the total) vs ``rg --files``
  (the kept files' names only: it neither lists folders nor reads sizes). The tree does not change
  between rounds, so after the first listing the server's walk finds every folder as it read it
  and no ignore file changed: it answers without running ripgrep again (``project_fs/kept.py``).
  ``list.changed`` is the same listing right after a file was added to (or removed from) one folder:
  the remembered answer is brought up to date, ripgrep asked again (from the root, every folder not
  on the way skipped) only about the files of the folders the walk read anew
  (``project_fs/since.py``).
- RSS: VmRSS of the server process, read from /proc after the rounds; the processes it started (the
  language server its warm-up starts after the handshake, basedpyright on this tree) are printed
  apart, each named, with their sum: their memory is theirs (a language server loading 40,000 Python
  files needs hundreds of MB whatever starts it), not the server's.

Targets: each ratio ours / ripgrep <= 1.5, the server process's RSS <= 150 MB.

    python bench/bench_scale.py [--rounds 15] [--tree DIR] [--rebuild]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from common import answer, interleave, ms, params, process_children, process_op, timed

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

MODE = os.environ.get("BENCH_PROTOCOL", "legacy")
TREE_VERSION = "2"
"""Bump when :func:`build_tree` changes: the cached tree is rebuilt under a new folder."""
TREE_SEED = 20261201
FILES = 100_000
PACKAGES = 240
FIND_TEXT = "schema"
SEARCH_TEXT = "TODO(perf)"
FIND_PAGE = 100
SEARCH_PAGE = 100
LIST_PAGE = 2000

_WORDS = (
    "user account session token cache store queue worker event handler router request response client "
    "server config settings loader parser lexer render view model schema field record table index query "
    "filter sort page batch stream buffer codec format json yaml csv image audio video upload download "
    "auth login logout profile admin report metric trace log audit alert notify email sms push payment "
    "invoice order cart product price stock item catalog search graph node edge tree path file folder "
    "util helper common core base types errors state action reducer effect hook store service adapter "
    "driver plugin module widget button dialog form input select table layout theme style color icon"
)
WORDS = _WORDS.split()
IGNORED_WORDS = ("output", "bundle", "chunk", "trace")
"""Names of ignored build files never contain :data:`FIND_TEXT` (see the module docstring)."""


def tree_path(base: Path | None = None) -> Path:
    return (base or Path(tempfile.gettempdir())) / f"mcp-ide-bench-scale-v{TREE_VERSION}"


def build_tree(target: Path) -> Path:
    """The tree under ``target/repo`` (built in a scratch folder, then renamed: a half-built tree is
    never taken for a cached one)."""
    repo = target / "repo"
    if (target / "done.json").is_file() and repo.is_dir():
        return repo
    scratch = target.with_name(target.name + f".building-{os.getpid()}")
    shutil.rmtree(scratch, ignore_errors=True)
    root = scratch / "repo"
    root.mkdir(parents=True)
    counts = _write_tree(root, random.Random(TREE_SEED))
    (scratch / "done.json").write_text(json.dumps(counts))
    shutil.rmtree(target, ignore_errors=True)
    scratch.rename(target)
    return repo


def _write_tree(root: Path, rng: random.Random) -> dict[str, int]:
    pool = _line_pool(rng)
    written = {"files": 0, "ignored": 0, "binary": 0, "bytes": 0}

    def put(path: Path, data: bytes, kind: str = "files") -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written["files"] += 1
        written["bytes"] += len(data)
        if kind != "files":
            written[kind] += 1

    put(root / ".gitignore", b"build/\ncoverage/\n*.log\n.cache/\n")
    put(root / "README.md", b"# monorepo\n\nGenerated for bench_scale.\n")
    put(root / "package.json", b'{"name": "monorepo", "private": true, "workspaces": ["packages/*"]}\n')
    for name in ("ci.yml", "release.yml", "lint.yml"):
        put(root / ".github" / "workflows" / name, b"on: [push]\njobs: {}\n")
    per_package = (FILES - written["files"] - 2 * PACKAGES // 10) // PACKAGES
    for p in range(PACKAGES):
        pkg = root / "packages" / f"pkg-{p:03d}-{rng.choice(WORDS)}"
        budget = per_package if p < PACKAGES - 1 else FILES - written["files"]
        _write_package(pkg, rng, pool, put, budget)
        if p % 10 == 0:
            (pkg / "empty" / "later").mkdir(parents=True, exist_ok=True)
            os.symlink("../README.md", pkg / "README.link.md")
            os.symlink("src", pkg / "source")
    return written


def _write_package(pkg: Path, rng: random.Random, pool: list[bytes], put: Any, budget: int) -> None:
    start = budget
    ext = rng.choice((".py", ".ts"))
    put(pkg / "README.md", b"# package\n" + b"".join(rng.choices(pool, k=20)))
    put(pkg / ("pyproject.toml" if ext == ".py" else "package.json"), b'{"name": "pkg"}\n')
    budget -= 2
    ignored = budget // 10
    if rng.random() < 0.3:  # build output (.gitignore) and installed packages (always skipped)
        for i in range(ignored // 2):
            data = rng.randbytes(rng.randint(200, 4000))
            put(pkg / "build" / f"{rng.choice(IGNORED_WORDS)}-{i}.js", data, "ignored")
        for i in range(ignored - ignored // 2):
            word = rng.choice(IGNORED_WORDS)
            put(pkg / "node_modules" / f"dep-{i % 7}" / f"{word}{i}.js", b"module.exports = 1;\n", "ignored")
    else:
        for i in range(ignored):
            put(pkg / "coverage" / f"{rng.choice(IGNORED_WORDS)}-{i}.log", b"lcov\n" * 40, "ignored")
    used = start - budget + ignored
    folders = [pkg / "src"]
    while used < start:
        if rng.random() < 0.18 or len(folders) == 1:
            parent = rng.choice(folders)
            if len(parent.relative_to(pkg).parts) < 6:
                folders.append(parent / f"{rng.choice(WORDS)}_{len(folders)}")
        folder = rng.choice(folders)
        roll = rng.random()
        stem = f"{rng.choice(WORDS)}_{rng.choice(WORDS)}_{used}"
        if roll < 0.03:
            put(
                folder / f"{stem}.png",
                b"\x89PNG\r\n\x1a\n\x00\x00" + rng.randbytes(rng.randint(500, 60_000)),
                "binary",
            )
        else:
            suffix = ext if roll < 0.75 else rng.choice((".json", ".md", ".txt", ".yaml"))
            if roll > 0.97:
                folder = pkg / "tests"
                stem = "test_" + stem
            lines = int(rng.lognormvariate(3.6, 1.0)) + 3
            put(folder / f"{stem}{suffix}", b"".join(rng.choices(pool, k=min(lines, 4000))))
        used += 1


def _line_pool(rng: random.Random) -> list[bytes]:
    lines = []
    for i in range(4000):
        words = rng.choices(WORDS, k=rng.randint(1, 9))
        indent = " " * (4 * rng.randint(0, 3))
        roll = i % 100
        if i < 2:  # one line in 2,000: the searched text is in ~4% of the files
            text = f"{indent}# TODO(perf): {' '.join(words)}"
        elif roll < 30:
            text = f"{indent}def {'_'.join(words[:3])}(self, {words[-1]}):"
        elif roll < 60:
            text = f"{indent}{words[0]} = {'.'.join(words[1:]) or 'None'}"
        elif roll < 80:
            text = f"{indent}return {' + '.join(words)}"
        else:
            text = f"{indent}# {' '.join(words)}"
        lines.append(text.encode() + b"\n")
    return lines


def rg_flags() -> list[str]:
    """The flags every search of the server gives ripgrep (its ignore rules), for the peer."""
    from mcp_server_ide.engines.search import Filters, rg_binary
    from mcp_server_ide.engines.search.scope import common_args

    return [rg_binary(), *common_args(Filters())]


def process_tree(pid: int) -> list[tuple[int, str, int]]:
    """``pid`` and every process below it: (pid, a short name, VmRSS in KB), ``pid`` first."""
    children = process_children()
    found: list[tuple[int, str, int]] = []
    todo = [pid]
    while todo:
        current = todo.pop(0)
        todo += sorted(children.get(current, []))
        try:
            status = Path(f"/proc/{current}/status").read_text().splitlines()
            argv = Path(f"/proc/{current}/cmdline").read_bytes().split(b"\x00")
        except OSError:
            continue
        rss = next((int(line.split()[1]) for line in status if line.startswith("VmRSS:")), 0)
        found.append((current, _short_name([a.decode(errors="replace") for a in argv if a]), rss))
    return found


def _short_name(argv: list[str]) -> str:
    """A process's program, and for an interpreter (node, python) what it runs: "node basedpyright"."""
    if not argv:
        return "?"
    program = Path(argv[0]).name
    script = next((a for a in argv[1:] if not a.startswith("-")), "")
    if script and program.startswith(("node", "python")):
        parts = Path(script).parts
        package = next((p for p in reversed(parts[:-1]) if p not in ("bin", "lib", "dist", "out")), "")
        if argv[1:2] == ["-m"]:
            return f"{program} -m {argv[2]}" if len(argv) > 2 else program
        return f"{program} {package or Path(script).name}"
    return program


def server_pid(argv: list[str]) -> int:
    """Our child process running the server (the SDK's stdio client spawns it directly)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (entry / "cmdline").read_bytes().split(b"\x00")
        except (OSError, IndexError, ValueError):
            continue
        if ppid == os.getpid() and b"mcp_server_ide" in cmdline:
            return int(entry.name)
    raise RuntimeError(f"no server process found for {argv}")


def count_lines(argv: list[str], root: Path, *, files: bool) -> int:
    out = subprocess.run(argv, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
    lines = out.decode("utf-8", "surrogateescape").splitlines()
    return len({line.split(":", 1)[0] for line in lines}) if not files else len(lines)


async def measure(
    rounds: int, root: Path, ours: list[str]
) -> tuple[dict[str, float], list[tuple[int, str, int]], dict[str, Any]]:
    from mcp import Client

    rg = rg_flags()
    find_rg = [*rg, "--files", "--iglob", f"*{FIND_TEXT}*", "--", "."]
    search_rg = [*rg, "-n", "--fixed-strings", "--regexp", SEARCH_TEXT, "--", "."]
    list_rg = [*rg, "--files", "--", "."]
    times: dict[str, list[float]] = {}

    def add(key: str, value: float) -> None:
        times.setdefault(key, []).append(value)

    async with Client(params(ours), mode=MODE) as our:
        pid = server_pid(ours)
        find_args = {"nameSubstring": FIND_TEXT, "maxResults": FIND_PAGE}
        search_args = {"searchText": SEARCH_TEXT, "maxResults": SEARCH_PAGE}
        list_args = {"recursive": True, "maxEntries": LIST_PAGE}
        touched = root / "bench-touched.txt"

        def change() -> None:
            if touched.exists():
                touched.unlink()
            else:
                touched.write_text("a change\n")

        ops: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
            ("ours.find", lambda: our.call_tool("find_files_by_name_substring", find_args)),
            ("rg.find", lambda: process_op(find_rg, root)),
            ("ours.search", lambda: our.call_tool("search_in_files_content", search_args)),
            ("rg.search", lambda: process_op(search_rg, root)),
            ("ours.list", lambda: our.call_tool("project_fs_list", list_args)),
            ("rg.list", lambda: process_op(list_rg, root)),
        ]
        changed_ops: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
            ("ours.list.changed", lambda: (change(), our.call_tool("project_fs_list", list_args))[1]),
            ("rg.list.changed", lambda: process_op(list_rg, root)),
        ]
        checks = {
            "find": (
                answer(await our.call_tool("find_files_by_name_substring", find_args)),
                count_lines(find_rg, root, files=True),
            ),
            "search": (
                answer(await our.call_tool("search_in_files_content", search_args)),
                count_lines(search_rg, root, files=False),
            ),
            "list": (
                answer(await our.call_tool("project_fs_list", list_args)),
                count_lines(list_rg, root, files=True),
            ),
        }
        for _, op in ops:  # warm-up: imports, the page cache
            for _ in range(2):
                await timed(op)
        await interleave(ops, rounds, add)
        await interleave(changed_ops, rounds, add)  # apart: a folder changed < 2 s ago is read again
        processes = process_tree(pid)
    return {key: ms(values) for key, values in times.items()}, processes, checks


def _total(result: Any) -> int | None:
    if isinstance(result, list):  # the whole list: a bare array
        return len(result)
    if isinstance(result, dict):
        return result.get("total")
    return None


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--tree", type=Path, help="the cache folder (default: under the temp folder)")
    parser.add_argument("--rebuild", action="store_true", help="build the tree again")
    args = parser.parse_args()
    target = tree_path(args.tree)
    if args.rebuild:
        shutil.rmtree(target, ignore_errors=True)
    root = build_tree(target)
    counts = json.loads((target / "done.json").read_text())
    print(
        f"tree: {root} ({counts['files']} files, {counts['ignored']} ignored, {counts['binary']} binary, "
        f"{counts['bytes'] / 1e6:.0f} MB)"
    )
    ours = [sys.executable, "-m", "mcp_server_ide", "--workspace", str(root)]
    w, processes, checks = anyio.run(measure, args.rounds, root, ours)
    print("same work on both sides (files counted by ours / by ripgrep):")
    for name, (result, theirs) in checks.items():
        total = _total(result)
        print(
            f"  {name:<8} {total} / {theirs}{'' if name == 'list' else ('' if total == theirs else '  DIFFERENT')}"
        )
    print(f"\nmedians over {args.rounds} interleaved rounds (ms):")
    for key in sorted(w):
        print(f"  {key:<14} {w[key]:8.1f}")
    rows = [
        ("find_files_by_name_substring / rg --files --iglob", w["ours.find"] / w["rg.find"], 1.5),
        ("search_in_files_content / rg -n", w["ours.search"] / w["rg.search"], 1.5),
        ("project_fs_list recursive / rg --files", w["ours.list"] / w["rg.list"], 1.5),
        ("  the same, right after a change in the tree", w["ours.list.changed"] / w["rg.list.changed"], 1.5),
    ]
    ok = True
    print("\nratios:")
    for name, value, limit in rows:
        ok &= value <= limit
        print(f"  {name:<52} {value:6.2f}   target <= {limit:.2f} {'ok' if value <= limit else 'MISSED'}")
    server, below = processes[0], processes[1:]
    mb = server[2] / 1024
    ok &= mb <= 150
    print(
        f"  {'server process RSS after the rounds (MB)':<52} {mb:6.1f}   target <= 150  {'ok' if mb <= 150 else 'MISSED'}"
    )
    print("\nprocesses the server started (language servers: their own memory, not the server's; no target):")
    for pid, name, kb in below or [(0, "none", 0)]:
        print(f"  {name:<40} pid {pid:<8} RSS {kb / 1024:7.1f} MB")
    print(f"  {'server and all of them':<40} {'':12} RSS {sum(kb for _, _, kb in processes) / 1024:7.1f} MB")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

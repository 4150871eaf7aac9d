"""``mcp-server-ide journal [--workspace DIR] [--state-dir DIR] show|clear``: the change journal on disk.

``show`` prints where a workspace's journal lives, its size in bytes, how many changes and
checkpoints it holds and its byte budget; it changes nothing. ``clear`` forgets every change and
checkpoint (asking nothing) and prints what it removed. Both work while servers run on the
workspace: ``clear`` holds the journal's lock file as their writes do, and change ids go on after
the last one (an id is never given twice).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .engines import journal as engine


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="mcp-server-ide journal",
        description="Show or clear a workspace's change journal (kept in the server's state folder).",
    )
    p.add_argument(
        "action", choices=["show", "clear"], help="show: where it is and how big; clear: remove it"
    )
    p.add_argument(
        "--workspace",
        "-w",
        type=Path,
        default=Path.cwd(),
        help="workspace root (default: the current folder)",
    )
    p.add_argument(
        "--state-dir",
        type=Path,
        help="the servers' state folder, if they run with --state-dir (default $XDG_STATE_HOME/mcp-server-ide)",
    )
    return p


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    from .workspace import Workspace

    if not args.workspace.is_dir():
        print(f"mcp-server-ide journal: --workspace {args.workspace} is not a folder", file=sys.stderr)
        return 2
    kwargs = {"state_home": args.state_dir} if args.state_dir is not None else {}
    ws = Workspace.open(args.workspace, **kwargs)
    folder = engine.journal_folder(ws.state_path)  # no folder is made for a workspace that has none
    if args.action == "clear":
        return _clear(ws.root, folder)
    return _show(ws.root, folder)


def _show(root: Path, folder: Path) -> int:
    usage = engine.measure(folder)
    budget, problem = _budget()
    ids = f" (#{usage.first_id}..#{usage.last_id})" if usage.entries else ""
    print(f"change journal of {root}")
    print(f"  folder:      {folder}{'' if folder.is_dir() else ' (none yet)'}")
    print(f"  size:        {usage.bytes} bytes{_human(usage.bytes)}")
    print(f"  budget:      {budget} bytes{_human(budget)} ({problem or _budget_source()})")
    print(f"  changes:     {usage.entries}{ids}")
    print(f"  checkpoints: {usage.checkpoints}")
    print(f"  contents:    {usage.blobs} stored")
    if problem:
        print(f"mcp-server-ide journal: {problem}", file=sys.stderr)
        return 1
    return 0


def _clear(root: Path, folder: Path) -> int:
    held = engine.clear(folder)
    if not held.entries and not held.checkpoints and not held.blobs:
        print(f"the change journal of {root} is empty: nothing to remove ({folder})")
        return 0
    print(
        f"cleared the change journal of {root}: removed {_count(held.entries, 'change')}, "
        f"{_count(held.checkpoints, 'checkpoint')} and {_count(held.blobs, 'stored content')}, "
        f"{held.bytes} bytes{_human(held.bytes)}, in {folder}"
    )
    return 0


def _budget() -> tuple[int, str | None]:
    import os

    raw = os.environ.get(engine.BUDGET_ENV, "").strip()
    if not raw:
        return engine.DEFAULT_BUDGET, None
    try:
        return engine.parse_size(raw), None
    except ValueError as exc:
        return engine.DEFAULT_BUDGET, f"{engine.BUDGET_ENV} is ignored: {exc}; the default applies"


def _budget_source() -> str:
    import os

    if os.environ.get(engine.BUDGET_ENV, "").strip():
        return f"from {engine.BUDGET_ENV}"
    return f"the default; set {engine.BUDGET_ENV}, e.g. 1G, where the server runs to change it"


def _count(n: int, thing: str) -> str:
    return f"{n} {thing}{'' if n == 1 else 's'}"


def _human(size: int) -> str:
    """`` (1.5 MiB)`` for a size of a KiB or more, else nothing."""
    if size < 1024:
        return ""
    value = size / 1024
    units = ["KiB", "MiB", "GiB"]
    while value >= 1024 and len(units) > 1:
        value /= 1024
        units.pop(0)
    return f" ({value:.1f} {units[0]})"

"""A folder swapped for a link out, again and again, while search, find, completion and the listings run.

Another process renames a real folder and a symlink to a folder outside into the same place in a tight
loop (SECURITY.md §1: recursive walks never follow links out). Ripgrep and a directory scan may meet
the link on their way; no answer may ever hold anything from outside: the outside files' names and
content carry a marker, and no answer may contain it. Runs through a real MCP client session for at
least 10 s (issue 13, item 1).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.types import PromptReference, ResourceTemplateReference

from .support.security import is_crash, registered_specs, result_text

pytestmark = pytest.mark.anyio

MARKER = "ZQXOUTSIDEQZX"
RACE_SECONDS = 10.0

SWAPPER = """
import ctypes, os, sys
ws, out, stop = sys.argv[1], sys.argv[2], sys.argv[3]
sub = os.path.join(ws, "sub")
link = os.path.join(os.path.dirname(ws), "swap-partner")  # beside the workspace, not in it
os.symlink(out, link)
libc = ctypes.CDLL(None, use_errno=True)
exchange = getattr(libc, "renameat2", None)
RENAME_EXCHANGE, AT_FDCWD = 2, -100
swaps = 0
while not os.path.exists(stop):
    if exchange is not None and exchange(AT_FDCWD, sub.encode(), AT_FDCWD, link.encode(), RENAME_EXCHANGE) == 0:
        swaps += 1  # one atomic rename: `sub` is the real folder and the link out by turns
        continue
    exchange = None  # no renameat2 here: rename the real folder aside and the link into place
    os.rename(sub, sub + ".real")
    os.rename(link, sub)
    os.rename(sub, link)
    os.rename(sub + ".real", sub)
    swaps += 1
if exchange is not None and os.path.islink(sub):
    exchange(AT_FDCWD, sub.encode(), AT_FDCWD, link.encode(), RENAME_EXCHANGE)
os.unlink(link)
print(swaps, flush=True)
"""


def _plant(ws: Path) -> Path:
    outside = ws.parent / "outside"
    outside.mkdir()
    for i in range(20):
        (outside / f"needle-{MARKER}-{i}.txt").write_text(f"needle {MARKER} {i}\n")
    (outside / "same.txt").write_text(f"needle {MARKER} same name\n")
    (outside / f"{MARKER}-dir").mkdir()
    (outside / f"{MARKER}-dir" / "needle-deep.txt").write_text(f"needle {MARKER} deep\n")
    sub = ws / "sub"
    sub.mkdir()
    (sub / "same.txt").write_text("needle inside, same name\n")
    (sub / "needle-inside.txt").write_text("needle inside\n")
    (sub / "deeper").mkdir()
    (sub / "deeper" / "needle-deeper.txt").write_text("needle deeper inside\n")
    (ws / "top-needle.txt").write_text("needle at the top\n")
    return outside


async def test_no_answer_holds_anything_from_outside_while_a_folder_is_swapped(mcp, ws_path: Path) -> None:
    outside = _plant(ws_path)
    names = {s.name for s in registered_specs()}
    calls: list[tuple[str, dict[str, Any]]] = [
        ("search_in_files_content", {"searchText": "needle"}),
        ("search_in_files_content", {"searchText": "need.e", "isRegex": True, "include": "sub/**"}),
        ("find_files_by_name_substring", {"nameSubstring": "needle"}),
        ("find_files_by_name_substring", {"nameSubstring": "sub/"}),
        ("list_files_in_folder", {"pathInProject": "sub"}),
    ]
    if "project_fs_list" in names:
        calls.append(("project_fs_list", {"recursive": True}))
    stop = ws_path.parent / "stop-swapping"
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(ws_path), str(outside), str(stop)],
        stdout=subprocess.PIPE,
        text=True,
    )
    rounds = 0
    answered: dict[str, int] = {}
    try:
        async with mcp(ws_path) as client:
            template = (await client.list_resource_templates()).resource_templates[0].uri_template
            ref = ResourceTemplateReference(type="ref/resource", uri=template)
            prompt = PromptReference(type="ref/prompt", name="explain_symbol")
            ends = time.monotonic() + RACE_SECONDS
            while time.monotonic() < ends or rounds < 5:
                rounds += 1
                for tool, args in calls:
                    with anyio.fail_after(30):
                        result = await client.call_tool(tool, args)
                    text = result_text(result)
                    assert not is_crash(tool, text), f"{tool} crashed in the race: {text[:300]}"
                    assert MARKER not in text, f"{tool}({args}) answered from outside: {text[:400]}"
                    answered[tool] = answered.get(tool, 0) + (not result.is_error)
                for where, value in ((ref, "sub/"), (ref, "sub/n"), (ref, "sub/Z"), (prompt, "sub/")):
                    with anyio.fail_after(30):
                        done = await client.complete(where, {"name": "path", "value": value})
                    shown = json.dumps(done.completion.values)
                    assert MARKER not in shown, (
                        f"completion of {value!r} ({where.type}) listed outside names: {shown}"
                    )
                with anyio.fail_after(30):
                    listed = await client.list_resources()
                shown = json.dumps([r.uri for r in listed.resources] + [r.name for r in listed.resources])
                assert MARKER not in shown, f"resources/list listed outside names: {shown[:400]}"
    finally:
        stop.touch()
        swaps = int(swapper.communicate(timeout=30)[0] or 0)
    assert swaps > rounds, f"the swapper ran {swaps} rounds beside {rounds} rounds of calls"
    assert answered["search_in_files_content"] > 0 and answered["find_files_by_name_substring"] > 0

"""Inline tools are bounded: a call that may wait, diff or read much never holds the event loop.

The editor model's state file is shared by every server process on a workspace, under a file lock
(``editor.json.lock``). Here a real second process holds that lock; an editor call that needs it
waits, and meanwhile the same stdio server still answers a listing and an inline read. The
waiting call is seen waiting in ``/proc/locks`` (the kernel lists a blocked ``flock`` with ``->``),
so the order is proven by events, not by timing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from .support.results import payload
from .support.servers import stdio_params

pytestmark = pytest.mark.anyio

LOCKER = """
import fcntl, sys
with open(sys.argv[1], "a") as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)
    print("locked", flush=True)
    sys.stdin.readline()
"""


def _someone_waits_for(lock: Path) -> bool:
    """Whether a process is blocked in ``flock`` on ``lock`` (a ``->`` line of /proc/locks on its inode)."""
    inode = os.stat(lock).st_ino
    return any(
        "->" in line and "FLOCK" in line and f":{inode} " in line
        for line in Path("/proc/locks").read_text().splitlines()
    )


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("toggle_debugger_breakpoint", {"pathInProject": "a.txt", "line": 2}),
        ("open_file_in_editor", {"pathInProject": "a.txt", "startLine": 2}),
        ("get_debugger_breakpoints", {}),
    ],
)
async def test_an_editor_call_waiting_for_the_state_lock_leaves_the_server_answering(
    ws_path: Path, name: str, arguments: dict[str, Any]
) -> None:
    (ws_path / "a.txt").write_text("one\ntwo\nthree\n")
    async with Client(stdio_params(ws_path)) as client:
        assert not (await client.call_tool("get_debugger_breakpoints", {})).is_error  # the model exists
        lock = next(Path(os.environ["XDG_STATE_HOME"]).rglob("editor.json.lock"))
        state = lock.with_name("editor.json")
        locker = subprocess.Popen(
            [sys.executable, "-c", LOCKER, str(lock)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert locker.stdin is not None and locker.stdout is not None
        try:
            assert await anyio.to_thread.run_sync(locker.stdout.readline) == "locked\n"
            # Another process saved the state: even a read of the model must reload it under the lock.
            state.write_bytes(state.read_bytes().replace(b'"version"', b'"version" ', 1))
            answered: dict[str, Any] = {}
            with anyio.fail_after(60):  # a guard against a hang, never reached when the server is right
                async with anyio.create_task_group() as tg:

                    async def waiting_call() -> None:
                        answered["result"] = await client.call_tool(name, arguments)

                    tg.start_soon(waiting_call)
                    while not _someone_waits_for(lock):  # the server's call is now blocked in flock
                        await anyio.sleep(0.01)
                    assert (await client.list_tools()).tools  # a listing, answered
                    read = await client.call_tool("get_file_text_by_path", {"pathInProject": "a.txt"})
                    assert payload(read)["content"] == "one\ntwo\nthree\n"  # an inline read, answered
                    assert "result" not in answered and _someone_waits_for(lock)  # the call still waits
                    locker.stdin.write("\n")
                    locker.stdin.flush()
        finally:
            if locker.poll() is None:
                locker.kill()
            locker.wait()
        assert not answered["result"].is_error, answered["result"].content[0].text


def test_a_read_runs_inline_only_when_its_file_is_small(ws_path: Path) -> None:
    """The verdict both the SDK's path (``ToolRunner._invoke``) and the stdio direct lane follow;
    ``tests/test_direct_lane.py`` shows a big read leaving the lane for the SDK's thread."""
    from mcp_server_ide import registry
    from mcp_server_ide.runner import make_local_call, runs_inline
    from mcp_server_ide.tools.files import INLINE_READ_BYTES
    from mcp_server_ide.workspace import Workspace

    registry.load_builtin_tools()
    (ws_path / "small.txt").write_text("x\n")
    (ws_path / "big.txt").write_bytes(b"y" * (INLINE_READ_BYTES + 1))
    (ws_path / "folder").mkdir()
    ws = Workspace.open(ws_path)
    try:
        call = make_local_call(ws, "test")
        for name, key in (("get_file_text_by_path", "pathInProject"), ("project_fs_read", "path")):
            spec = registry.get(name)
            assert spec is not None
            assert runs_inline(spec, {key: "small.txt"}, call)
            assert not runs_inline(spec, {key: "big.txt"}, call)
            # Refused or nothing to read: answered at once, inline.
            for answered_at_once in ("missing.txt", "folder", "../../etc/passwd"):
                assert runs_inline(spec, {key: answered_at_once}, call)
    finally:
        ws.close()

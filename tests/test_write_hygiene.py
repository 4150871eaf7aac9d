"""What a write does besides writing (craft issue, bugs 5 and 6).

- A new file gets the mode the process umask implies, and no write ever changes the umask (it is
  process-wide: a ``mkdir`` or child process of another thread would get mode 0777 in that window).
"""

from __future__ import annotations

import os
import stat
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

pytestmark = pytest.mark.anyio


def _umask_now() -> int:
    """The process umask as the kernel has it, read without changing it."""
    with open("/proc/self/status", "rb") as status:
        for line in status:
            if line.startswith(b"Umask:"):
                return int(line.split()[1], 8)
    raise AssertionError("no Umask line in /proc/self/status")


async def _ok(client: Any, tool: str, args: dict[str, Any]) -> Any:
    result = await client.call_tool(tool, args)
    assert not result.is_error, f"{tool}({args}): {result.content[0].text}"
    return result


# ----------------------------------------------------------------------------- umask


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_new_files_get_the_mode_the_umask_implies(ws_path: Path) -> None:
    # The real server on stdio, started under umask 027 as a shell would start it.
    params = StdioServerParameters(
        command="/bin/sh",
        args=[
            "-c",
            'umask 027 && exec "$0" -m mcp_server_ide --workspace "$1"',
            sys.executable,
            str(ws_path),
        ],
        env=dict(os.environ),
    )
    (ws_path / "private.txt").write_text("old\n")
    os.chmod(ws_path / "private.txt", 0o600)
    async with Client(params) as client:
        await _ok(client, "create_new_file_with_text", {"pathInProject": "new/a.txt", "text": "a\n"})
        await _ok(client, "rewrite_file_content", {"pathInProject": "b.txt", "text": "b\n"})
        await _ok(client, "get_file_text_by_path", {"pathInProject": "private.txt"})
        await _ok(client, "rewrite_file_content", {"pathInProject": "private.txt", "text": "new\n"})
    assert _mode(ws_path / "new/a.txt") == 0o640
    assert _mode(ws_path / "new") == 0o750
    assert _mode(ws_path / "b.txt") == 0o640
    assert _mode(ws_path / "private.txt") == 0o600, "an existing file keeps its own mode"


async def test_writes_never_change_the_process_umask(mcp, ws_path: Path) -> None:
    # Every thread (the event loop's and the workers that run the tools) reads the real umask after
    # each call into the os module returns: a write that set it, even for an instant, is seen.
    before = _umask_now()
    seen: set[int] = set()
    os_calls = [0]

    def watch(frame: Any, event: str, arg: Any) -> None:
        if event == "c_return" and getattr(arg, "__module__", None) == "posix":
            os_calls[0] += 1
            seen.add(_umask_now())

    threading.setprofile(watch)
    sys.setprofile(watch)
    try:
        async with mcp(ws_path) as client:
            for i in range(5):
                await _ok(client, "create_new_file_with_text", {"pathInProject": f"c{i}.txt", "text": "c\n"})
                await _ok(client, "rewrite_file_content", {"pathInProject": f"r/r{i}.txt", "text": "r\n"})
                await _ok(client, "project_fs_write", {"path": f"p{i}.txt", "content": "p\n"})
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    assert os_calls[0] > 100, "the watch saw no writes: the tools ran on threads it was not set on"
    assert seen == {before}, f"the umask was changed during writes: {sorted(oct(m) for m in seen)}"
    assert _mode(ws_path / "c0.txt") == 0o666 & ~before

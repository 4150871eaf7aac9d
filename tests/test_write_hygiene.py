"""What a write does besides writing (craft issue, bugs 5 and 6).

- A new file gets the mode the process umask implies, and no write ever changes the umask (it is
  process-wide: a ``mkdir`` or child process of another thread would get mode 0777 in that window).
- Our temp files left by a killed write are never listed and never removed by a listing (nor by
  anything under ``--read-only``); a write sweeps the stale ones of its own folder, and a server's
  start-up sweeps the workspace. A leftover is a temp file no live writer holds (a writer locks its
  temp file; the kernel drops the lock of a killed one), however young, or one over a minute old: a
  temp file a live writer holds stays (issue 13, item 9).
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
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


# ----------------------------------------------------------------------------- temp leftovers

LISTINGS: list[tuple[str, dict[str, Any]]] = [
    ("list_files_in_folder", {"pathInProject": "/"}),
    ("list_files_in_folder", {"pathInProject": "src"}),
    ("project_fs_list", {"recursive": True}),
    ("project_fs_list", {"recursive": True, "includeIgnored": True}),
    ("project_fs_list", {"dir": "src"}),
    ("find_files_by_name_substring", {"nameSubstring": "mcp-ide", "includeIgnored": True}),
]


def _leftover(ws: Path, rel: str, *, age_s: float = 3600) -> Path:
    """What a killed write leaves: our temp name beside its file, partly written, ``age_s`` old."""
    path = ws / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("half a wri")
    then = time.time() - age_s
    os.utime(path, (then, then))
    return path


HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.flock(fd, fcntl.LOCK_EX)  # as a writer holds its temp file (engines/textio/atomic.py)
print("held", flush=True)
sys.stdin.read()
"""


@contextlib.contextmanager
def _held(path: Path) -> Iterator[subprocess.Popen[str]]:
    """A live writer (another process) holding the lock on temp file ``path`` while the block runs."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        yield proc
    finally:
        proc.kill()
        proc.wait(10)


def _killed_young(ws: Path, rel: str) -> Path:
    """What a write killed with ``kill -9`` a moment ago leaves: a temp file, seconds old, whose
    writer held its lock until the kill."""
    path = _leftover(ws, rel, age_s=0)
    with _held(path) as writer:
        writer.send_signal(signal.SIGKILL)
        writer.wait(10)
    return path


async def _list_everything(client: Any) -> None:
    for tool, args in LISTINGS:
        text = (await _ok(client, tool, args)).content[0].text
        assert "mcp-ide.tmp" not in text, f"{tool}({args}) listed a temp file: {text[:300]}"


def _stdio(ws: Path, *args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_server_ide", "--workspace", str(ws), *args],
        env=dict(os.environ),
    )


async def test_a_read_only_server_removes_no_temp_file(ws_path: Path) -> None:
    (ws_path / "src").mkdir()
    (ws_path / "src/app.py").write_text("print('app')\n")
    (ws_path / ".gitignore").write_text("build/\n")
    stale = [
        _leftover(ws_path, ".top.txt.k1llEd0.mcp-ide.tmp"),
        _leftover(ws_path, "src/.app.py.k1llEd1.mcp-ide.tmp"),
        _leftover(ws_path, "build/out/.x.js.k1llEd2.mcp-ide.tmp"),
    ]
    async with Client(_stdio(ws_path, "--read-only")) as client:
        await _list_everything(client)
    assert all(p.exists() for p in stale), "a read-only server removed a file"


async def test_a_listing_keeps_temp_files_and_a_write_sweeps_its_own_folder(mcp, ws_path: Path) -> None:
    (ws_path / "src").mkdir()
    (ws_path / "src/app.py").write_text("print('app')\n")
    stale_here = _leftover(ws_path, "src/.app.py.k1llEd1.mcp-ide.tmp")
    young_here = _killed_young(ws_path, "src/.app.py.y0ung.mcp-ide.tmp")
    fresh_here = _leftover(ws_path, "src/.app.py.fr3sh.mcp-ide.tmp", age_s=0)
    stale_elsewhere = _leftover(ws_path, "lib/.util.py.k1llEd2.mcp-ide.tmp")
    async with mcp(ws_path) as client:
        await _list_everything(client)
        assert stale_here.exists() and stale_elsewhere.exists(), "a listing removed a file"
        with _held(fresh_here):  # in flight: a live writer holds it
            await _ok(client, "create_new_file_with_text", {"pathInProject": "src/new.py", "text": "x = 1\n"})
        assert not stale_here.exists(), "a write left a stale temp file of its folder"
        assert not young_here.exists(), "a write left a temp file of its folder whose writer was killed"
        assert fresh_here.exists(), "a write removed a temp file a live writer holds"
        assert stale_elsewhere.exists(), "a write swept a folder it did not write in"
        # A leftover that appears later in a folder already written in is swept by the next write there.
        later = _leftover(ws_path, "src/.new.py.k1llEd3.mcp-ide.tmp")
        # (The folder's mtime tells a write that it changed; set apart from the last write's, in case
        # this filesystem's clock is too coarse to tell two changes in a row apart.)
        os.utime(ws_path / "src", (time.time() - 7200, time.time() - 7200))
        await _ok(client, "project_fs_write", {"path": "src/new.py", "content": "x = 2\n"})
        assert not later.exists()


async def test_start_up_sweeps_the_workspace(ws_path: Path) -> None:
    (ws_path / ".gitignore").write_text("build/\n")
    stale = [
        _leftover(ws_path, ".top.txt.k1llEd0.mcp-ide.tmp"),
        _leftover(ws_path, "src/deep/er/.app.py.k1llEd1.mcp-ide.tmp"),
        _leftover(ws_path, "build/out/.x.js.k1llEd2.mcp-ide.tmp"),  # ignored folders too
        _leftover(ws_path, ".hidden/.y.k1llEd3.mcp-ide.tmp"),
    ]
    # Killed with kill -9 a moment before this start: young, but no writer holds it any more.
    stale.append(_killed_young(ws_path, "src/.app.py.y0ung.mcp-ide.tmp"))
    fresh = _leftover(ws_path, "src/.app.py.fr3sh.mcp-ide.tmp", age_s=0)
    with _held(fresh):  # in flight: a live writer (another server, say) holds it
        async with Client(_stdio(ws_path)) as client:
            await _ok(client, "get_terminal_info", {})
            with anyio.fail_after(30):
                while any(p.exists() for p in stale):
                    await anyio.sleep(0.05)
        assert fresh.exists(), "the start-up sweep removed a temp file a live writer holds"

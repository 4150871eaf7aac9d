"""Unbounded work on the event loop (issue 13 item 6), through a real MCP client session: a hostile
regex, huge folders and deep trees answer within bounds, and the server keeps answering meanwhile."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from .support.results import call, error

pytestmark = pytest.mark.anyio


async def test_a_catastrophic_until_pattern_does_not_freeze_the_server(mcp: Any, ws_path: Path) -> None:
    # (a+)+$ against 40 a's and a '!' backtracks ~2^40 steps on Python's re: the call (and every
    # other request, since it ran on the event loop) would hang for days. On RE2 it is immediate.
    async with mcp(ws_path) as client:
        job = await call(client, "start_job", command="printf 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\\n'")
        with anyio.fail_after(30):  # a generous deadline, not a timing assertion
            out = await call(client, "get_job_output", jobId=job["jobId"], waitMs=2000, untilPattern="(a+)+$")
            assert out["output"].startswith("aaaa") and out["patternMatched"] is False
            await call(client, "list_jobs")


async def test_a_pattern_re2_cannot_run_is_refused_with_the_rule(mcp: Any, ws_path: Path) -> None:
    async with mcp(ws_path) as client:
        job = await call(client, "start_job", command="echo ready")
        text = await error(client, "get_job_output", jobId=job["jobId"], untilPattern=r"(re)\1")
        assert "invalid untilPattern" in text and "RE2" in text and "backreferences" in text
        text = await error(client, "get_job_output", jobId=job["jobId"], untilPattern="(?=ready)")
        assert "lookaround" in text
        ok = await call(client, "get_job_output", jobId=job["jobId"], waitMs=5000, untilPattern=r"re\w+")
        assert ok["patternMatched"] is True


async def test_a_catastrophic_glob_does_not_freeze_a_search(mcp: Any, ws_path: Path) -> None:
    # '*a*a*…*b' becomes [^/]*a[^/]*a…b: polynomial of degree 12 on Python's re for a long name.
    (ws_path / ("a" * 200)).write_text("needle\n")
    async with mcp(ws_path) as client:
        with anyio.fail_after(30):
            found = await client.call_tool(
                "search_in_files_content", {"searchText": "needle", "include": ["*a*a*a*a*a*a*a*a*a*a*a*b"]}
            )
            assert not found.is_error, found.content[0].text
            await call(client, "list_jobs")


async def test_a_big_folder_is_listed_a_page_at_a_time(mcp: Any, ws_path: Path) -> None:
    folder = ws_path / "big"
    folder.mkdir()
    for i in range(2500):
        (folder / f"f{i:05d}.txt").write_bytes(b"x")
    (folder / "zsub").mkdir()
    async with mcp(ws_path) as client:
        first = await call(client, "list_files_in_folder", pathInProject="big")
        assert isinstance(first, dict), "a 2,501-entry folder came back as one answer"
        assert first["total"] == 2501 and first["truncated"] is True and first["nextOffset"] == 1000
        assert len(first["result"]) == 1000 and first["result"][0]["name"] == "zsub"  # folders first
        seen = [e["name"] for e in first["result"]]
        offset = first["nextOffset"]
        while offset is not None:
            page = await call(client, "list_files_in_folder", pathInProject="big", offset=offset)
            seen += [e["name"] for e in page["result"]]
            offset = page.get("nextOffset")
        assert seen == ["zsub", *(f"f{i:05d}.txt" for i in range(2500))]
        small = await call(client, "list_files_in_folder", pathInProject="big/zsub")
        assert small == []  # a folder that fits one page is the plain array, as before


def _chain(root: Path, depth: int) -> None:
    """``root/d/d/.../d/deep.txt``, ``depth`` folders deep (made relative to each parent, as no path
    that long can be opened at once)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        os.close(os.open("deep.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    finally:
        os.close(fd)


def _remove_chain(root: Path) -> None:
    """Undo :func:`_chain` without recursion (shutil.rmtree recurses once a level): 400 levels at a
    time, the rest of the chain moved up to the root first."""
    flags = os.O_RDONLY | os.O_DIRECTORY
    top = os.open(root, flags)
    try:
        while os.path.lexists(root / "d"):
            fds = [top]
            try:
                while len(fds) < 400:
                    try:
                        fds.append(os.open("d", flags, dir_fd=fds[-1]))
                    except FileNotFoundError:
                        break
                with contextlib.suppress(FileNotFoundError):
                    os.rename("d", "rest", src_dir_fd=fds[-1], dst_dir_fd=top)
                with contextlib.suppress(FileNotFoundError):
                    os.unlink("deep.txt", dir_fd=fds[-1])
                while len(fds) > 1:
                    os.close(fds.pop())
                    os.rmdir("d", dir_fd=fds[-1])
            finally:
                for fd in fds[1:]:
                    os.close(fd)
            with contextlib.suppress(FileNotFoundError):
                os.rename("rest", "d", src_dir_fd=top, dst_dir_fd=top)
    finally:
        os.close(top)


@pytest.fixture
def deep_ws(ws_path: Path) -> Iterator[Path]:
    (ws_path / "top.txt").write_text("top\n")
    _chain(ws_path, 3000)
    yield ws_path
    _remove_chain(ws_path)


async def test_resources_list_of_a_very_deep_tree_answers(mcp: Any, deep_ws: Path) -> None:
    async with mcp(deep_ws) as client:
        with anyio.fail_after(60):
            listed = await client.list_resources()
        names = [r.name for r in listed.resources]
        assert "top.txt" in names
        assert not any(n.endswith("deep.txt") for n in names)  # 3,000 folders down: beyond the bound


async def test_a_recursive_listing_of_a_very_deep_chain_is_bounded_and_says_so(
    mcp: Any, deep_ws: Path
) -> None:
    async with mcp(deep_ws) as client:
        with anyio.fail_after(45):  # before the bound: ~75 s here (every level reopened from the root)
            listed = await call(client, "project_fs_list", recursive=True, includeIgnored=True)
        assert listed["truncated"] is True and "levels deep were not entered" in listed["note"]
        paths = [e["path"] for e in listed["entries"]]
        assert "top.txt" in paths and not any(p.endswith("deep.txt") for p in paths)
        flat = await call(client, "project_fs_list")
        assert "note" not in flat and {e["path"] for e in flat["entries"]} == {"top.txt", "d"}

"""Unbounded work on the event loop (issue 13 item 6), through a real MCP client session: a hostile
regex, huge folders and deep trees answer within bounds, and the server keeps answering meanwhile."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from .support.results import payload

pytestmark = pytest.mark.anyio


async def call(client: Any, tool: str, **args: Any) -> Any:
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content[0].text
    return payload(result)


async def error(client: Any, tool: str, **args: Any) -> str:
    result = await client.call_tool(tool, args)
    assert result.is_error, result.content[0].text
    return result.content[0].text


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

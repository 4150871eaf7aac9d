"""Compact result shapes over MCP: what is left out at its default comes back when it says something.

(The REST door keeps the seed's full shapes: ``test_seed_shapes_rest.py``; the outline:
``test_code_outline.py``.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .support.gitrepo import init_repo, isolated_git, ok

pytestmark = pytest.mark.anyio


async def test_a_committer_who_is_not_the_author_is_shown(
    mcp: Any, ws_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolated_git(monkeypatch, tmp_path / "home")
    repo = init_repo(ws_path)
    mine = repo.commit("Mine", {"a.txt": "a\n"})
    repo.write("b.txt", "b\n")
    repo("add", "b.txt")
    repo(
        "commit",
        "-q",
        "-m",
        "Applied for someone",
        "--author",
        "Other Person <other@example.com>",
        env={"GIT_COMMITTER_DATE": "2030-01-01T00:00:00+00:00"},
    )
    async with mcp(ws_path) as client:
        own = await ok(client, "get_commit_details", commitHash=mine)
        applied = await ok(client, "get_commit_details", commitHash="HEAD")
    assert set(own) == {"hash", "message", "author", "authorEmail", "date", "parents", "fileChanges"}
    assert own["fileChanges"] == [{"path": "a.txt", "type": "ADDITION"}]
    assert applied["author"] == "Other Person" and applied["committer"] == "Test Author"
    assert applied["committerDate"].startswith("2030-01-01") and applied["parents"] == [mine]


async def test_run_results_keep_what_says_something(mcp: Any, ws_path: Path) -> None:
    async with mcp(ws_path) as client:
        ran = await ok(client, "execute_os_specific_command", unixCommand="echo hi", windowsCommand="echo hi")
        assert ran == {
            "osType": "Linux",
            "command": "echo hi",
            "executed": True,
            "stdout": "hi\n",
            "exitCode": 0,
            "commandSource": "unixCommand",
        }
        slow = await ok(client, "run_command_on_background", command="echo err >&2; sleep 5", timeout=300)
        assert slow["timedOut"] is True and slow["stderr"] == "err\n" and "stdout" not in slow
        job = await ok(client, "start_job", command="cat", stdin=True)
        assert job["acceptsInput"] is True and "title" not in job  # the title is the command
        await ok(client, "send_job_input", jobId=job["jobId"], text="x\n", closeInput=True)
        out = await ok(client, "get_job_output", jobId=job["jobId"], waitMs=10000)
        assert out == {"state": "exited", "exitCode": 0, "output": "x\n", "nextOffset": 2}
        later = await ok(client, "get_job_output", jobId=job["jobId"], offset=0, maxBytes=1)
        assert later == {"state": "exited", "exitCode": 0, "output": "x", "nextOffset": 1, "hasMore": True}

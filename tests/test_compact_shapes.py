"""Compact result shapes over MCP: what is left out at its default comes back when it says something.

(The REST door keeps the seed's full shapes: ``test_seed_shapes_rest.py``; the outline:
``test_code_outline.py``.)
"""

from __future__ import annotations

import hashlib
import json
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
    assert own["fileChanges"] == {"ADDITION": ["a.txt"]}
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


async def test_status_commit_and_diff_say_each_fact_once(
    mcp: Any, ws_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Status grouped by side and change type (a file staged and changed again is on both sides), a
    commit's files by type (a move as {path, oldPath}), a diff without the `index`/`---`/`+++` lines."""
    isolated_git(monkeypatch, tmp_path / "home")
    repo = init_repo(ws_path)
    repo.commit("base", {"a.py": "a = 1\n", "b.py": "b = 1\n", "old.py": "x = 1\n" * 5, "gone.py": "g\n"})
    repo.write("a.py", "a = 2\n")
    repo("add", "a.py")
    repo.write("a.py", "a = 3\n")
    repo.write("b.py", "b = 2\n")
    repo("mv", "old.py", "new.py")
    (ws_path / "gone.py").unlink()
    repo.write("notes.txt", "n\n")
    async with mcp(ws_path) as client:
        status = await ok(client, "get_project_vcs_status")
        assert status == {
            "staged": {"MODIFICATION": ["a.py"], "MOVED": [{"path": "new.py", "oldPath": "old.py"}]},
            "unstaged": {"MODIFICATION": ["a.py", "b.py"], "DELETION": ["gone.py"]},
            "untracked": ["notes.txt"],
        }
        repo("add", "a.py", "b.py", "gone.py")
        done = await ok(client, "commit_changes", message="all")
        assert done == {
            "commitHash": repo.head(),
            "branch": "main",
            "fileChanges": {
                "MODIFICATION": ["a.py", "b.py"],
                "DELETION": ["gone.py"],
                "MOVED": [{"path": "new.py", "oldPath": "old.py"}],
            },
        }
        assert await ok(client, "get_project_vcs_status") == {"untracked": ["notes.txt"]}
        diff = await ok(client, "get_file_diff", pathInProject=".", commit2="HEAD")
    assert diff.startswith("diff --git a/a.py b/a.py\n@@ -1 +1 @@\n-a = 1\n+a = 3\n"), diff
    assert "deleted file mode 100644\n@@ -1 +0,0 @@\n-g\n" in diff
    assert "rename from old.py\nrename to new.py\n" in diff
    assert not [line for line in diff.splitlines() if line.startswith(("index ", "--- ", "+++ "))]


async def test_a_removed_line_that_looks_like_a_header_stays_in_the_diff(
    mcp: Any, ws_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolated_git(monkeypatch, tmp_path / "home")
    repo = init_repo(ws_path)
    repo.commit("base", {"notes.md": "-- a\n++ b\nindex c\n"})
    repo.write("notes.md", "kept\n")
    async with mcp(ws_path) as client:
        diff = await ok(client, "get_file_diff", pathInProject="notes.md")
    assert diff.endswith("@@ -1,3 +1 @@\n--- a\n-++ b\n-index c\n+kept\n"), diff


async def test_a_read_leaves_out_what_the_caller_gave(mcp: Any, ws_path: Path) -> None:
    (ws_path / "ten.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    async with mcp(ws_path) as client:
        part = await ok(client, "project_fs_read", path="ten.txt", startLine=3, endLine=4)
        past = await ok(client, "project_fs_read", path="./ten.txt", startLine=9, endLine=20)
    assert set(part) == {"content", "totalLines", "bytes", "hash"} and part["content"] == "line 3\nline 4\n"
    assert (past["path"], past["endLine"], "startLine" in past) == ("ten.txt", 10, False)


async def test_a_short_hash_guards_an_edit_as_the_whole_one_does(mcp: Any, ws_path: Path) -> None:
    """MCP hashes are 16 digits of the SHA-256: such a prefix (or more) is taken as expectedHash; a shorter
    one, or a stale one, is refused and changes nothing."""
    target = ws_path / "f.txt"
    target.write_text("v1\n")
    async with mcp(ws_path) as client:
        read = await ok(client, "project_fs_read", path="f.txt")
        assert read["hash"] == hashlib.sha256(b"v1\n").hexdigest()[:16]
        short = await client.call_tool(
            "project_fs_write", {"path": "f.txt", "content": "v2\n", "expectedHash": read["hash"][:15]}
        )
        assert short.is_error and "changed since it was read" in short.content[0].text
        wrote = await ok(client, "project_fs_write", path="f.txt", content="v2\n", expectedHash=read["hash"])
        assert wrote["hash"] == hashlib.sha256(b"v2\n").hexdigest()[:16]
        stale = await client.call_tool(
            "replace_specific_text",
            {"pathInProject": "f.txt", "searchText": "v2", "replaceText": "v3", "expectedHash": read["hash"]},
        )
        assert stale.is_error and target.read_text() == "v2\n"
        done = await ok(
            client,
            "replace_specific_text",
            pathInProject="f.txt",
            searchText="v2",
            replaceText="v3",
            expectedHash=wrote["hash"],
        )
    assert done["hash"] == hashlib.sha256(b"v3\n").hexdigest()[:16] and target.read_text() == "v3\n"


async def test_a_plain_run_answers_its_exit_code_and_stdout_as_text(mcp: Any, ws_path: Path) -> None:
    """No JSON escaping of every newline and quote of a program's output: `exit code N`, a newline, stdout
    verbatim; stderr (or a timeout, a cut) keeps the JSON object, and so does --structured-content."""
    from mcp_server_ide.server import ServerOptions

    command = "printf 'say \"hi\"\\n\\tdone\\n'; exit 2"
    async with mcp(ws_path) as client:
        plain = await client.call_tool("run_command_on_background", {"command": command})
        quiet = await client.call_tool("run_command_on_background", {"command": "true"})
        both = await client.call_tool("run_command_on_background", {"command": "echo out; echo err >&2"})
    assert [b.text for b in plain.content] == ['exit code 2\nsay "hi"\n\tdone\n'] and not plain.is_error
    assert [b.text for b in quiet.content] == ["exit code 0\n"]
    assert json.loads(both.content[0].text) == {"stdout": "out\n", "stderr": "err\n", "exitCode": 0}
    async with mcp(ws_path, options=ServerOptions(structured_content=True)) as client:
        structured = await client.call_tool("run_command_on_background", {"command": command})
    assert structured.structured_content == {"stdout": 'say "hi"\n\tdone\n', "exitCode": 2}

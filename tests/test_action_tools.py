"""Action tools (seed 000 "Action"): every action listed for a real workspace runs and changes what it says
(a badly formatted file gets formatted, tasks and tests run as jobs whose results are readable, git fetch
brings the remote's branch...), and get_progress_indicators shows real running work and nothing after."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from mcp_server_ide.workspace import Policy

from .support.results import call_data as call
from .support.system import require_system

pytestmark = pytest.mark.anyio

MESSY = "import sys\nimport os\ndef add( a,b ):\n  return a+b\nvalues = [1,2,\n   3]\nprint(os.sep, sys.argv, add(*values[:2]))\n"
IMPORTS = "import sys\nimport os\n\nprint(os.sep, sys.argv)\n"
UNUSED = "import json\nimport os\n\nprint(os.sep)\n"
TASKS = """{
  "version": "2.0.0",
  "tasks": [
    {"label": "build", "type": "shell", "command": "echo built > build.txt && echo build-ok",
     "group": {"kind": "build", "isDefault": true}},  // the default build task
    {"label": "long", "type": "shell", "command": "sleep 30"},
    {"label": "short wait", "type": "shell", "command": "sleep 1.5; echo waited"},
    {"label": "until released", "type": "shell", "command": "until [ -e release ]; do sleep 0.05; done; echo released"},
  ],
}
"""
LAUNCH = """{
  "configurations": [
    {"name": "Run main", "type": "debugpy", "request": "launch", "program": "${workspaceFolder}/main.py"},
  ],
}
"""


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


@pytest.fixture
def project(ws_path: Path, tmp_path: Path) -> Path:
    (ws_path / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0.1"\n')
    (ws_path / "pkg").mkdir()
    (ws_path / "pkg/__init__.py").write_text("")
    (ws_path / "pkg/messy.py").write_text(MESSY)
    (ws_path / "pkg/imports.py").write_text(IMPORTS)
    (ws_path / "pkg/unused.py").write_text(UNUSED)
    (ws_path / "tests").mkdir()
    (ws_path / "tests/test_math.py").write_text(
        "def test_adds():\n    assert 1 + 1 == 2\n\n\ndef test_fails():\n    assert 2 + 2 == 5\n"
    )
    (ws_path / "main.py").write_text("open('ran.txt', 'w').write('main ran')\nprint('main ran')\n")
    (ws_path / ".vscode").mkdir()
    (ws_path / ".vscode/tasks.json").write_text(TASKS)
    (ws_path / ".vscode/launch.json").write_text(LAUNCH)
    # The project's interpreter, as VS Code's Python extension would be told: this one has pytest.
    (ws_path / ".vscode/settings.json").write_text(f'{{"python.defaultInterpreterPath": "{sys.executable}"}}')
    # A git repository whose remote has a commit the workspace has not fetched yet.
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(remote), str(other))
    (other / "README").write_text("from the remote\n")
    git(other, "add", "README")
    git(other, "commit", "-q", "-m", "remote commit")
    git(other, "push", "-q", "origin", "HEAD:main")
    git(ws_path, "init", "-q", "-b", "main")
    git(ws_path, "remote", "add", "origin", str(remote))
    return ws_path


async def eventually(check: Callable[[], Awaitable[bool] | bool], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
        outcome = check()
        if not isinstance(outcome, bool):
            outcome = await outcome
        if outcome:
            return
        assert time.monotonic() < deadline, "the action's effect never showed"
        await anyio.sleep(0.05)


def ruff_formatted(text: str, *args: str) -> str:
    ruff = Path(sys.executable).parent / "ruff"
    return subprocess.run(
        [str(ruff), *args, "--stdin-filename", "x.py", "-"],
        input=text,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


async def test_every_listed_action_does_what_it_says(mcp: Any, project: Path) -> None:
    listed: set[str] = set()
    verified: set[str] = set()

    async with mcp(project) as client:

        async def actions() -> dict[str, str]:
            found = {a["id"]: a["text"] for a in await call(client, "list_available_actions")}
            listed.update(found)
            return found

        async def execute(action_id: str) -> set[str]:
            """Run an action; the ids of the jobs it started."""
            before = {j["jobId"] for j in await call(client, "list_jobs")}
            assert await call(client, "execute_action_by_id", actionId=action_id) == "ok"
            verified.add(action_id)  # a job is listed by the time the action answers
            return {j["jobId"] for j in await call(client, "list_jobs")} - before

        async def finished(job_ids: set[str]) -> dict[str, Any]:
            assert len(job_ids) == 1, job_ids
            return await call(client, "get_job_output", jobId=next(iter(job_ids)), waitMs=60000)

        # Without an open editor: no editor actions.
        first = await actions()
        assert "editor.action.formatDocument" not in first
        assert first["testing.runAll"] == "Test: Run All Tests (pytest)"
        assert {
            "workbench.action.tasks.build",
            "workbench.action.tasks.runTask:build",
            "workbench.action.debug.run",
            "git.fetch",
        } <= set(first)
        assert not any(i.startswith("workbench.action.files.save") for i in first)

        # Format Document: the messy file becomes what ruff format makes of it.
        await call(client, "open_file_in_editor", pathInProject="pkg/messy.py", startLine=3)
        assert (await actions())["editor.action.formatDocument"] == "Format Document"
        await execute("editor.action.formatDocument")
        expected = ruff_formatted(MESSY, "format")
        assert expected != MESSY
        await eventually(lambda: (project / "pkg/messy.py").read_text() == expected)

        # Toggle Breakpoint at the cursor line, then Remove All Breakpoints.
        await execute("editor.debug.action.toggleBreakpoint")
        bps = await call(client, "get_debugger_breakpoints")
        assert bps == [{"path": str(project / "pkg/messy.py"), "line": 3}]
        assert "workbench.debug.viewlet.action.removeAllBreakpoints" in await actions()
        await execute("workbench.debug.viewlet.action.removeAllBreakpoints")
        assert await call(client, "get_debugger_breakpoints") == []
        assert "workbench.debug.viewlet.action.removeAllBreakpoints" not in await actions()

        # Organize Imports and Fix All on their files.
        await call(client, "open_file_in_editor", pathInProject="pkg/imports.py")
        assert "editor.action.organizeImports" in await actions()
        await execute("editor.action.organizeImports")
        await eventually(
            lambda: (project / "pkg/imports.py").read_text().startswith("import os\nimport sys\n")
        )
        await call(client, "open_file_in_editor", pathInProject="pkg/unused.py")
        await execute("editor.action.fixAll")
        await eventually(lambda: (project / "pkg/unused.py").read_text() == "import os\n\nprint(os.sep)\n")

        # Close Editor, then Close All Editors.
        await execute("workbench.action.closeActiveEditor")
        assert await call(client, "get_open_in_editor_file_path") == str(project / "pkg/imports.py")
        await execute("workbench.action.closeAllEditors")
        assert (await call(client, "get_editor_state"))["openFiles"] == []
        assert "workbench.action.closeAllEditors" not in await actions()

        # Tasks: the default build task, and each task by label.
        out = await finished(await execute("workbench.action.tasks.build"))
        assert out["exitCode"] == 0 and "build-ok" in out["output"]
        assert (project / "build.txt").read_text() == "built\n"
        (project / "build.txt").unlink()
        out = await finished(await execute("workbench.action.tasks.runTask:build"))
        assert out["exitCode"] == 0 and (project / "build.txt").exists()
        out = await finished(await execute("workbench.action.tasks.runTask:short wait"))
        assert out["exitCode"] == 0 and out["output"] == "waited\n"
        started = await execute("workbench.action.tasks.runTask:until released")
        (project / "release").write_text("")
        out = await finished(started)
        assert out["exitCode"] == 0 and out["output"] == "released\n"
        (project / "release").unlink()

        # A long task: Terminate Task appears while it runs and kills it.
        started = await execute("workbench.action.tasks.runTask:long")
        assert "workbench.action.tasks.terminate" in await actions()
        await execute("workbench.action.tasks.terminate")
        out = await finished(started)
        assert out["state"] == "killed"
        assert "workbench.action.tasks.terminate" not in await actions()

        # Run Without Debugging runs the first launch configuration.
        out = await finished(await execute("workbench.action.debug.run"))
        assert out["exitCode"] == 0 and (project / "ran.txt").read_text() == "main ran"

        # Run All Tests: pytest runs; its result (one passed, one failed) and exit code are readable.
        out = await finished(await execute("testing.runAll"))
        assert out["exitCode"] == 1
        assert "1 failed, 1 passed" in out["output"] and "test_fails" in out["output"]

        # Git: Fetch brings the remote's branch.
        await execute("git.fetch")
        await eventually(lambda: "origin/main" in git(project, "branch", "-r"))
        assert git(project, "log", "-1", "--format=%s", "origin/main").strip() == "remote commit"

        await eventually(lambda: _no_progress(client))

    assert listed <= verified, f"listed but never checked: {sorted(listed - verified)}"


async def _no_progress(client: Any) -> bool:
    return await call(client, "get_progress_indicators") == []


async def test_progress_shows_a_long_job_while_it_runs_and_not_after(mcp: Any, project: Path) -> None:
    async with mcp(project) as client:
        assert await call(client, "get_progress_indicators") == []
        # The task runs until the test releases it: it is still running when progress is asked.
        assert (
            await call(
                client, "execute_action_by_id", actionId="workbench.action.tasks.runTask:until released"
            )
            == "ok"
        )
        items = await call(client, "get_progress_indicators")
        assert len(items) == 1
        running = items[0]
        assert running["title"] == "Task: until released" and running["kind"] == "task"
        assert (
            running["cancellable"] is True
            and running["indeterminate"] is True
            and running.get("fraction") is None
        )
        (project / "release").write_text("")
        out = await call(client, "get_job_output", jobId=running["jobId"], waitMs=20000)
        assert out["state"] == "exited" and out["output"] == "released\n"
        assert await call(client, "get_progress_indicators") == []

        # A job started by the terminal tools shows too, until it is cancelled.
        job = await call(client, "start_job", command="sleep 30", title="sleeper")
        items = await call(client, "get_progress_indicators")
        assert [(i["title"], i["jobId"], i["kind"]) for i in items] == [("sleeper", job["jobId"], "job")]
        await call(client, "cancel_job", jobId=job["jobId"])
        assert await call(client, "get_progress_indicators") == []


async def test_actions_follow_the_workspace(mcp: Any, ws_path: Path) -> None:
    async with mcp(ws_path) as client:  # an empty folder: nothing to do
        assert await call(client, "list_available_actions") == []
        result = await client.call_tool("execute_action_by_id", {"actionId": "editor.action.formatDocument"})
        assert result.is_error and "action not found: " in result.content[0].text
        (ws_path / "notes.txt").write_text("plain text\n")
        await call(client, "open_file_in_editor", pathInProject="notes.txt")
        ids = {a["id"] for a in await call(client, "list_available_actions")}
        assert "editor.action.formatDocument" not in ids  # nothing here formats plain text
        assert {"editor.debug.action.toggleBreakpoint", "workbench.action.closeActiveEditor"} <= ids
        (ws_path / "package.json").write_text(
            '{"scripts": {"test": "echo \\"Error: no test specified\\" && exit 1"}}'
        )
        assert "testing.runAll" not in {a["id"] for a in await call(client, "list_available_actions")}
        require_system("npm", "npm")  # the npm test runner is offered only where npm is
        (ws_path / "package.json").write_text(
            '{"scripts": {"test": "node -e \\"console.log(\'npm tests ran\')\\""}}'
        )
        actions = {a["id"]: a["text"] for a in await call(client, "list_available_actions")}
        assert actions["testing.runAll"] == "Test: Run All Tests (npm test)"
        assert await call(client, "execute_action_by_id", actionId="testing.runAll") == "ok"
        jobs = await call(client, "list_jobs")
        out = await call(client, "get_job_output", jobId=jobs[0]["jobId"], waitMs=60000)
        assert out["exitCode"] == 0 and "npm tests ran" in out["output"]


async def test_untrusted_workspace_does_not_run_its_programs_unasked(mcp: Any, project: Path) -> None:
    async with mcp(project, policy=Policy(trusted=False)) as client:
        result = await client.call_tool("execute_action_by_id", {"actionId": "testing.runAll"})
        assert result.is_error and "untrusted" in result.content[0].text
        assert await call(client, "list_jobs") == []
        await call(client, "open_file_in_editor", pathInProject="pkg/messy.py")
        assert await call(client, "execute_action_by_id", actionId="editor.action.formatDocument") == "ok"
        await eventually(lambda: (project / "pkg/messy.py").read_text() != MESSY)


def test_rest_doors(http_server: Any, project: Path) -> None:
    server = http_server(project)

    def post(tool: str, body: dict[str, Any]) -> dict[str, Any]:
        return httpx.post(f"{server.url}/mcp/{tool}", json=body, timeout=60).json()

    assert post("get_progress_indicators", {}) == {"status": [], "error": None}
    assert post("open_file_in_editor", {"pathInProject": "pkg/messy.py"})["status"] == "file is opened"
    listed = post("list_available_actions", {})["status"]
    assert {"id": "editor.action.formatDocument", "text": "Format Document"} in listed
    # The seed's example request, verbatim.
    assert post("execute_action_by_id", {"actionId": "editor.action.formatDocument"}) == {
        "status": "ok",
        "error": None,
    }
    deadline = time.monotonic() + 20
    while (project / "pkg/messy.py").read_text() == MESSY:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    unknown = post("execute_action_by_id", {"actionId": "no.such.action"})
    assert unknown["status"] is None and unknown["error"].startswith("action not found: ")


async def test_unknown_action_is_an_error(mcp: Any, ws_path: Path) -> None:
    async with mcp(ws_path) as client:
        result = await client.call_tool("execute_action_by_id", {"actionId": "no.such.action"})
        assert result.is_error
        text = result.content[0].text
        assert "action not found: no available action has the id 'no.such.action'" in text
        assert "list_available_actions" in text


async def test_a_quick_action_that_fails_answers_its_error(mcp: Any, project: Path) -> None:
    # The workspace's remote points at a repository that does not exist: git fetch fails at once.
    git(project, "remote", "set-url", "origin", str(project.parent / "missing.git"))
    (project / "pkg/broken.py").write_text("def broken(:\n    pass\n")
    async with mcp(project) as client:
        for action_id, expected in (
            ("git.fetch", "does not appear to be a git repository"),
            (None, "Format Document failed: cannot format 'pkg/broken.py'"),
        ):
            if action_id is None:
                await call(client, "open_file_in_editor", pathInProject="pkg/broken.py")
                action_id = "editor.action.formatDocument"
            result = await client.call_tool("execute_action_by_id", {"actionId": action_id})
            if result.is_error:  # the usual case: it failed within the quick wait
                text = result.content[0].text
            else:  # a machine so slow that it outlived the quick wait: then its job carries the failure
                assert result.content[0].text == "ok"
                job = (await call(client, "list_jobs"))[-1]
                out = await call(client, "get_job_output", jobId=job["jobId"], waitMs=60000)
                assert out["state"] == "failed"
                text = out["output"]
            assert expected in text, text
        assert (project / "pkg/broken.py").read_text() == "def broken(:\n    pass\n"
        assert await call(client, "get_progress_indicators") == []


UPLOAD_PACK = """#!/bin/sh
# A remote that answers only once the test releases it, and then refuses.
until [ -e "{release}" ]; do sleep 0.05; done
echo "fatal: the test's remote refuses to serve" >&2
exit 1
"""


async def test_a_long_action_that_fails_shows_as_a_failed_job(
    mcp: Any, project: Path, tmp_path: Path
) -> None:
    release = tmp_path / "release"
    script = tmp_path / "slow-upload-pack"
    script.write_text(UPLOAD_PACK.format(release=release))
    script.chmod(0o755)
    git(project, "config", "remote.origin.uploadpack", str(script))  # a trusted workspace's own config
    async with mcp(project) as client:
        # Held by its remote, the fetch outlives the quick wait: "ok", and it goes on as a job.
        assert await call(client, "execute_action_by_id", actionId="git.fetch") == "ok"
        (shown,) = await call(client, "get_progress_indicators")
        assert (shown["title"], shown["kind"], shown["cancellable"]) == ("Git: Fetch", "action", True)
        (job,) = await call(client, "list_jobs")
        assert (job["jobId"], job["state"], job["title"]) == (shown["jobId"], "running", "Git: Fetch")
        assert job["command"] == "git fetch --prune"
        release.write_text("")
        out = await call(client, "get_job_output", jobId=job["jobId"], waitMs=60000)
        assert out["state"] == "failed" and "exitCode" not in out  # failed server work: no exit code
        assert out["output"].startswith("Git: Fetch failed: git could not fetch")
        assert "the test's remote refuses to serve" in out["output"]
        assert [(j["jobId"], j["state"]) for j in await call(client, "list_jobs")] == [
            (job["jobId"], "failed")
        ]
        assert await call(client, "get_progress_indicators") == []

        # Cancelled while its remote holds it: the job ends "killed", and git with everything it started.
        release.unlink()
        assert await call(client, "execute_action_by_id", actionId="git.fetch") == "ok"
        (shown,) = await call(client, "get_progress_indicators")
        await call(client, "cancel_job", jobId=shown["jobId"])
        out = await call(client, "get_job_output", jobId=shown["jobId"], waitMs=60000)
        assert out["state"] == "killed" and "cancelled" in out["output"]
        assert await call(client, "get_progress_indicators") == []
        assert "origin/main" not in git(project, "branch", "-r")
        assert not _running(str(script))


def _running(needle: str) -> list[int]:
    """The processes whose command line holds ``needle`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and needle.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


async def test_untrusted_fetch_runs_no_program_of_the_repository(
    mcp: Any, project: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    script = tmp_path / "upload-pack"
    script.write_text(f'#!/bin/sh\ntouch "{marker}"\nexec git-upload-pack "$@"\n')
    script.chmod(0o755)
    git(project, "config", "remote.origin.uploadpack", str(script))  # untrusted input in .git/config
    async with mcp(project, policy=Policy(trusted=False)) as client:
        result = await client.call_tool("execute_action_by_id", {"actionId": "git.fetch"})
        assert result.is_error, result.content[0].text
        text = result.content[0].text
        assert "refused" in text and "remote.origin.uploadpack" in text
        assert not marker.exists()

"""Debug tools (seed 000 "Debug"): breakpoints in the editor model, and run configurations from real
``.vscode/launch.json`` / ``tasks.json`` files (comments, trailing commas, variables, dependsOn) started as
real jobs whose output and exit code are read back with the job tools."""

from __future__ import annotations

import re
import textwrap
import time
from pathlib import Path
from typing import Any

import httpx
import mcp_types
import pytest

from mcp_server_ide.workspace import Policy

from .support.results import call_data as call
from .support.results import error
from .support.system import require_system

pytestmark = pytest.mark.anyio

LAUNCH = r"""
{
  // Launch configurations, as VS Code writes them: comments and trailing commas.
  "version": "0.2.0",
  "configurations": [
    {
      "name": "Python: app",
      "type": "debugpy",
      "request": "launch",
      "program": "${workspaceFolder}/app.py",
      "args": ["${workspaceFolderBasename}", "${input:greeting}", "${config:app.mode}"],
      "cwd": "${workspaceFolder}${pathSeparator}sub",
      "env": {"APP_HOME": "${env:HOME}", "APP_SECRET": "${env:DEMO_API_TOKEN}"},
      "preLaunchTask": "prepare",
    },
    {"name": "Python: module", "type": "python", "request": "launch", "module": "pkg.main", "args": ["a b", "c"], },
    {
      "name": "Current file",
      "type": "debugpy",
      "request": "launch",
      "program": "${file}",
      "args": ["${relativeFile}", "${fileBasename}", "${fileBasenameNoExtension}", "${relativeFileDirname}", "${lineNumber}", "${selectedText}"],
    },
    {"name": "Node: program", "type": "node", "request": "launch", "program": "${workspaceFolder}/main.js", "args": ["x"]},
    {"name": "Node: terminal", "type": "node-terminal", "request": "launch", "command": "node -e \"console.log('terminal', 6 * 7)\""},
    {"name": "Chrome", "type": "chrome", "request": "launch", "url": "http://localhost:8080"},
    {"name": "Attach", "type": "debugpy", "request": "attach", "connect": {"port": 5678}},
    /* hidden from the list, still runnable */
    {"name": "Hidden", "type": "debugpy", "request": "launch", "program": "app.py", "presentation": {"hidden": true}},
  ],
  "compounds": [
    {"name": "Both programs", "configurations": ["Python: module", "Node: program"]},
  ],
  "inputs": [{"id": "greeting", "type": "promptString", "description": "Greeting", "default": "hello"}],
}
"""

TASKS = r"""
{
  "version": "2.0.0",
  "options": {"env": {"SHARED": "from-top"}},
  "tasks": [
    {"label": "prepare", "type": "shell", "command": "echo preparing with $SHARED"},
    {"label": "step one", "type": "shell", "command": "sleep 0.3 && echo one >> order.txt"},
    {"label": "step two", "type": "process", "command": "sh", "args": ["-c", "echo two >> order.txt"]},
    {"label": "all in order", "dependsOn": ["step one", "step two"], "dependsOrder": "sequence"},
    {"label": "in parallel", "dependsOn": ["slow", "fast"]},  // parallel is VS Code's default
    {"label": "slow", "type": "shell", "command": "until [ -e fast.txt ]; do sleep 0.05; done; echo slow-done"},
    {"label": "fast", "type": "shell", "command": "echo fast-done; touch fast.txt", "options": {"env": {"WHO": "fast"}}},
    {"label": "fails", "type": "shell", "command": "echo about to fail; exit 3"},
    {"label": "after failure", "type": "shell", "command": "echo should not run", "dependsOn": ["fails"]},
    {"label": "quoted args", "type": "shell", "command": "echo", "args": ["two  words", "$SHARED"]},
    {"label": "gulp thing", "type": "gulp", "task": "build"},
    {"label": "loop a", "dependsOn": "loop b"},
    {"label": "loop b", "dependsOn": "loop a"},
    {"label": "three steps", "dependsOn": ["s1", "s2", "s3"], "dependsOrder": "sequence"},
    {"label": "s1", "type": "shell", "command": "sleep 0.6", "hide": true},
    {"label": "s2", "type": "shell", "command": "sleep 0.6", "hide": true},
    {"label": "s3", "type": "shell", "command": "sleep 0.6", "hide": true},
  ],
}
"""

APP = """\
import os, sys
print("app", sys.argv[1:], os.path.basename(os.getcwd()), os.environ.get("APP_HOME") == os.environ.get("HOME"),
      repr(os.environ.get("APP_SECRET")))
"""


@pytest.fixture
def project(ws_path: Path) -> Path:
    (ws_path / ".vscode").mkdir()
    (ws_path / ".vscode/launch.json").write_text(LAUNCH)
    (ws_path / ".vscode/tasks.json").write_text(TASKS)
    (ws_path / ".vscode/settings.json").write_text('{\n  // settings\n  "app.mode": "dev",\n}\n')
    (ws_path / "sub").mkdir()
    (ws_path / "app.py").write_text(APP)
    (ws_path / "pkg").mkdir()
    (ws_path / "pkg/__init__.py").write_text("")
    (ws_path / "pkg/main.py").write_text("import sys\nprint('module', sys.argv[1:])\n")
    (ws_path / "main.js").write_text("console.log('node program', process.argv.slice(2).join(','));\n")
    (ws_path / "tools").mkdir()
    (ws_path / "tools/show.py").write_text("import sys\nprint('show', sys.argv[1:])\n")
    return ws_path


def job_id(answer: str) -> str:
    assert answer.startswith("Run configuration started"), answer
    found = re.search(r"jobId: (job-\d+)", answer)
    assert found, answer
    return found.group(1)


async def run(client: Any, name: str) -> dict[str, Any]:
    started = await call(client, "run_configuration", configName=name)
    out = await call(client, "get_job_output", jobId=job_id(started), waitMs=30000)
    assert out["state"] != "running", out
    return out


async def test_lists_configurations_compounds_and_tasks(mcp: Any, project: Path) -> None:
    async with mcp(project) as client:
        assert await call(client, "get_run_configurations") == [
            "Python: app", "Python: module", "Current file", "Node: program", "Node: terminal", "Chrome", "Attach",
            "Both programs",
            "prepare", "step one", "step two", "all in order", "in parallel", "slow", "fast", "fails",
            "after failure", "quoted args", "gulp thing", "loop a", "loop b", "three steps",
        ]  # fmt: skip
    empty = project / "empty"
    empty.mkdir()
    async with mcp(empty) as client:
        assert await call(client, "get_run_configurations") == []
    (empty / ".vscode").mkdir()
    (empty / ".vscode/tasks.json").write_text('{"tasks": [ {"label": "x", "command": "true"} ')
    async with mcp(empty) as client:
        message = await error(client, "get_run_configurations")
        assert "tasks.json" in message and "line 1" in message


async def test_launch_configurations_run_with_variables_resolved(
    mcp: Any, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEMO_API_TOKEN", "s3cret")  # a server secret must never reach a command line
    async with mcp(project) as client:
        out = await run(client, "Python: app")
        assert (out["state"], out["exitCode"]) == ("exited", 0)
        assert "preparing with from-top" in out["output"]  # preLaunchTask ran first, with the tasks' env
        assert f"app ['{project.name}', 'hello', 'dev'] sub True ''" in out["output"]
        assert out["output"].index("preparing") < out["output"].index("app [")
        assert "s3cret" not in out["output"]

        out = await run(client, "Python: module")
        assert out["exitCode"] == 0 and "module ['a b', 'c']" in out["output"]

        # ${file} and friends come from the editor's active file and selection.
        message = await error(client, "run_configuration", configName="Current file")
        assert "${file}" in message and "open_file_in_editor" in message
        await call(client, "open_file_in_editor", pathInProject="tools/show.py", selectText="sys.argv")
        out = await run(client, "Current file")
        assert "show ['tools/show.py', 'show.py', 'show', 'tools', '2', 'sys.argv']" in out["output"]

        out = await run(client, "Hidden")
        assert out["exitCode"] == 0

        assert "'chrome'" in await error(client, "run_configuration", configName="Chrome")
        assert "attach" in await error(client, "run_configuration", configName="Attach")
        assert "no run configuration is named" in await error(client, "run_configuration", configName="Nope")

        require_system("node", "nodejs")  # last: without node, everything above still ran
        out = await run(client, "Node: program")
        assert out["exitCode"] == 0 and "node program x" in out["output"]
        out = await run(client, "Node: terminal")
        assert out["exitCode"] == 0 and "terminal 42" in out["output"]
        out = await run(client, "Both programs")
        assert out["exitCode"] == 0
        assert (
            "[Python: module] module" in out["output"] and "[Node: program] node program x" in out["output"]
        )


async def test_tasks_run_with_depends_on_and_report_failure(mcp: Any, project: Path) -> None:
    async with mcp(project) as client:
        out = await run(client, "all in order")
        assert out["exitCode"] == 0
        assert (project / "order.txt").read_text() == "one\ntwo\n"  # sequence: step two waited for step one

        out = await run(client, "in parallel")
        assert out["exitCode"] == 0
        text = out["output"]
        # slow ends only once fast has run: had they run one after the other, slow would never end.
        assert "[fast] fast-done" in text and "[slow] slow-done" in text

        out = await run(client, "fails")
        assert (out["state"], out["exitCode"]) == ("exited", 3)
        assert "about to fail" in out["output"]

        out = await run(client, "after failure")
        assert out["exitCode"] == 3
        assert "should not run" not in out["output"].replace("(echo should not run)", "")
        assert "did not run" in out["output"]

        out = await run(client, "quoted args")
        assert out["output"] == "two  words from-top\n"  # quoted because of the space; $SHARED expanded

        assert "'gulp'" in await error(client, "run_configuration", configName="gulp thing")
        assert "cycle" in await error(client, "run_configuration", configName="loop a")


async def test_progress_of_a_running_configuration(mcp: Any, project: Path) -> None:
    async with mcp(project) as client:
        assert await call(client, "get_progress_indicators") == []
        jid = job_id(await call(client, "run_configuration", configName="three steps"))
        seen: list[dict[str, Any]] = []
        deadline = time.monotonic() + 60  # a bound, not a timing assertion: the run takes about 2 s
        while items := await call(client, "get_progress_indicators"):  # until the run has ended
            assert time.monotonic() < deadline, "the run never ended"
            seen.extend(items)
            await call(client, "wait", milliseconds=50)
        assert seen, "the run never showed as progress"
        first = seen[0]
        assert (
            first["jobId"] == jid and first["title"] == "Task: three steps" and first["cancellable"] is True
        )
        fractions = [i["fraction"] for i in seen if i.get("fraction") is not None]
        assert (
            fractions and min(fractions) < max(fractions) < 1.0
        )  # step by step, never complete while running
        assert all(i["indeterminate"] == (i.get("fraction") is None) for i in seen)
        out = await call(client, "get_job_output", jobId=jid, waitMs=10000)
        assert out["exitCode"] == 0
        assert await call(client, "get_progress_indicators") == []


async def test_a_run_whose_steps_are_all_done_is_not_shown_complete_while_it_runs(
    mcp: Any, ws_path: Path, _state_home: Path
) -> None:
    # The step runner writes "3 of 3 done" when its last step ends, then still has to say how the
    # run ended and exit, and the job engine to reap it: for that moment the job is running. The
    # runner's progress file is written here (the state it leaves after its last step) while the real
    # job is held in its first step, so that moment lasts as long as the test needs.
    (ws_path / ".vscode").mkdir()
    (ws_path / ".vscode/tasks.json").write_text(
        '{"tasks": [{"label": "held", "dependsOn": ["h1", "h2", "h3"], "dependsOrder": "sequence"},'
        + "".join(f'{{"label": "h{i}", "type": "shell", "command": "sleep 60"}},' for i in (1, 2, 3))
        + "]}"
    )
    async with mcp(ws_path) as client:
        jid = job_id(await call(client, "run_configuration", configName="held"))
        items: list[dict[str, Any]] = []
        for _ in range(600):  # until the runner has written its first state (h1 running)
            items = await call(client, "get_progress_indicators")
            if items and items[0].get("message") == "running: h1":
                break
            await call(client, "wait", milliseconds=50)
        assert items[0]["fraction"] == 0.0, items
        (progress_file,) = _state_home.glob("*/workspaces/*/runs/*.progress.json")
        progress_file.write_text('{"done": 3, "total": 3, "running": []}')
        (shown,) = await call(client, "get_progress_indicators")
        listed = {j["jobId"]: j for j in await call(client, "list_jobs")}
        assert listed[jid]["state"] == "running"
        assert shown["jobId"] == jid and shown.get("fraction") != 1.0, shown  # running is not complete
        assert shown["indeterminate"] is True and shown["message"] == "finishing: all 3 steps are done"
        await call(client, "cancel_job", jobId=jid)
        assert await call(client, "get_progress_indicators") == []


def answering(answer: bool, asked: list[str]) -> Any:
    async def callback(context: Any, params: Any) -> Any:
        asked.append(params.message)
        return mcp_types.ElicitResult(action="accept" if answer else "decline", content={"confirm": answer})

    return callback


async def test_untrusted_workspace_asks_first(mcp: Any, project: Path) -> None:
    untrusted = Policy(trusted=False)
    async with mcp(project, policy=untrusted) as client:  # no elicitation: refused
        assert "not trusted" in await error(client, "run_configuration", configName="fails")
        assert await call(client, "list_jobs") == []
    asked: list[str] = []
    async with mcp(project, policy=untrusted, elicitation_callback=answering(False, asked)) as client:
        assert "declined" in await error(client, "run_configuration", configName="fails")
        assert await call(client, "list_jobs") == []
    async with mcp(project, policy=untrusted, elicitation_callback=answering(True, asked)) as client:
        out = await run(client, "fails")
        assert out["exitCode"] == 3
    assert len(asked) == 2 and "echo about to fail; exit 3" in asked[0]


async def test_breakpoints_toggle_follow_their_lines_and_persist(mcp: Any, ws_path: Path) -> None:
    src = ws_path / "helper.js"
    src.write_text("".join(f"line{i}\n" for i in range(1, 11)))
    other = ws_path / "index.js"
    other.write_text("a\nb\nc\n")
    async with mcp(ws_path) as client:
        assert await call(client, "get_debugger_breakpoints") == []
        assert (
            await call(client, "toggle_debugger_breakpoint", pathInProject="helper.js", line=5)
            == "Breakpoint added"
        )
        assert (
            await call(client, "toggle_debugger_breakpoint", pathInProject="helper.js", line=8)
            == "Breakpoint added"
        )
        assert (
            await call(client, "toggle_debugger_breakpoint", pathInProject="index.js", line=3)
            == "Breakpoint added"
        )
        assert (
            await call(client, "toggle_debugger_breakpoint", pathInProject="index.js", line=3)
            == "Breakpoint removed"
        )
        assert (
            await call(client, "toggle_debugger_breakpoint", pathInProject="index.js", line=2)
            == "Breakpoint added"
        )
        assert "past the end" in await error(
            client, "toggle_debugger_breakpoint", pathInProject="index.js", line=4
        )
        assert "past the end" in await error(
            client, "toggle_debugger_breakpoint", pathInProject="index.js", line=0
        )
        assert "not found" in await error(
            client, "toggle_debugger_breakpoint", pathInProject="nope.js", line=1
        )
        expected = [
            {"path": str(src), "line": 5},
            {"path": str(src), "line": 8},
            {"path": str(other), "line": 2},
        ]
        assert await call(client, "get_debugger_breakpoints") == expected

        # Two lines inserted above line 5 by this server's tools: both breakpoints move down by two.
        await call(
            client,
            "replace_file_content_at_position",
            pathInProject="helper.js",
            startLine=2,
            endLine=1,
            content="new1\nnew2\n",
        )
        assert [b["line"] for b in await call(client, "get_debugger_breakpoints")][:2] == [7, 10]
        # A line deleted above them: up by one; a line edited in place below them: nothing moves.
        await call(
            client, "replace_specific_text", pathInProject="helper.js", searchText="line1\n", replaceText=""
        )
        await call(
            client,
            "replace_specific_text",
            pathInProject="helper.js",
            searchText="line10",
            replaceText="LINE10",
        )
        assert [b["line"] for b in await call(client, "get_debugger_breakpoints")][:2] == [6, 9]
        lines = src.read_text().split("\n")
        assert (lines[6 - 1], lines[9 - 1]) == ("line5", "line8")
        # The whole file rewritten through the editor: each breakpoint stays with its line's text.
        await call(client, "open_file_in_editor", pathInProject="helper.js")
        await call(client, "replace_current_file_text", text="header\n" + src.read_text())
        assert [b["line"] for b in await call(client, "get_debugger_breakpoints")][:2] == [7, 10]

    async with mcp(ws_path) as client:  # a restart keeps them
        bps = await call(client, "get_debugger_breakpoints")
        assert bps == [
            {"path": str(src), "line": 7},
            {"path": str(src), "line": 10},
            {"path": str(other), "line": 2},
        ]
        # The server's own delete of a line with a breakpoint removes that breakpoint.
        await call(
            client, "replace_specific_text", pathInProject="index.js", searchText="b\n", replaceText=""
        )
        assert await call(client, "get_debugger_breakpoints") == bps[:2]


def test_rest_doors_run_a_task_and_read_breakpoints(http_server: Any, project: Path) -> None:
    server = http_server(project)

    def post(tool: str, body: dict[str, Any]) -> dict[str, Any]:
        return httpx.post(f"{server.url}/mcp/{tool}", json=body, timeout=60).json()

    listed = post("get_run_configurations", {})
    assert listed["error"] is None and "all in order" in listed["status"]
    started = post("run_configuration", {"configName": "fails"})
    assert started["error"] is None
    out = post("get_job_output", {"jobId": job_id(started["status"]), "waitMs": 20000})["status"]
    assert out["exitCode"] == 3 and "about to fail" in out["output"]
    failed = post("run_configuration", {"configName": "Chrome"})
    assert failed["status"] is None and "'chrome'" in failed["error"]

    (project / "src/utils").mkdir(parents=True)
    (project / "src/utils/helper.js").write_text(textwrap.dedent("".join(f"// {i}\n" for i in range(1, 8))))
    assert post("toggle_debugger_breakpoint", {"pathInProject": "src/utils/helper.js", "line": 5}) == {
        "status": "Breakpoint added",
        "error": None,
    }
    assert post("get_debugger_breakpoints", {}) == {
        "status": [{"path": str(project / "src/utils/helper.js"), "line": 5}],
        "error": None,
    }

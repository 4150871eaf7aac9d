"""Every tool's MCP result carries its data once (issue 12, acceptance 3; ARCHITECTURE.md, "What a
result carries"): one text block, compact JSON (or the tool's own text), no ``structuredContent``, no
key with a null value; with ``--structured-content`` the one text block is the JSON of the
``structuredContent``. Argument errors read the same on MCP and on the REST door.

Every registered tool is called through a real MCP client session on a real git workspace, with
arguments built from its own schema (overridden where a tool needs a real target); a tool added
later must be added to ``ARGUMENTS`` or the test fails.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from .support.gitrepo import init_repo, isolated_git
from .support.security import registered_specs

pytestmark = pytest.mark.anyio

APP = "def greet(name):\n    return 'hello ' + name\n\n\nprint(greet('world'))\n"

DEBUG_LAUNCH = (
    '{"configurations": [{"name": "app", "type": "debugpy", "request": "launch", "program": "pkg/app.py"}]}'
)

State = dict[str, Any]
Args = dict[str, Any] | Callable[[State], dict[str, Any]]

# In call order: reads first, then writes, terminals and jobs (ids from earlier answers), git, journal.
ARGUMENTS: list[tuple[str, Args]] = [
    ("list_files_in_folder", {"pathInProject": "pkg"}),
    ("get_file_text_by_path", {"pathInProject": "pkg/app.py"}),
    ("search_in_files_content", {"searchText": "greet"}),
    ("find_files_by_name_substring", {"nameSubstring": "app"}),
    ("get_symbols_in_file", {"pathInProject": "pkg/app.py"}),
    ("find_references", {"pathInProject": "pkg/app.py", "line": 0, "character": 4}),
    ("go_to_definition", {"pathInProject": "pkg/app.py", "line": 4, "character": 6}),
    ("get_file_problems", {"pathInProject": "pkg/app.py"}),
    ("get_project_problems", {"sources": ["ruff"]}),
    ("project_fs_read", {"path": "pkg/app.py", "startLine": 1, "endLine": 2}),
    ("project_fs_list", {}),
    ("get_project_modules", {}),
    ("get_project_dependencies", {}),
    ("get_project_vcs_status", {}),
    ("get_branch_info", {}),
    ("get_file_history", {"pathInProject": "pkg/app.py"}),
    ("get_file_diff", {"pathInProject": "README.md"}),
    ("find_commit_by_message", {"text": "init"}),
    ("get_commit_details", {"commitHash": "HEAD"}),
    ("draft_commit_message", {}),
    ("open_file_in_editor", {"pathInProject": "pkg/app.py"}),
    ("get_editor_state", {}),
    ("get_open_in_editor_file_path", {}),
    ("get_open_in_editor_file_text", {}),
    ("get_selected_in_editor_text", {}),
    ("replace_selected_text", {"text": ""}),
    ("replace_current_file_text", {"text": APP}),
    ("close_file_in_editor", {}),
    ("toggle_debugger_breakpoint", {"pathInProject": "pkg/app.py", "line": 2}),
    ("get_debugger_breakpoints", {}),
    ("get_run_configurations", {}),
    ("run_configuration", {"configName": "no such configuration"}),
    ("list_available_actions", {}),
    ("execute_action_by_id", {"actionId": "no.such.action"}),
    ("get_progress_indicators", {}),
    ("create_checkpoint", {"name": "before-edits"}),
    ("create_new_file_with_text", {"pathInProject": "notes.txt", "text": "one\n"}),
    ("append_file_content", {"pathInProject": "notes.txt", "text": "two\n"}),
    ("rewrite_file_content", {"pathInProject": "notes.txt", "text": "one\ntwo\nthree\n"}),
    (
        "replace_file_content_at_position",
        {"pathInProject": "notes.txt", "startLine": 1, "endLine": 1, "content": "1"},
    ),
    (
        "replace_specific_text",
        {"pathInProject": "README.md", "searchText": "demo", "replaceText": "demo app"},
    ),
    ("project_fs_write", {"path": "tmp.txt", "content": "x\n"}),
    ("project_fs_edit", {"path": "tmp.txt", "oldText": "x", "newText": "y"}),
    # A real debugpy session on pkg/app.py, stopped at its breakpoint.
    ("project_fs_write", {"path": ".vscode/launch.json", "content": DEBUG_LAUNCH}),
    ("toggle_debugger_breakpoint", {"pathInProject": "pkg/app.py", "line": 2, "condition": "name"}),
    ("start_debug_session", {"configName": "app", "waitMs": 60000}),
    ("list_debug_sessions", {}),
    ("get_stack_trace", {}),
    ("get_variables", {}),
    ("evaluate_expression", {"expression": "name * 2"}),
    ("set_exception_breakpoints", {"filters": ["uncaught"]}),
    ("debug_pause", {}),
    ("debug_step", {"kind": "out"}),
    ("debug_continue", {"waitMs": 60000}),
    ("stop_debug_session", {}),
    ("format_file", {"pathInProject": "pkg/app.py"}),
    (
        "refactor_code_at_location",
        {
            "pathInProject": "pkg/app.py",
            "line": 0,
            "character": 4,
            "refactorType": "rename",
            "options": {"newName": "hello"},
        },
    ),
    ("wait", {"milliseconds": 1}),
    ("execute_terminal_command", {"command": "echo hi"}),
    ("run_command_on_background", {"command": "echo bg"}),
    ("execute_os_specific_command", {"command": "echo os"}),
    ("get_terminal_info", {}),
    ("create_terminal", {}),
    ("list_terminals", {}),
    ("send_terminal_input", lambda s: {"terminalId": s["terminal"], "text": "echo typed\n"}),
    ("read_terminal_output", lambda s: {"terminalId": s["terminal"]}),
    ("kill_terminal", lambda s: {"terminalId": s["terminal"]}),
    ("start_job", {"command": "cat", "stdin": True}),
    ("send_job_input", lambda s: {"jobId": s["job"], "text": "fed\n"}),
    ("get_job_output", lambda s: {"jobId": s["job"]}),
    ("list_jobs", {}),
    ("cancel_job", lambda s: {"jobId": s["job"]}),
    ("commit_changes", {"message": "edits", "files": ["README.md"]}),
    ("create_branch", {"branch": "feature"}),
    ("switch_branch", {"branch": "main"}),
    ("pull_changes", {}),
    ("list_recent_changes", {}),
    ("list_checkpoints", {}),
    ("diff_since_checkpoint", {"name": "before-edits"}),
    ("keep_changes", {"name": "before-edits", "paths": ["tmp.txt"]}),
    ("undo_changes", {}),
    ("restore_checkpoint", {"name": "before-edits", "force": True}),
]

MUST_SUCCEED = {
    "list_files_in_folder",
    "get_file_text_by_path",
    "search_in_files_content",
    "find_files_by_name_substring",
    "get_symbols_in_file",
    "project_fs_read",
    "project_fs_list",
    "get_project_vcs_status",
    "get_branch_info",
    "get_file_history",
    "get_file_diff",
    "get_commit_details",
    "get_editor_state",
    "create_checkpoint",
    "create_new_file_with_text",
    "replace_specific_text",
    "project_fs_edit",
    "execute_terminal_command",
    "create_terminal",
    "start_job",
    "list_jobs",
    "commit_changes",
    "list_recent_changes",
    "diff_since_checkpoint",
    "start_debug_session",
    "get_variables",
    "evaluate_expression",
    "debug_continue",
    "stop_debug_session",
}
"""Tools whose call above works on any machine that runs the suite (the rest may answer a clean error)."""


PLAIN_TEXT_FORMS = {"run_command_on_background": "exit code "}
"""Tools whose JSON result has a plain-text form on MCP (without --structured-content), and how it starts."""


def returns_text(spec: Any, text: str) -> bool:
    """Whether ``text`` is the tool's own text (a diff, a file, a plain run), not JSON."""
    if spec.name in PLAIN_TEXT_FORMS:
        return text.startswith(PLAIN_TEXT_FORMS[spec.name])
    return typing.get_type_hints(spec.fn).get("return") is str


def nulls(value: Any, where: str = "$") -> list[str]:
    """Where ``value`` has an object key whose value is null."""
    if isinstance(value, dict):
        found = [f"{where}.{k}" for k, v in value.items() if v is None]
        return found + [p for k, v in value.items() for p in nulls(v, f"{where}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in nulls(v, f"{where}[{i}]")]
    return []


def is_compact(text: str, value: Any) -> bool:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")) == text


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolated_git(monkeypatch, tmp_path / "home")
    root = tmp_path / "ws"
    git = init_repo(root)
    (root / "pkg").mkdir()
    (root / "pkg" / "app.py").write_text(APP)
    (root / "README.md").write_text("# demo\n")
    git("add", "-A")
    git("commit", "-qm", "init")
    (root / "README.md").write_text("# demo\n\nchanged\n")
    return root


async def test_every_tool_answers_its_data_once(mcp: Any, project: Path) -> None:
    specs = {s.name: s for s in registered_specs() if s.fn.__module__.startswith("mcp_server_ide.")}
    assert {name for name, _ in ARGUMENTS} == set(specs), "add the new tool to ARGUMENTS"
    state: State = {}
    problems: list[str] = []
    failed: dict[str, str] = {}
    async with mcp(project) as client:
        listed = (await client.list_tools()).tools
        assert [t.name for t in listed if t.output_schema is not None] == []
        for name, args in ARGUMENTS:
            arguments = args(state) if callable(args) else args
            with anyio.fail_after(120):
                result = await client.call_tool(name, arguments)
            if len(result.content) != 1 or result.content[0].type != "text":
                problems.append(f"{name}: {len(result.content)} content blocks")
                continue
            text = result.content[0].text
            if result.structured_content is not None:
                problems.append(f"{name}: structuredContent beside the text")
            if result.is_error:
                failed[name] = text
                if "Traceback" in text or text.strip() == f"Error executing tool {name}":
                    problems.append(f"{name}: a crash, not a clear error: {text[:200]}")
                continue
            if returns_text(specs[name], text):
                continue  # the tool's own text (a diff, a file's text): nothing to parse
            try:
                value = json.loads(text)
            except ValueError:
                problems.append(f"{name}: the text is not one JSON value: {text[:120]!r}")
                continue
            if not is_compact(text, value):
                problems.append(f"{name}: the JSON is not compact: {text[:120]!r}")
            problems += [f"{name}: null at {p}" for p in nulls(value)]
            if name == "create_terminal":
                state["terminal"] = value["terminalId"]
            elif name == "start_job":
                state["job"] = value["jobId"]
    assert problems == []
    assert {n: t for n, t in failed.items() if n in MUST_SUCCEED} == {}


async def test_structured_content_option_sends_the_same_value_once_more(mcp: Any, project: Path) -> None:
    """--structured-content: an output schema, structuredContent, and the text its compact JSON."""
    from mcp_server_ide.server import ServerOptions

    async with mcp(project, options=ServerOptions(structured_content=True)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        for name, args in [
            ("get_project_vcs_status", {}),
            ("search_in_files_content", {"searchText": "greet"}),
            ("get_branch_info", {}),
            (
                "replace_specific_text",
                {"pathInProject": "README.md", "searchText": "demo", "replaceText": "x"},
            ),
        ]:
            assert tools[name].output_schema is not None, name
            result = await client.call_tool(name, args)
            assert not result.is_error, result.content[0].text
            assert len(result.content) == 1 and result.structured_content is not None, name
            assert json.loads(result.content[0].text) == result.structured_content, name
            assert is_compact(result.content[0].text, result.structured_content), name


ARGUMENT_ERRORS = [
    (
        "get_file_text_by_path",
        {},
        "invalid parameters: 'pathInProject' is required (string); get_file_text_by_path takes "
        "pathInProject (required)",
    ),
    ("get_file_text_by_path", {"pathInProject": "README.md", "bogus": 1}, "'bogus' is not a parameter"),
    ("get_file_text_by_path", {"pathInProject": 7}, "'pathInProject': input should be a valid string, got 7"),
    ("search_in_files_content", {"searchText": "x", "maxResults": "many"}, "'maxResults': input should be"),
]


async def test_argument_errors_name_the_rule_and_the_fix_on_mcp(mcp: Any, project: Path) -> None:
    async with mcp(project) as client:
        for name, args, words in ARGUMENT_ERRORS:
            result = await client.call_tool(name, args)
            assert result.is_error and len(result.content) == 1, (name, args)
            text = result.content[0].text
            assert text.startswith(f"Error executing tool {name}: invalid parameters: "), text
            assert words in text, (words, text)
            assert "pydantic" not in text and "http" not in text and "validation error" not in text, text


def test_argument_errors_read_the_same_on_rest_and_mcp(http_server: Any, project: Path) -> None:
    server = http_server(project)
    for name, args, words in ARGUMENT_ERRORS:
        response = httpx.post(f"{server.url}/mcp/{name}", json=args, timeout=30)
        body = response.json()
        assert response.status_code == 400 and body["status"] is None, body
        assert body["error"].startswith("invalid parameters: ") and words in body["error"], body
        mcp_text = _mcp_error(server.mcp_url, name, args)
        assert mcp_text == f"Error executing tool {name}: {body['error']}"


def _mcp_error(url: str, name: str, args: dict[str, Any]) -> str:
    from mcp import Client

    async def call() -> str:
        async with Client(url) as client:
            result = await client.call_tool(name, args)
            assert result.is_error
            return result.content[0].text

    return anyio.run(call)


async def test_2026_era_results_carry_a_lean_server_info_stamp(mcp: Any, project: Path) -> None:
    """A 2026-07-28 result's ``_meta`` names the server (name, version), not its icons and
    description again (~630 bytes on every answer); discovery still gives the whole identity."""
    from mcp_server_ide import __version__

    async with mcp(project) as client:
        result = await client.call_tool("get_project_vcs_status", {})
        assert result.meta == {
            "io.modelcontextprotocol/serverInfo": {"name": "mcp-server-ide", "version": __version__}
        }
        assert client.server_info.icons and client.server_info.description


def test_a_page_is_its_array_only_when_it_is_the_whole_list() -> None:
    """The page facts travel inside the one JSON value exactly when the items are not the whole list."""
    from mcp_server_ide.registry import PagedList
    from mcp_server_ide.resultform import compact_json, page_value

    assert page_value(PagedList([1, 2])) == [1, 2]
    assert page_value(PagedList([1], total=3, truncated=True, next_offset=1)) == {
        "result": [1],
        "total": 3,
        "truncated": True,
        "nextOffset": 1,
    }
    assert page_value(PagedList([3], total=3, offset=2)) == {"result": [3], "total": 3}
    stopped = PagedList([1], total=1, truncated=True, note="the walk stopped at 10,000 files")
    assert page_value(stopped) == {
        "result": [1],
        "total": 1,
        "truncated": True,
        "note": "the walk stopped at 10,000 files",
    }
    assert compact_json({"a": None, "b": [None, {"c": None, "d": 1}]}) == '{"b":[null,{"d":1}]}'

"""Every example request of seed 000 (the interface document), verbatim, through both doors.

The 41 examples are copied below as data: the tool, the request body and the example response's
``status``. Each is sent to a workspace built the way the examples assume (seed 000's plain-JS
layout with no jsconfig, ``.vscode/launch.json`` with "Run Dev Server", a git repository whose
remote ``origin`` is a local bare repository), once through the REST door (``POST /mcp/{tool}`` on a
real ``--http`` server) and once through an MCP client session; each door gets its own copy of
the workspace and one server for all 41 calls, in an order in which each example's precondition holds
(a file is open before the editor examples; the files the file examples edit hold what they look for).

Only what cannot be verbatim is adjusted: ``get_commit_details`` names a real commit of the repository,
``wait`` waits 20 ms instead of 3000. REST answers must be the seed's envelope (``status``, ``error``;
paged lists add ``total``/``truncated``/``nextOffset`` beside them) with the example's keys and JSON
types (extra keys allowed); MCP answers must not be errors and must carry the example's
information (names and paths), whatever optional fields a compact result leaves out.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client

from mcp_server_ide.server import build_server
from mcp_server_ide.workspace import Workspace

from .support.codeprojects import SEED_HELPER, SEED_INDEX, seed_js_project
from .support.gitrepo import Git, init_repo
from .support.servers import HttpServer, start_http_server

pytestmark = pytest.mark.anyio

# What the file examples look for: `oldFunction` three times, a line 5, "function helper".
EDITABLE_HELPER = (
    "// helper module\nfunction helper() { return 'Hello'; }\noldFunction();\noldFunction();\n// line 5\n"
    "oldFunction();\nmodule.exports = { helper };\n"
)
LAUNCH = {
    "version": "0.2.0",
    "configurations": [
        {
            "type": "node",
            "request": "launch",
            "name": "Run Dev Server",
            "program": "${workspaceFolder}/src/index.js",
        },
        {
            "type": "node",
            "request": "launch",
            "name": "Run Tests",
            "program": "${workspaceFolder}/src/index.js",
        },
        {
            "type": "node",
            "request": "launch",
            "name": "Build Production",
            "program": "${workspaceFolder}/src/index.js",
        },
    ],
}
EXTENSIONS = {"recommendations": ["esbenp.prettier-vscode", "dbaeumer.vscode-eslint"]}
FIX_BUG = "Fix bug in helper"


@dataclass(frozen=True)
class Example:
    tool: str
    request: dict[str, Any]
    status: Any
    """The example response's ``status``, copied from the seed."""
    facts: tuple[str, ...] = ()
    """Words the answer must carry on every door: names and paths, the information a compact MCP result
    keeps too (matched without regard to case or path separator there)."""
    arrange: Callable[[Path], None] | None = None
    """Puts the workspace in the state the example assumes, before it is sent (the same on both doors)."""
    exact: bool = False
    """The status must equal the example's (a fixed string such as "ok")."""


def restore_seed_layout(root: Path) -> None:
    (root / "src/utils/helper.js").write_text(SEED_HELPER)
    (root / "src/index.js").write_text(SEED_INDEX)


def editable_helper(root: Path) -> None:
    (root / "src/utils/helper.js").write_text(EDITABLE_HELPER)


def vcs_changes(root: Path) -> None:
    (root / "src/utils/helper.js").write_text(SEED_HELPER + "// changed\n")
    (root / "src/new-file.js").write_text("module.exports = {};\n")
    Git(root)("add", "src/new-file.js")


def feature_file(root: Path) -> None:
    (root / "src/feature.js").write_text("module.exports = { feature: true };\n")
    Git(root)("add", "src/feature.js")


EXAMPLES: list[Example] = [
    # Code analysis first, on the seed's pristine layout (the rename changes both files; restored after).
    Example(
        "get_symbols_in_file",
        {"pathInProject": "src/utils/helper.js"},
        {
            "symbols": [
                {
                    "name": "helper",
                    "kind": "Function",
                    "range": {"startLine": 0, "startCharacter": 0, "endLine": 2, "endCharacter": 1},
                    "text": "helper",
                    "detail": "",
                }
            ]
        },
        facts=("helper",),
    ),
    Example(
        "find_references",
        {"pathInProject": "src/utils/helper.js", "line": 0, "character": 12},
        {
            "references": [
                {
                    "path": "src\\utils\\helper.js",
                    "line": 0,
                    "character": 9,
                    "endLine": 0,
                    "endCharacter": 15,
                },
                {"path": "src\\index.js", "line": 3, "character": 4, "endLine": 3, "endCharacter": 10},
            ]
        },
        facts=("helper.js", "index.js"),
    ),
    Example(
        "refactor_code_at_location",
        {
            "pathInProject": "src/utils/helper.js",
            "line": 0,
            "character": 12,
            "refactorType": "rename",
            "options": {"newName": "helperFunction"},
        },
        {"success": True, "message": "Successfully renamed to helperFunction"},
        facts=("helperFunction",),
    ),
    # Editor: open a file first, so the others have an active editor.
    Example(
        "open_file_in_editor",
        {"pathInProject": "src/index.js"},
        "file is opened",
        arrange=restore_seed_layout,
        exact=True,
    ),
    Example("get_open_in_editor_file_text", {}, "console.log('Hello World');\n", facts=("require",)),
    Example(
        "get_open_in_editor_file_path", {}, "C:\\Projects\\MyProject\\src\\index.js", facts=("index.js",)
    ),
    Example("replace_selected_text", {"text": "console.log('New Text');"}, "ok", exact=True),
    Example(
        "replace_current_file_text",
        {"text": "// New file content\nconsole.log('Replaced Content');"},
        "ok",
        exact=True,
    ),
    # Files.
    Example(
        "get_file_text_by_path",
        {"pathInProject": "src/utils/helper.js"},
        {
            "content": "function helper() { return 'Hello'; }",
            "path": "C:\\Projects\\MyProject\\src\\utils\\helper.js",
            "relativePath": "src\\utils\\helper.js",
        },
        facts=("function helper",),
        arrange=restore_seed_layout,
    ),
    Example(
        "rewrite_file_content",
        {"pathInProject": "src/utils/helper.js", "text": "function helper() { return 'Updated'; }"},
        {
            "path": "C:\\Projects\\MyProject\\src\\utils\\helper.js",
            "relativePath": "src\\utils\\helper.js",
            "size": 35,
            "operationTimeMs": 42,
        },
        facts=("helper.js",),
    ),
    Example(
        "create_new_file_with_text",
        {
            "pathInProject": "src/utils/newFile.js",
            "text": "// New file content\nfunction newFunc() { return true; }",
        },
        {
            "path": "C:\\Projects\\MyProject\\src\\utils\\newFile.js",
            "relativePath": "src\\utils\\newFile.js",
            "operationTimeMs": 38,
        },
        facts=("newFile.js",),
    ),
    Example(
        "list_files_in_folder",
        {"pathInProject": "src/utils"},
        [
            {"name": "helper.js", "type": "file", "path": "src\\utils\\helper.js"},
            {"name": "config", "type": "directory", "path": "src\\utils\\config"},
        ],
        facts=("helper.js", "config"),
    ),
    Example(
        "replace_file_content_at_position",
        {
            "pathInProject": "src/utils/helper.js",
            "startLine": 5,
            "endLine": 5,
            "content": "function helper() { return 'Updated'; }",
            "offset": 0,
        },
        "ok",
        arrange=editable_helper,
        exact=True,
    ),
    Example(
        "append_file_content",
        {"pathInProject": "src/utils/helper.js", "text": "\n// Appended content\nfunction newHelper() {}"},
        {
            "path": "C:\\Projects\\MyProject\\src\\utils\\helper.js",
            "relativePath": "src\\utils\\helper.js",
            "operationTimeMs": 25,
        },
        facts=("helper.js",),
    ),
    Example(
        "replace_specific_text",
        {
            "pathInProject": "src/utils/helper.js",
            "searchText": "oldFunction",
            "replaceText": "newFunction",
            "replaceAll": True,
        },
        {"path": "C:\\Projects\\MyProject\\src\\utils\\helper.js", "replacements": 3, "operationTimeMs": 30},
        facts=("helper.js", "3"),
        arrange=editable_helper,
    ),
    # Search.
    Example(
        "search_in_files_content",
        {"searchText": "function helper"},
        [
            {
                "path": "src\\utils\\helper.js",
                "absolutePath": "C:\\Projects\\MyProject\\src\\utils\\helper.js",
            },
            {"path": "test\\helper.test.js", "absolutePath": "C:\\Projects\\MyProject\\test\\helper.test.js"},
        ],
        facts=("helper.js",),
    ),
    Example(
        "find_files_by_name_substring",
        {"nameSubstring": "helper"},
        [
            {
                "path": "src\\utils\\helper.js",
                "name": "helper.js",
                "directory": "src\\utils",
                "absolutePath": "C:\\Projects\\MyProject\\src\\utils\\helper.js",
            }
        ],
        facts=("helper.js",),
    ),
    # Debug.
    Example(
        "toggle_debugger_breakpoint",
        {"pathInProject": "src/utils/helper.js", "line": 5},
        "Breakpoint added",
        arrange=editable_helper,
        exact=True,
    ),
    Example(
        "get_debugger_breakpoints",
        {},
        [
            {"path": "C:\\Projects\\MyProject\\src\\utils\\helper.js", "line": 5},
            {"path": "C:\\Projects\\MyProject\\src\\index.js", "line": 12},
        ],
        facts=("helper.js",),
    ),
    Example(
        "get_run_configurations",
        {},
        ["Run Dev Server", "Run Tests", "Build Production"],
        facts=("Run Dev Server", "Run Tests", "Build Production"),
    ),
    Example(
        "run_configuration",
        {"configName": "Run Dev Server"},
        "Run configuration started",
        arrange=restore_seed_layout,
        facts=("started",),
    ),
    # Terminal.
    Example("execute_terminal_command", {"command": "npm list --depth=0"}, {"status": "executed"}),
    Example(
        "run_command_on_background",
        {"command": "node -v"},
        {"stdout": "v18.17.0", "stderr": "", "exitCode": 0},
    ),
    Example(
        "wait",
        {"milliseconds": 20},  # the seed waits 3000
        {"status": "completed", "message": "Waited for 3000 milliseconds"},
    ),
    Example(
        "get_terminal_info",
        {},
        {
            "osType": "Windows",
            "osVersion": "Microsoft Windows [Version 10.0.22621.3007]",
            "terminalType": "PowerShell",
            "isIntegratedTerminal": False,
            "isDefault": True,
        },
        facts=("Linux",),
    ),
    Example(
        "execute_os_specific_command",
        {"windowsCommand": "dir", "unixCommand": "ls -la", "macCommand": "ls -la"},
        {"osType": "Windows", "command": "dir", "executed": True},
    ),
    # Git.
    Example(
        "get_project_vcs_status",
        {},
        [
            {"pathInProject": "src/utils/helper.js", "type": "MODIFICATION"},
            {"pathInProject": "src/new-file.js", "type": "ADDITION"},
        ],
        facts=("src/utils/helper.js", "src/new-file.js"),
        arrange=vcs_changes,
    ),
    Example(
        "find_commit_by_message",
        {"text": "fix bug"},
        ["a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8", "b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9"],
    ),
    Example(
        "get_file_history",
        {"pathInProject": "src/utils/helper.js", "maxEntries": 10},
        [
            {
                "hash": "a1b2c3d4",
                "message": "Update helper function",
                "author": "Developer",
                "date": "2024-01-15T10:30:00Z",
            }
        ],
        facts=(FIX_BUG,),
    ),
    Example(
        "get_file_diff",
        {"pathInProject": "src/utils/helper.js", "commit1": "HEAD~1", "commit2": "HEAD"},
        "diff --git a/src/utils/helper.js b/src/utils/helper.js\n...",
        facts=("diff --git a/src/utils/helper.js b/src/utils/helper.js",),
    ),
    Example(
        "get_branch_info",
        {},
        {"current": "main", "branches": ["main", "develop", "feature/new-feature"]},
        facts=("main", "develop"),
    ),
    Example(
        "get_commit_details",
        {"commitHash": "a1b2c3d4e5f6"},  # replaced by the real "Fix bug" commit's short hash
        {
            "hash": "a1b2c3d4e5f6",
            "message": "Fix critical bug",
            "author": "Developer",
            "date": "2024-01-15T10:30:00Z",
            "files": ["src/index.js", "src/utils/helper.js"],
        },
        facts=(FIX_BUG, "src/utils/helper.js"),
    ),
    Example(
        "commit_changes",
        {"message": "Add new feature", "files": ["src/feature.js"]},
        {"success": True, "commitHash": "a1b2c3d4e5f6"},
        arrange=feature_file,
    ),
    Example(
        "pull_changes",
        {"remote": "origin", "branch": "main"},
        {"success": True, "message": "Already up to date."},
        facts=("Already up to date",),
    ),
    Example("switch_branch", {"branch": "develop"}, {"success": True, "branch": "develop"}),
    Example(
        "create_branch",
        {"branch": "feature/new-feature", "checkout": True},
        {"success": True, "branch": "feature/new-feature", "checkedOut": True},
    ),
    # Project.
    Example(
        "get_project_modules",
        {},
        {"types": ["node"], "extensions": ["esbenp.prettier-vscode", "dbaeumer.vscode-eslint"]},
        facts=("node", "esbenp.prettier-vscode", "dbaeumer.vscode-eslint"),
    ),
    Example(
        "get_project_dependencies",
        {},
        {
            "type": "node",
            "dependencies": {"express": "^4.18.2", "lodash": "^4.17.21"},
            "devDependencies": {"typescript": "^5.0.0"},
        },
        facts=("express", "^4.18.2", "lodash", "^4.17.21", "typescript"),
    ),
    # Actions.
    Example(
        "list_available_actions",
        {},
        [
            {"id": "workbench.action.files.save", "text": "Save File"},
            {"id": "editor.action.formatDocument", "text": "Format Document"},
            {"id": "workbench.action.debug.start", "text": "Start Debugging"},
        ],
        facts=("editor.action.formatDocument",),
    ),
    Example("execute_action_by_id", {"actionId": "editor.action.formatDocument"}, "ok", exact=True),
    Example("get_progress_indicators", {}, []),
]


def test_the_examples_are_the_seeds_41() -> None:
    tools = [e.tool for e in EXAMPLES]
    assert len(tools) == len(set(tools)) == 41


# ---------------------------------------------------------------------------------------------- workspace


@pytest.fixture(scope="module")
def git_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    home = tmp_path_factory.mktemp("githome")
    with pytest.MonkeyPatch.context() as mp:
        from .support.gitrepo import isolated_git

        isolated_git(mp, home)
        mp.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
        yield


def build_workspace(base: Path) -> tuple[Path, str]:
    """Seed 000's project with history and a remote; returns (root, the short hash of the "Fix bug" commit)."""
    root = seed_js_project(base / "MyProject")
    (root / "src/utils/config").mkdir()
    (root / "src/utils/config/defaults.json").write_text('{"greeting": "Hello"}\n')
    (root / ".vscode").mkdir()
    (root / ".vscode/launch.json").write_text(json.dumps(LAUNCH, indent=2) + "\n")
    (root / ".vscode/extensions.json").write_text(json.dumps(EXTENSIONS, indent=2) + "\n")
    helper = root / "src/utils/helper.js"
    fixed = helper.read_text()
    helper.write_text(fixed.replace("'Hello'", "'Helo'"))
    git = init_repo(root)
    git.commit("Initial commit")
    helper.write_text(fixed)
    git.commit(FIX_BUG)
    fix = git("rev-parse", "--short=12", "HEAD").strip()
    git("branch", "develop")
    remote = base / "origin.git"
    init_repo(remote, bare=True)
    git("remote", "add", "origin", str(remote))
    git("push", "-q", "-u", "origin", "main", "develop")
    return root, fix


def request_of(example: Example, fix: str) -> dict[str, Any]:
    if example.tool == "get_commit_details":
        return {"commitHash": fix}
    return example.request


# ---------------------------------------------------------------------------------------------- checks


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def shape_errors(actual: Any, example: Any, where: str = "status") -> list[str]:
    """How ``actual`` differs from the example's keys and JSON types (extra keys are allowed)."""
    if json_type(actual) != json_type(example):
        return [f"{where}: {json_type(actual)} where the example has {json_type(example)} ({actual!r:.200})"]
    errors: list[str] = []
    if isinstance(example, dict):
        for key, value in example.items():
            if key not in actual:
                errors.append(f"{where}: no {key!r} (has {sorted(actual)})")
            else:
                errors += shape_errors(actual[key], value, f"{where}.{key}")
    elif isinstance(example, list) and example and actual:
        for i, item in enumerate(actual):
            errors += shape_errors(item, example[0], f"{where}[{i}]")
    return errors


def mcp_text(result: Any) -> str:
    parts = [getattr(block, "text", "") for block in result.content]
    if result.structured_content is not None:
        parts.append(json.dumps(result.structured_content))
    return "\n".join(parts)


def missing_facts(example: Example, text: str, *, any_case: bool = False) -> list[str]:
    """The example's facts ``text`` lacks (Windows separators, raw or JSON-escaped, read as "/")."""
    seen = text.replace("\\\\", "/").replace("\\", "/")
    if any_case:
        seen = seen.lower()
    return [f"lacks {fact!r}" for fact in example.facts if (fact.lower() if any_case else fact) not in seen]


def after_checks(example: Example, root: Path, rest_status: Any | None) -> list[str]:
    """What the example promises of the workspace after it ran."""
    errors: list[str] = []
    if example.tool == "refactor_code_at_location":
        if "helperFunction" not in (root / "src/index.js").read_text():
            errors.append("the rename left src/index.js alone")
        if "function helperFunction()" not in (root / "src/utils/helper.js").read_text():
            errors.append("the rename left src/utils/helper.js alone")
    if example.tool == "find_references" and rest_status is not None:
        paths = {r["path"].replace("\\", "/") for r in rest_status["references"]}
        if paths != {"src/utils/helper.js", "src/index.js"}:
            errors.append(f"references in {paths}")
    if (
        example.tool == "replace_specific_text"
        and rest_status is not None
        and rest_status["replacements"] != 3
    ):
        errors.append(f"{rest_status['replacements']} replacements")
    configs = ["Run Dev Server", "Run Tests", "Build Production"]
    if example.tool == "get_run_configurations" and rest_status is not None and rest_status[:3] != configs:
        errors.append(f"configurations {rest_status}")
    deps = {"express": "^4.18.2", "lodash": "^4.17.21"}
    if (
        example.tool == "get_project_dependencies"
        and rest_status is not None
        and rest_status["dependencies"] != deps
    ):
        errors.append(f"dependencies {rest_status['dependencies']}")
    return errors


# ---------------------------------------------------------------------------------------------- doors


@pytest.fixture(scope="module")
def rest_door(
    tmp_path_factory: pytest.TempPathFactory, git_env: None
) -> Iterator[tuple[HttpServer, Path, str]]:
    root, fix = build_workspace(tmp_path_factory.mktemp("rest"))
    server = start_http_server(root)
    yield server, root, fix
    server.stop()


@pytest.fixture(scope="module")
def mcp_door(tmp_path_factory: pytest.TempPathFactory, git_env: None) -> Iterator[tuple[Any, Path, str]]:
    root, fix = build_workspace(tmp_path_factory.mktemp("mcp"))
    ws = Workspace.open(root)
    server, _ = build_server(lambda ctx: ws, None)
    yield server, root, fix
    ws.close()


def test_every_seed_example_verbatim_through_rest(rest_door: tuple[HttpServer, Path, str]) -> None:
    server, root, fix = rest_door
    problems: list[str] = []
    with httpx.Client(timeout=180) as http:
        for example in EXAMPLES:
            if example.arrange is not None:
                example.arrange(root)
            response = http.post(f"{server.url}/mcp/{example.tool}", json=request_of(example, fix))
            try:
                envelope = response.json()
            except ValueError:
                problems.append(
                    f"{example.tool}: HTTP {response.status_code}, not JSON: {response.text[:200]}"
                )
                continue
            if (
                response.status_code != 200
                or not {"status", "error"} <= set(envelope)
                or envelope["error"] is not None
            ):
                problems.append(f"{example.tool}: HTTP {response.status_code} {json.dumps(envelope)[:300]}")
                continue
            status = envelope["status"]
            errors = shape_errors(status, example.status)
            if example.exact and status != example.status:
                errors.append(f"status {status!r}, the example says {example.status!r}")
            errors += missing_facts(example, json.dumps(status))
            errors += after_checks(example, root, status)
            problems += [f"{example.tool}: {e}" for e in errors]
    assert not problems, "\n".join(problems)


async def test_every_seed_example_verbatim_through_mcp(mcp_door: tuple[Any, Path, str]) -> None:
    server, root, fix = mcp_door
    problems: list[str] = []
    async with Client(server) as client:
        for example in EXAMPLES:
            if example.arrange is not None:
                example.arrange(root)
            result = await client.call_tool(example.tool, request_of(example, fix))
            text = mcp_text(result)
            if result.is_error:
                problems.append(f"{example.tool}: isError: {text[:300]}")
                continue
            errors = missing_facts(example, text, any_case=True)
            if example.exact and example.status not in text:
                errors.append(f"answer {text[:200]!r} lacks {example.status!r}")
            errors += after_checks(example, root, None)
            problems += [f"{example.tool}: {e}" for e in errors]
    assert not problems, "\n".join(problems)

"""No hosted answer names the server's own folders: a project's files are ``/workspace/...`` in every
result, error, command output and code-intelligence answer (file:// URIs too), on both doors.

A real ``mcp-server-ide hosted`` process; one project with a small Python package, a launch
configuration and a git history; a representative tool of every category called through the
JSON-style REST interface and over MCP (Streamable HTTP), plus failing calls; the data folder's
path (as given and resolved) must appear in no answer.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.hosted import HostedService, start_hosted

pytestmark = pytest.mark.anyio

MAIN = "from app.util import helper\n\n\ndef run() -> int:\n    return helper(2)\n"
UTIL = "def helper(x: int) -> int:\n    return x * 2\n\n\nvalue: int = 'not an int'\n"
LAUNCH = {"version": "0.2.0", "configurations": [{"name": "main", "type": "debugpy", "request": "launch",
                                                  "program": "${workspaceFolder}/src/app/main.py"}]}  # fmt: skip

CALLS: list[tuple[str, dict[str, Any]]] = [
    # editor
    ("open_file_in_editor", {"pathInProject": "src/app/main.py"}),
    ("get_open_in_editor_file_path", {}),
    ("get_editor_state", {}),
    # files
    ("get_file_text_by_path", {"pathInProject": "src/app/main.py"}),
    ("list_files_in_folder", {"pathInProject": "src"}),
    ("create_new_file_with_text", {"pathInProject": "new/made.txt", "text": "made\n"}),
    ("get_file_text_by_path", {"pathInProject": "no/such/file.txt"}),
    ("get_file_text_by_path", {"pathInProject": "../outside.txt"}),
    ("create_new_file_with_text", {"pathInProject": "src/app/main.py", "text": "exists"}),
    # search
    ("search_in_files_content", {"searchText": "helper"}),
    ("find_files_by_name_substring", {"nameSubstring": "util"}),
    # code analysis (tree-sitter, ruff, the language server)
    ("get_symbols_in_file", {"pathInProject": "src/app/util.py"}),
    ("go_to_definition", {"pathInProject": "src/app/main.py", "line": 4, "character": 12}),
    ("find_references", {"pathInProject": "src/app/util.py", "line": 0, "character": 5}),
    ("get_file_problems", {"pathInProject": "src/app/util.py"}),
    # debug and run
    ("toggle_debugger_breakpoint", {"pathInProject": "src/app/util.py", "line": 2}),
    ("get_debugger_breakpoints", {}),
    ("get_run_configurations", {}),
    # terminal
    ("run_command_on_background", {"command": "pwd; ls -d \"$PWD\"/src; cat does-not-exist; python3 -c 'import os; print(os.getcwd(), os.path.abspath(\"x\"))'"}),
    ("execute_terminal_command", {"command": "pwd; realpath src"}),
    ("get_terminal_info", {}),
    # git
    ("get_project_vcs_status", {}),
    ("get_file_history", {"pathInProject": "src/app/util.py"}),
    ("get_file_diff", {"pathInProject": "/"}),
    ("get_branch_info", {}),
    ("get_file_history", {"pathInProject": "no/such/path.py"}),
    # project
    ("get_project_modules", {}),
    ("get_project_dependencies", {}),
    # actions
    ("list_available_actions", {}),
    ("get_progress_indicators", {}),
    # the hosted-sandbox tools
    ("project_fs_read", {"path": "/workspace/src/app/util.py"}),
    ("project_fs_list", {"recursive": True}),
    ("project_fs_edit", {"path": "src/app/util.py", "oldText": "not there", "newText": "x"}),
    ("project_fs_read", {"path": "/etc/passwd"}),
    # change journal
    ("list_recent_changes", {}),
    ("create_checkpoint", {"name": "cp"}),
    ("diff_since_checkpoint", {"name": "start"}),
]  # fmt: skip


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostedService]:
    from mcp_server_ide.hosted import tokens
    from mcp_server_ide.hosted.projects import HostedProjects
    from mcp_server_ide.hosted.sqlstore import SqlStore, sqlite_url
    from mcp_server_ide.workspace import Policy

    data = tmp_path_factory.mktemp("hosted-paths") / "data"
    data.mkdir()
    store = SqlStore(sqlite_url(data))
    user = store.add_user("paula")
    secret, _ = tokens.create(store, user.id, ("read", "write", "run"))
    project = HostedProjects(store, data, Policy(hosted=True)).create(user.id, "paths")
    store.close()
    folder = data / "projects" / project.id
    (folder / "src" / "app").mkdir(parents=True)
    (folder / "src" / "app" / "__init__.py").write_text("")
    (folder / "src" / "app" / "main.py").write_text(MAIN)
    (folder / "src" / "app" / "util.py").write_text(UTIL)
    (folder / "pyproject.toml").write_text(
        '[project]\nname = "app"\nversion = "1"\ndependencies = ["httpx"]\n'
    )
    (folder / ".vscode").mkdir()
    (folder / ".vscode" / "launch.json").write_text(json.dumps(LAUNCH))
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    subprocess.run(["git", "add", "-A"], cwd=folder, check=True)
    subprocess.run([*git, "commit", "-qm", "first"], cwd=folder, check=True)
    (folder / "src" / "app" / "util.py").write_text(UTIL + "\n# changed\n")
    service = start_hosted(data)
    service.tokens, service.projects = {"P": secret}, {"P": project.id}
    try:
        yield service
    finally:
        service.stop()


def host_paths(service: HostedService) -> set[str]:
    return {str(service.data), os.path.realpath(service.data)}


def leaks(text: str, service: HostedService) -> list[str]:
    return [p for p in host_paths(service) if p in text]


def test_no_rest_answer_names_the_host_folder(service):
    seen: list[tuple[str, int, str]] = []
    with httpx.Client(headers=service.auth("P"), timeout=300) as http:
        for tool, args in CALLS:
            r = http.post(service.project_url("P", f"/mcp/{tool}"), json=args)
            seen.append((tool, r.status_code, r.text))
        job = http.post(
            service.project_url("P", "/mcp/start_job"), json={"command": "pwd; ls -l /workspace/src"}
        )
        job_id = job.json()["status"]["jobId"]
        out = http.post(
            service.project_url("P", "/mcp/get_job_output"),
            json={"jobId": job_id, "waitMs": 60000, "untilPattern": "app"},
        )
        seen += [("start_job", job.status_code, job.text), ("get_job_output", out.status_code, out.text)]
        status = http.get(service.project_url("P", "/mcp/status"))
        seen.append(("status", status.status_code, status.text))
    leaked = [(tool, text[:400]) for tool, _, text in seen if leaks(text, service)]
    assert not leaked, leaked
    answers: dict[str, str] = {}
    for tool, _, text in seen:
        answers.setdefault(tool, text)  # the first call of each tool
    # The calls did their work (an answer without the path because it failed would prove nothing).
    assert '"path":"src/app/util.py"' in answers["project_fs_read"]
    assert "/workspace" in answers["run_command_on_background"]
    assert "util.py" in answers["go_to_definition"], answers["go_to_definition"]
    assert "/workspace" in answers["get_job_output"]


async def test_no_mcp_answer_names_the_host_folder(service):
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    http = create_mcp_http_client(headers=service.auth("P"))
    client = Client(streamable_http_client(service.project_url("P"), http_client=http), mode="legacy")
    leaked = []
    async with client:
        for tool, args in CALLS:
            result = await client.call_tool(tool, args)
            dumped = json.dumps(result.model_dump(mode="json", by_alias=True, exclude_none=True))
            if leaks(dumped, service):
                leaked.append((tool, dumped[:400]))
        listed = await client.list_resources()
        templates = await client.list_resource_templates()
        uris = [str(r.uri) for r in listed.resources if str(r.uri).startswith("file:")]
        read = await client.read_resource("file:///workspace/src/app/util.py")
        for what, answer in (("resources/list", listed), ("resources/templates/list", templates),
                             ("resources/read", read)):  # fmt: skip
            dumped = json.dumps(answer.model_dump(mode="json", by_alias=True, exclude_none=True))
            if leaks(dumped, service):
                leaked.append((what, dumped[:400]))
    assert not leaked, leaked
    assert "file:///workspace/src/app/util.py" in uris, uris
    assert "def helper" in read.contents[0].text  # type: ignore[union-attr]

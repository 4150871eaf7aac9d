"""An untrusted workspace runs none of its own programs from a read-only tool (issue 13, item 4).

A planted workspace is a trap of programs the workspace controls, each a script that appends its
name to a marker file outside the workspace: its virtualenv's ``python`` (and the interpreter that
``.vscode/settings.json`` names), ``node_modules/.bin`` tools, a tsserver and a tsserver plugin in
``node_modules``, ``package.json`` scripts, tasks and launch configurations, and a git
configuration that names a program for every hook git has (``core.fsmonitor``, ``core.pager``,
``diff.external``, a textconv, clean/smudge/process filters, hooks, ``gpg.program``...).

Through a real MCP session on a ``Policy(trusted=False)`` workspace (what ``--untrusted`` builds),
every read-only tool of the registry is called (new tools are covered without editing this file),
then the tools that would run the workspace's programs are asked for with the person's
confirmation declined: the marker file stays absent.
"""

from __future__ import annotations

import json
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import types as mcp_types

from mcp_server_ide.workspace import Policy

from .support.gitrepo import isolated_git
from .support.results import payload
from .support.security import registered_specs

pytestmark = pytest.mark.anyio


def _script(path: Path, marker: Path, name: str) -> str:
    """An executable shell script at ``path`` that records ``name`` in ``marker`` and succeeds."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\necho "{name} $*" >> "{marker}"\ncat >/dev/null 2>&1 </dev/null\nexit 0\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(path)


def _node_trap(path: Path, marker: Path, name: str) -> None:
    """A JavaScript file that records ``name`` in ``marker`` when node loads it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"require('fs').appendFileSync({str(marker)!r}, {name!r} + '\\n');\n")


def plant(root: Path, marker: Path, interpreter: str) -> None:
    """Fill ``root`` with a Python + TypeScript project whose every configurable program is a trap.

    ``interpreter`` is ``venv`` (the workspace's ``.venv/bin/python``) or ``settings``
    (``python.defaultInterpreterPath`` in ``.vscode/settings.json`` names a script).
    """
    tools = root / "tools"
    for rel in (".venv/bin/python", "venv/bin/python", "env/bin/python", ".venv/bin/python3"):
        _script(root / rel, marker, rel)
    (root / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (root / ".venv" / "lib" / "python3.11" / "site-packages" / "pytest").mkdir(parents=True)
    settings: dict[str, Any] = {"editor.tabSize": 4}
    if interpreter == "settings":
        settings["python.defaultInterpreterPath"] = "${workspaceFolder}/tools/interp"
        settings["python.pythonPath"] = _script(tools / "interp2", marker, "settings-pythonPath")
        _script(tools / "interp", marker, "settings-interpreter")
    (root / ".vscode").mkdir()
    (root / ".vscode" / "settings.json").write_text(json.dumps(settings))
    (root / ".vscode" / "tasks.json").write_text(
        json.dumps(
            {
                "version": "2.0.0",
                "tasks": [
                    {"label": "build", "type": "process", "command": _script(tools / "task", marker, "task"),
                     "group": {"kind": "build", "isDefault": True}},
                    {"label": "test", "type": "shell", "command": f"{tools / 'task'} shell-test", "group": "test"},
                ],
            }
        )
    )  # fmt: skip
    (root / ".vscode" / "launch.json").write_text(
        json.dumps(
            {
                "version": "0.2.0",
                "configurations": [
                    {"name": "app", "type": "debugpy", "request": "launch", "program": "${workspaceFolder}/app.py",
                     "python": _script(tools / "launchpy", marker, "launch-python"), "preLaunchTask": "build"},
                    {"name": "node", "type": "node", "request": "launch", "program": "${workspaceFolder}/index.ts",
                     "runtimeExecutable": _script(tools / "launchnode", marker, "launch-node")},
                ],
            }
        )
    )  # fmt: skip
    (root / "pyproject.toml").write_text('[project]\nname = "trap"\nversion = "0"\n')
    (root / "pyrightconfig.json").write_text(json.dumps({"venvPath": ".", "venv": ".venv"}))
    (root / "app.py").write_text(
        "import os\n\n\ndef helper(x: int) -> int:\n    return x + 1\n\n\nhelper(1)\n"
    )
    (root / "tests").mkdir()
    (root / "tests" / "test_app.py").write_text(
        "from app import helper\n\n\ndef test_it():\n    assert helper(1) == 2\n"
    )
    (root / "conftest.py").write_text("")
    # Node: scripts, bin tools, a tsserver and a tsserver plugin the project ships.
    (root / "package.json").write_text(
        json.dumps(
            {
                "name": "trap",
                "scripts": {"test": f"{tools / 'task'} npm-test", "prepare": f"{tools / 'task'} npm-prepare",
                            "lint": "eslint ."},
                "devDependencies": {"eslint": "^9.0.0", "typescript": "^5.0.0"},
            }
        )
    )  # fmt: skip
    for tool in ("eslint", "tsc", "tsserver", "prettier", "typescript-language-server"):
        _script(root / "node_modules" / ".bin" / tool, marker, f"node_modules/.bin/{tool}")
    _node_trap(root / "node_modules" / "typescript" / "lib" / "tsserver.js", marker, "workspace-tsserver")
    _node_trap(root / "node_modules" / "typescript" / "lib" / "typescript.js", marker, "workspace-typescript")
    (root / "node_modules" / "typescript" / "package.json").write_text(
        '{"name": "typescript", "version": "5.0.0", "main": "lib/typescript.js"}'
    )
    _node_trap(root / "node_modules" / "evil-plugin" / "index.js", marker, "tsserver-plugin")
    (root / "node_modules" / "evil-plugin" / "package.json").write_text(
        '{"name": "evil-plugin", "main": "index.js"}'
    )
    (root / "tsconfig.json").write_text(
        json.dumps(
            {"compilerOptions": {"strict": True, "plugins": [{"name": "evil-plugin"}]}, "include": ["*.ts"]}
        )
    )
    (root / "index.ts").write_text(
        "export function helper(x: number): number {\n  return x + 1;\n}\nhelper(1);\n"
    )
    (root / ".gitattributes").write_text("* diff=trap filter=trap merge=trap\n")
    _git_trap(root, marker, tools)


def _git_trap(root: Path, marker: Path, tools: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, stdin=subprocess.DEVNULL)

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-q", "-m", "first")
    (root / "app.py").write_text((root / "app.py").read_text() + "\nhelper(2)\n")
    git("commit", "-q", "-am", "fix bug in helper")
    (root / "app.py").write_text((root / "app.py").read_text() + "\nhelper(3)\n")  # a change to diff
    _submodule_trap(root, marker, tools, git)
    (root / "staged.txt").write_text("staged\n")
    git("add", "staged.txt")  # something for draft_commit_message to read (git diff --cached)
    (root / "untracked.txt").write_text("new\n")
    hook = _script(tools / "git-program", marker, "git-config-program")
    config = {
        "core.fsmonitor": hook,
        "core.pager": hook,
        "core.editor": hook,
        "core.askPass": hook,
        "core.sshCommand": hook,
        "core.alternateRefsCommand": hook,
        "pager.log": hook,
        "pager.diff": hook,
        "pager.show": hook,
        "pager.status": "true",
        "diff.external": hook,
        "diff.trap.textconv": hook,
        "diff.trap.command": hook,
        "filter.trap.clean": hook,
        "filter.trap.smudge": hook,
        "filter.trap.process": hook,
        "filter.trap.required": "true",
        "merge.trap.driver": hook,
        "gpg.program": hook,
        "gpg.ssh.program": hook,
        "log.showSignature": "true",
        "credential.helper": f"!{hook}",
        "sequence.editor": hook,
        "status.submoduleSummary": "true",
        "remote.origin.url": f"ext::{hook}",
        "remote.origin.uploadpack": hook,
        "alias.status": f"!{hook}",
    }
    for key, value in config.items():
        git("config", key, value)
    hooks = root / ".git" / "hooks"
    for name in ("pre-commit", "post-checkout", "post-index-change", "reference-transaction", "pre-auto-gc",
                 "post-commit", "fsmonitor-watchman", "post-rewrite", "pre-push"):  # fmt: skip
        _script(hooks / name, marker, f"hook {name}")


def _submodule_trap(root: Path, marker: Path, tools: Path, git: Any) -> None:
    """A submodule ``lib`` whose own configuration (``.git/modules/lib/config``) names programs, with a
    modified file there: git would run them if it looked into the submodule unguarded."""
    origin = root.parent / "lib-origin"
    subprocess.run(["git", "init", "-q", "-b", "main", str(origin)], check=True, capture_output=True)
    (origin / "a.txt").write_text("a\n")
    subprocess.run(["git", "-C", str(origin), "add", "-A"], check=True, capture_output=True)
    subprocess.run(["git", "-C", str(origin), "commit", "-q", "-m", "lib"], check=True, capture_output=True)
    git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(origin), "lib")
    git("commit", "-q", "-m", "add lib")
    program = _script(tools / "submodule-program", marker, "submodule-config-program")
    lib = root / "lib"
    for key in (
        "core.fsmonitor",
        "filter.trap.clean",
        "filter.trap.process",
        "diff.trap.textconv",
        "core.pager",
    ):
        subprocess.run(["git", "-C", str(lib), "config", key, program], check=True, capture_output=True)
    (lib / ".gitattributes").write_text("* filter=trap diff=trap\n")
    (lib / "a.txt").write_text("a\nchanged\n")


ROOT_FILE = "app.py"

ARGS: dict[str, dict[str, Any]] = {
    "open_file_in_editor": {"pathInProject": ROOT_FILE},
    "close_file_in_editor": {"pathInProject": ROOT_FILE},
    "get_file_text_by_path": {"pathInProject": ROOT_FILE},
    "list_files_in_folder": {"pathInProject": ""},
    "search_in_files_content": {"searchText": "helper"},
    "find_files_by_name_substring": {"nameSubstring": "app"},
    "get_symbols_in_file": {"pathInProject": ROOT_FILE},
    "find_references": {"pathInProject": ROOT_FILE, "line": 3, "character": 5},
    "go_to_definition": {"pathInProject": ROOT_FILE, "line": 7, "character": 1},
    "get_file_problems": {"pathInProject": ROOT_FILE},
    "get_project_problems": {},
    "wait": {"milliseconds": 1},
    "read_terminal_output": {"terminalId": "terminal-1", "offset": 0, "waitMs": 0},
    "get_job_output": {"jobId": "job-1", "offset": 0, "waitMs": 0},
    "get_file_history": {"pathInProject": ROOT_FILE, "maxEntries": 10},
    "get_file_diff": {"pathInProject": ROOT_FILE, "commit1": "HEAD~1", "commit2": "HEAD"},
    "project_fs_read": {"path": ROOT_FILE},
    "project_fs_list": {"dir": "", "recursive": True},
    "diff_since_checkpoint": {"name": "nope"},
}
"""Arguments for the read-only tools whose registry example names files this project does not have."""

EXTRA_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get_file_problems", {"pathInProject": "index.ts"}),
    ("get_symbols_in_file", {"pathInProject": "index.ts"}),
    ("find_references", {"pathInProject": "index.ts", "line": 0, "character": 17}),
    ("get_file_diff", {"pathInProject": ROOT_FILE}),
    ("get_file_diff", {"pathInProject": "lib"}),
    ("get_file_history", {"pathInProject": "lib"}),
    ("get_project_vcs_status", {}),
]
"""More calls of the same tools: the other language, a diff of the working tree."""


async def sample(context: Any, params: Any) -> Any:
    """The client's model, for draft_commit_message."""
    text = mcp_types.TextContent(type="text", text="Add staged.txt")
    return mcp_types.CreateMessageResult(role="assistant", content=text, model="test")


def declining(asked: list[str]) -> Any:
    async def callback(context: Any, params: Any) -> Any:
        asked.append(params.message)
        return mcp_types.ElicitResult(action="decline")

    return callback


@pytest.fixture
def trap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path]]:
    isolated_git(monkeypatch, tmp_path / "home")
    marker = tmp_path / "ran.log"
    yield tmp_path / "ws", marker


async def _call_every_read_only_tool(client: Any) -> list[str]:
    """Call every read-only tool once (and the extra calls); the names of those that answered."""
    answered: list[str] = []
    calls = [
        (spec.name, ARGS.get(spec.name, spec.example or {})) for spec in registered_specs() if spec.read_only
    ]
    for name, args in calls + EXTRA_CALLS:
        result = await client.call_tool(name, args)
        if not result.is_error:
            answered.append(name)
            if name != "get_project_problems":
                continue
            data = payload(result)
            if isinstance(data, dict) and data.get("jobId"):
                await client.call_tool("get_job_output", {"jobId": data["jobId"], "waitMs": 300_000})
    return answered


@pytest.mark.parametrize("interpreter", ["venv", "settings"])
async def test_read_only_tools_run_nothing_of_an_untrusted_workspace(
    mcp: Any, trap: tuple[Path, Path], interpreter: str
) -> None:
    root, marker = trap
    root.mkdir()
    plant(root, marker, interpreter)
    asked: list[str] = []
    async with mcp(
        root, policy=Policy(trusted=False), elicitation_callback=declining(asked), sampling_callback=sample
    ) as client:
        answered = await _call_every_read_only_tool(client)
        assert {"list_available_actions", "draft_commit_message", "find_references", "get_file_problems", "get_run_configurations", "get_project_vcs_status",
                "get_file_diff", "get_symbols_in_file", "get_project_problems"} <= set(answered)  # fmt: skip
        listed = payload(await client.call_tool("list_available_actions", {}))
        ids = [a["id"] for a in listed]
        tests = next(a["text"] for a in listed if a["id"] == "testing.runAll")  # still offered: it asks first
        # pytest is read from the virtualenv's site-packages, not by running its python.
        assert tests == (
            "Test: Run All Tests (pytest, npm test)"
            if interpreter == "venv"
            else "Test: Run All Tests (unittest, npm test)"
        )
        # The person declines every action that runs the workspace's programs, and every run configuration.
        for action in ids:
            if action.startswith(("testing.", "workbench.action.tasks.", "workbench.action.debug.")):
                result = await client.call_tool("execute_action_by_id", {"actionId": action})
                assert result.is_error and "declined" in result.content[0].text, (action, result.content)
        for name in ("app", "node", "build", "test"):
            result = await client.call_tool("run_configuration", {"configName": name})
            assert result.is_error, (name, result.content)
    assert asked, "nothing asked the person"
    ran = marker.read_text() if marker.exists() else ""
    assert ran == "", f"the untrusted workspace's programs ran:\n{ran}"
    # The traps are live: git as a person runs it here starts the repository's and the submodule's programs.
    for where in (root, root / "lib"):
        subprocess.run(["git", "status"], cwd=where, capture_output=True, stdin=subprocess.DEVNULL)
    ran = marker.read_text() if marker.exists() else ""
    assert "git-config-program" in ran and "submodule-config-program" in ran, ran

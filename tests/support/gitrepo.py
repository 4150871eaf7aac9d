"""Real git repositories for tests, built with the real git CLI, and helpers to call tools.

``isolated_git(monkeypatch, home)`` keeps the machine's own git configuration out of the tests
(and out of the server under test, which inherits the environment): a fresh global config with
an identity, no system config, no inherited ``GIT_*`` location variables.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from .results import plain_run

IDENTITY = {"name": "Test Author", "email": "author@example.com"}


def isolated_git(monkeypatch: pytest.MonkeyPatch, home: Path) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    config = home / "gitconfig"
    config.write_text(
        "[user]\n\tname = Test Author\n\temail = author@example.com\n"
        "[init]\n\tdefaultBranch = main\n"
        "[commit]\n\tgpgsign = false\n"
        "[advice]\n\tdetachedHead = false\n"
    )
    for name in list(os.environ):
        if name.startswith("GIT_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return config


class Git:
    """Runs the real git in ``root`` (as a person at a terminal would)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def __call__(self, *args: str, check: bool = True, env: dict[str, str] | None = None) -> str:
        full_env = dict(os.environ)
        full_env.update(env or {})
        result = subprocess.run(
            ["git", *args],
            cwd=self.root,
            capture_output=True,
            text=True,
            env=full_env,
            stdin=subprocess.DEVNULL,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed: {result.stderr}{result.stdout}")
        return result.stdout

    def write(self, rel: str, text: str) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def commit(self, message: str, files: dict[str, str] | None = None) -> str:
        for rel, text in (files or {}).items():
            self.write(rel, text)
        self("add", "-A")
        self("commit", "-q", "--allow-empty", "-m", message)
        return self.head()

    def head(self) -> str:
        return self("rev-parse", "HEAD").strip()

    def branch(self) -> str:
        return self("symbolic-ref", "--short", "-q", "HEAD", check=False).strip()


def init_repo(root: Path, *, bare: bool = False) -> Git:
    root.mkdir(parents=True, exist_ok=True)
    git = Git(root)
    git("init", "-q", "-b", "main", *(["--bare"] if bare else []))
    return git


async def ok(client: Any, tool: str, **arguments: Any) -> Any:
    """Call a tool and return its result: the JSON of its one text block, or the text itself (a diff)."""
    result = await client.call_tool(tool, arguments)
    text = result.content[0].text if result.content else ""
    assert not result.is_error, f"{tool}({arguments}) failed: {text}"
    if text.startswith("exit code "):
        return plain_run(text)
    if not text.startswith(("{", "[")):
        return text
    return json.loads(text)


async def fails(client: Any, tool: str, **arguments: Any) -> str:
    """Call a tool that must fail; return its error text."""
    result = await client.call_tool(tool, arguments)
    text = result.content[0].text if result.content else ""
    assert result.is_error, f"{tool}({arguments}) should have failed, got {text[:500]}"
    return text


def flat_changes(grouped: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """A commit's compact ``fileChanges`` (paths by type, a move as ``{path, oldPath}``) as the seed's
    ``[{path, type, oldPath?}]``, sorted by path."""
    out = [
        {"path": item, "type": kind}
        if isinstance(item, str)
        else {"path": item["path"], "type": kind, "oldPath": item["oldPath"]}
        for kind, items in grouped.items()
        for item in items
    ]
    return sorted(out, key=lambda c: c["path"])


def flat_status(grouped: dict[str, Any]) -> list[dict[str, Any]]:
    """The compact ``get_project_vcs_status`` answer as the seed's list ``[{pathInProject, type, staged?,
    unstaged?, oldPathInProject?}]`` (the MCP list form before grouping: only true flags), sorted by path."""
    entries: dict[str, dict[str, Any]] = {}
    for side in ("staged", "unstaged"):
        for change in flat_changes(grouped.get(side, {})):
            entry = entries.setdefault(
                change["path"], {"pathInProject": change["path"], "type": change["type"]}
            )
            entry[side] = True
            if "oldPath" in change:
                entry["oldPathInProject"] = change["oldPath"]
    for key, kind in (("untracked", "UNTRACKED"), ("conflicts", "CONFLICT")):
        for path in grouped.get(key, []):
            entries[path] = {"pathInProject": path, "type": kind, "unstaged": True}
    return [entries[p] for p in sorted(entries)]


def paths(commit: dict[str, Any]) -> list[str]:
    """The paths a commit changed, from the ``fileChanges`` of get_commit_details or commit_changes."""
    return [change["path"] for change in flat_changes(commit["fileChanges"])]

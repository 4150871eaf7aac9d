"""Read-only git questions the MCP surface asks (status, diffs, branches) for resources, prompts,
completion and the commit-message draft.

Runs the real ``git`` the way ARCHITECTURE.md says reads must: fixed argv (no caller text ever
becomes an option), ``GIT_TERMINAL_PROMPT=0``, no pager, no fsmonitor, no external diff or
textconv, hooks off, a timeout and an output cap, stdin closed. When ``engines/git.py`` offers the
same question (``status_porcelain``, ``diff``...) it should take these over; until then this is
the one place the surface touches git.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

from ..workspace import Workspace

TIMEOUT = 15.0
MAX_OUTPUT = 2 * 1024 * 1024

SAFE_CONFIG = (
    "-c", "core.fsmonitor=false",
    "-c", "core.hooksPath=/dev/null",
    "-c", "diff.external=",
    "-c", "core.pager=cat",
    "-c", "color.ui=false",
)  # fmt: skip


@dataclass(frozen=True)
class GitOutput:
    text: str
    truncated: bool
    ok: bool
    error: str = ""


def is_repo(ws: Workspace) -> bool:
    """True when the workspace root is (inside) a git work tree."""
    root = ws.root
    return any((folder / ".git").exists() for folder in (root, *root.parents))


def run(ws: Workspace, *args: str, max_output: int = MAX_OUTPUT) -> GitOutput:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat", PAGER="cat", GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    try:
        proc = subprocess.run(
            ["git", *SAFE_CONFIG, *args],
            cwd=ws.root,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=TIMEOUT,
            check=False,
        )
    except FileNotFoundError:
        return GitOutput("", False, False, "git is not installed")
    except subprocess.TimeoutExpired:
        return GitOutput("", True, False, f"git took longer than {TIMEOUT:.0f}s")
    out = proc.stdout
    truncated = len(out) > max_output
    if truncated:
        out = out[:max_output]
    text = out.decode("utf-8", errors="replace")
    return GitOutput(
        text, truncated, proc.returncode == 0, proc.stderr.decode("utf-8", errors="replace").strip()
    )


def status(ws: Workspace) -> GitOutput:
    return run(ws, "status", "--porcelain=v1", "--branch", "--untracked-files=normal", "--no-renames")


def staged_diff(ws: Workspace, max_output: int = 200_000) -> GitOutput:
    return run(
        ws, "diff", "--cached", "--no-ext-diff", "--no-textconv", "--stat", "--patch", max_output=max_output
    )


def working_diff(ws: Workspace, max_output: int = 200_000) -> GitOutput:
    """Staged and unstaged changes against HEAD (or everything staged when there is no commit yet)."""
    head = run(ws, "rev-parse", "--verify", "--quiet", "HEAD")
    if head.ok:
        return run(
            ws, "diff", "HEAD", "--no-ext-diff", "--no-textconv", "--stat", "--patch", max_output=max_output
        )
    return staged_diff(ws, max_output)


def branches(ws: Workspace) -> list[str]:
    out = run(ws, "for-each-ref", "--format=%(refname:short)", "refs/heads", "refs/remotes", "refs/tags")
    if not out.ok:
        return []
    return [line for line in out.text.splitlines() if line and not line.endswith("/HEAD")]


def current_branch(ws: Workspace) -> str:
    out = run(ws, "symbolic-ref", "--quiet", "--short", "HEAD")
    return out.text.strip() if out.ok else ""


def changed_paths(ws: Workspace) -> list[str]:
    """Paths with staged or unstaged changes, and untracked files (root-relative, POSIX)."""
    out = run(ws, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
    if not out.ok:
        return []
    return [entry[3:] for entry in out.text.split("\0") if len(entry) > 3]


def recent_subjects(ws: Workspace, count: int = 10) -> list[str]:
    out = run(ws, "log", f"-{count}", "--format=%s")
    return out.text.splitlines() if out.ok else []

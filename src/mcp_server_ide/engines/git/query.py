"""Read-only git questions the MCP surface asks (status, diffs, branches) for resources, prompts,
completion and the commit-message draft.

A thin layer over the git engine: every command runs through ``Repo.git`` in read mode, so it gets the
same containment as the git tools (checked argv, no fsmonitor/hooks/filters/external diff/pager,
no prompts, a timeout and an output cap, the repository at the root only). Failures become
``GitOutput(ok=False)`` because the surface degrades instead of failing.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...workspace import Workspace
from ..failures import ToolFailure
from .repository import repo

MAX_OUTPUT = 2 * 1024 * 1024


@dataclass(frozen=True)
class GitOutput:
    text: str
    truncated: bool
    ok: bool
    error: str = ""


def is_repo(ws: Workspace) -> bool:
    """True when the workspace root holds a git repository (the one the git tools use)."""
    try:
        repo(ws)
    except ToolFailure:
        return False
    return True


def run(ws: Workspace, *args: str, max_output: int = MAX_OUTPUT) -> GitOutput:
    """One read-mode git command; any exit code is an answer (``ok`` says whether it was 0), never a failure."""
    try:
        result = repo(ws).git(
            *args, mode="read", ok=tuple(range(256)), max_output=max_output, partial_ok=True
        )
    except ToolFailure as exc:
        return GitOutput("", False, False, str(exc))
    return GitOutput(result.out, result.truncated, result.returncode == 0, result.err.strip())


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

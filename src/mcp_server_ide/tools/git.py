"""Git tools (seed 000, "Git Basic" and "Git Advanced"): status, history, diffs, branches, commits, pull.

Thin: each tool checks its parameters, asks ``engines.git`` (which runs the real git, contained)
and shapes the seed's result. Paths in results are relative to the workspace root.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated, Any, Literal, NotRequired

import anyio
from pydantic import Field
from typing_extensions import TypedDict

from ..call import current, seed_shapes, shaped
from ..engines.confirm import confirm
from ..lazy import LazyModule
from ..registry import ToolFailure, tool
from .lean import without
from .params import PathInProject

if TYPE_CHECKING:
    from ..engines import git as engine
else:
    engine = LazyModule("mcp_server_ide.engines.git")

ChangeType = Literal["MODIFICATION", "ADDITION", "DELETION", "MOVED", "UNTRACKED", "CONFLICT"]


class VcsChange(TypedDict):
    pathInProject: str
    type: ChangeType
    staged: NotRequired[bool]
    """The change (or part of it) is in the index (on MCP: only when true)."""
    unstaged: NotRequired[bool]
    """The working tree differs from the index (always true for UNTRACKED and CONFLICT; on MCP: only when true)."""
    oldPathInProject: NotRequired[str]


class FileChange(TypedDict):
    path: str
    type: ChangeType
    oldPath: NotRequired[str]


class Moved(TypedDict):
    path: str
    oldPath: str


Grouped = dict[ChangeType, list[str | Moved]]
"""The compact (MCP) form of a list of changes: paths by change type, in order; a move or copy as
``{path, oldPath}``."""


class VcsGroups(TypedDict):
    """The compact (MCP) status: each side's changes by type; a file with staged and unstaged changes is
    on both sides."""

    staged: NotRequired[Grouped]
    unstaged: NotRequired[Grouped]
    untracked: NotRequired[list[str]]
    conflicts: NotRequired[list[str]]


class HistoryEntry(TypedDict):
    hash: str
    message: str
    author: str
    date: str
    authorEmail: NotRequired[str]
    """On the REST door only."""
    path: NotRequired[str]
    """A file's history: the file's path in this commit (its earlier name, before a rename); on MCP only
    where it differs from the path asked for."""


class BranchInfo(TypedDict):
    current: str | None
    """The checked-out branch; null when HEAD is detached."""
    branches: list[str]
    remoteBranches: list[str]
    upstream: str | None
    ahead: int | None
    behind: int | None
    detached: bool
    headCommit: str | None
    unborn: bool
    """True in a repository without commits: `current` names the branch the first commit will create."""
    operation: str | None
    """A merge, rebase, cherry-pick, revert or bisect in progress, or null."""
    upstreamGone: NotRequired[bool]


class CommitDetails(TypedDict):
    hash: str
    message: str
    author: str
    date: str
    files: NotRequired[list[str]]
    """The seed's list of paths (REST door); on MCP the paths are in ``fileChanges`` only."""
    authorEmail: str
    committer: NotRequired[str]
    """On MCP only when not the author."""
    committerDate: NotRequired[str]
    """On MCP only when not the author's date."""
    parents: list[str]
    fileChanges: list[FileChange] | Grouped
    """On MCP grouped by type: ``{"MODIFICATION": ["a.py"], "MOVED": [{"path": "b.py", "oldPath": "a.py"}]}``."""


class CommitResult(TypedDict):
    success: NotRequired[bool]
    """On the REST door only (a failed commit is an error)."""
    commitHash: str
    branch: str | None
    files: NotRequired[list[str]]
    """The seed's list of paths (REST door); on MCP the paths are in ``fileChanges`` only."""
    fileChanges: list[FileChange] | Grouped
    """On MCP grouped by type, as in CommitDetails."""
    hooksEnabled: NotRequired[bool]
    """On MCP only when false (the repository's hooks did not run)."""


class PullResult(TypedDict):
    success: bool
    message: str
    remote: str
    branch: str
    updated: bool
    previousCommit: str | None
    currentCommit: str
    changedFiles: list[FileChange]


class SwitchResult(TypedDict):
    success: bool
    branch: str
    previousBranch: str | None
    carriedChanges: list[str]
    """Files with local changes that came along to the new branch."""
    createdFrom: NotRequired[str]


class CreateBranchResult(TypedDict):
    success: bool
    branch: str
    checkedOut: bool
    commit: str | None


def _repo() -> engine.Repo:
    return engine.repo(current().workspace)


def _p(path: str) -> str:
    return path.replace("/", os.sep)


def _vcs(e: engine.StatusEntry) -> VcsChange:
    item = VcsChange(pathInProject=_p(e.path), type=e.type, staged=e.staged, unstaged=e.unstaged)
    if e.old_path:
        item["oldPathInProject"] = _p(e.old_path)
    return item


def _change(e: engine.StatusEntry) -> FileChange:
    item = FileChange(path=_p(e.path), type=e.type)
    if e.old_path:
        item["oldPath"] = _p(e.old_path)
    return item


def _untrusted() -> bool:
    policy = current().workspace.policy
    return not policy.trusted or policy.hosted


def _lean_status(changes: list[VcsChange]) -> Any:
    """The status grouped (:class:`VcsGroups`): every fact of the list, each key and type said once."""
    out: dict[str, Any] = {}
    for c in changes:
        path = c["pathInProject"]
        if c["type"] in ("UNTRACKED", "CONFLICT"):
            out.setdefault("untracked" if c["type"] == "UNTRACKED" else "conflicts", []).append(path)
            continue
        old = c.get("oldPathInProject")
        item: str | Moved = Moved(path=path, oldPath=old) if old else path
        for side in ("staged", "unstaged"):
            if c.get(side):
                out.setdefault(side, {}).setdefault(c["type"], []).append(item)
    return {k: out[k] for k in ("staged", "unstaged", "untracked", "conflicts") if k in out}


def grouped(changes: list[FileChange]) -> Grouped:
    """``[{path, type, oldPath?}]`` as paths by type, in order (a move or copy as ``{path, oldPath}``)."""
    out: dict[Any, list[str | Moved]] = {}
    for c in changes:
        old = c.get("oldPath")
        out.setdefault(c["type"], []).append(Moved(path=c["path"], oldPath=old) if old else c["path"])
    return out


def _lean_commit(details: Any) -> Any:
    """A commit's details or a new commit's result, less what MCP need not repeat: ``success``, ``files``
    (the paths are in ``fileChanges``, grouped by type), a committer who is the author,
    ``hooksEnabled: true``."""
    lean = without(
        details,
        "files",
        success=True,
        committer=details.get("author"),
        committerDate=details.get("date"),
        hooksEnabled=True,
    )
    lean["fileChanges"] = grouped(details["fileChanges"])
    return lean


@tool(
    "git",
    title="VCS status",
    read_only=True,
    requires=("git",),
    errors=("Git not available (not a repository)",),
)
def get_project_vcs_status() -> list[VcsChange] | VcsGroups:
    """Files changed against HEAD (git status): `{staged?, unstaged?: {TYPE: [path]}, untracked?, conflicts?}`
    (a move: `{path, oldPath}`); `{}` when clean."""
    return shaped([_vcs(e) for e in _repo().status()], _lean_status)


@tool(
    "git",
    title="Find commits by message",
    read_only=True,
    requires=("git",),
    example={"text": "fix bug"},
    errors=("Git not available",),
)
def find_commit_by_message(
    text: str,
    maxResults: Annotated[int, Field(ge=1, le=1000)] = 100,
) -> list[str]:
    """Hashes of the commits (every branch and tag) whose message contains a text, case-insensitive, newest
    first."""
    if not text.strip():
        raise ToolFailure("invalid text: give the words to look for in commit messages")
    if "\x00" in text:
        raise ToolFailure("invalid text: it contains a NUL byte")
    return _repo().find_commits(text.strip(), maxResults)


@tool(
    "git",
    title="File history",
    read_only=True,
    requires=("git",),
    example={"pathInProject": "src/utils/helper.js", "maxEntries": 10},
    errors=("Git not available", "outside the workspace", "not found"),
)
def get_file_history(
    pathInProject: PathInProject,
    maxEntries: Annotated[int, Field(ge=1, le=1000)] = 30,
) -> list[HistoryEntry]:
    """Commits that changed a file or folder (`/`: the whole history), newest first, following renames."""
    repo = _repo()
    path = repo.path(pathInProject)
    commits = repo.file_history(path, maxEntries)
    if not commits and not os.path.lexists(repo.root / path):
        raise ToolFailure(
            f"not found: {pathInProject!r} does not exist and has no history in this repository",
            kind="not_found",
        )
    full = seed_shapes()
    entries = []
    for c in commits:
        entry = HistoryEntry(hash=c.hash, message=c.message, author=c.author, date=c.date)
        if full:
            entry["authorEmail"] = c.author_email
        if c.path is not None and (full or c.path != path):
            entry["path"] = c.path.replace("/", os.sep)
        entries.append(entry)
    return entries


@tool(
    "git",
    title="File diff",
    read_only=True,
    structured=False,
    requires=("git",),
    example={"pathInProject": "src/utils/helper.js", "commit1": "HEAD~1", "commit2": "HEAD"},
    errors=("Git not available", "unknown commit", "not found", "outside the workspace"),
)
def get_file_diff(
    pathInProject: PathInProject,
    commit1: Annotated[
        str | None,
        Field(description="A hash, branch, tag or HEAD~N."),
    ] = None,
    commit2: str | None = None,
    staged: Annotated[bool, Field(description="The index, not the working tree.")] = False,
) -> str:
    """Unified diff of a file or folder: `commit1` to `commit2`; `commit1` alone to the working tree;
    `commit2` alone: its own change; neither: unstaged (or `staged`) changes. "" when none. Headers: `diff
    --git` and mode/rename lines only."""
    repo = _repo()
    path = repo.path(pathInProject)
    return shaped(repo.diff(path, commit1 or None, commit2 or None, staged).text, lean_diff)


def lean_diff(diff: str) -> str:
    """``diff`` less the header lines that repeat what the ``diff --git a/X b/Y`` line and git's mode and
    rename lines say: ``index <blob>..<blob> <mode>`` (hashes no reader uses) and ``--- a/X`` / ``+++ b/Y``
    (``/dev/null`` stands beside a ``new file`` or ``deleted file`` line)."""
    kept: list[str] = []
    header = False
    for line in diff.split("\n"):
        if line.startswith("diff --git "):
            header = True
        elif line.startswith("@@"):
            header = False
        elif header and line.startswith(("index ", "--- ", "+++ ")):
            continue
        kept.append(line)
    return "\n".join(kept)


@tool(
    "git",
    title="Branch info",
    read_only=True,
    requires=("git",),
    errors=("Git not available",),
)
def get_branch_info() -> BranchInfo:
    """The current branch, local and remote branches, the upstream with ahead/behind counts, and any merge or
    rebase in progress."""
    info = _repo().branch_info()
    result = BranchInfo(
        current=info.current,
        branches=info.branches,
        remoteBranches=info.remote_branches,
        upstream=info.upstream,
        ahead=info.ahead,
        behind=info.behind,
        detached=info.detached,
        headCommit=info.head,
        unborn=info.unborn,
        operation=info.operation,
    )
    if info.upstream_gone:
        result["upstreamGone"] = True
    return result


@tool(
    "git",
    title="Commit details",
    read_only=True,
    requires=("git",),
    example={"commitHash": "HEAD"},
    errors=("Git not available", "unknown or ambiguous commit"),
)
def get_commit_details(
    commitHash: Annotated[str, Field(description="A hash, branch, tag or HEAD~N.")],
) -> CommitDetails:
    """One commit: message, author, date, parents and the files it changed, by change type."""
    c = _repo().commit_details(commitHash)
    return shaped(_commit_details(c), _lean_commit)


def _commit_details(c: Any) -> CommitDetails:
    return CommitDetails(
        hash=c.hash,
        message=c.message,
        author=c.author,
        date=c.date,
        files=[_p(e.path) for e in c.changes],
        authorEmail=c.author_email,
        committer=c.committer,
        committerDate=c.committer_date,
        parents=c.parents,
        fileChanges=[_change(e) for e in c.changes],
    )


@tool(
    "git",
    title="Commit",
    requires=("git",),
    example={"message": "Add new feature", "files": ["src/feature.js"]},
    errors=(
        "nothing staged",
        "unresolved conflicts",
        "a hook refused",
        "no author identity",
        "outside the workspace",
    ),
)
async def commit_changes(
    message: str,
    files: Annotated[
        list[str] | None,
        Field(description="Stage and commit exactly these; omit to commit what is staged."),
    ] = None,
) -> CommitResult:
    """Commit what is staged, or exactly `files` (staged for you). Hooks run in a trusted workspace; an
    untrusted one asks the person first and runs none."""
    repo = _repo()
    paths = [repo.path(f, for_commit=True) for f in files] if files else None
    if _untrusted():
        what = f"{len(paths)} file(s)" if paths else "the staged changes"
        await confirm(
            f"Commit {what} with the message {message.strip().splitlines()[0][:200]!r}? "
            "(untrusted workspace: its git hooks will not run)",
            rule="committing in an untrusted workspace needs the person's confirmation",
        )
    result = await anyio.to_thread.run_sync(repo.commit, message, paths)
    done = CommitResult(
        success=True,
        commitHash=result.hash,
        branch=result.branch,
        files=[_p(e.path) for e in result.files],
        fileChanges=[_change(e) for e in result.files],
        hooksEnabled=result.hooks_enabled,
    )
    return shaped(done, _lean_commit)


@tool(
    "git",
    title="Pull",
    destructive=True,
    open_world=True,
    requires=("git",),
    example={"remote": "origin", "branch": "main"},
    errors=(
        "not a configured remote",
        "not a fast-forward",
        "local changes would be overwritten",
        "needs credentials",
    ),
)
async def pull_changes(
    remote: Annotated[str, Field(description="A configured remote (no URLs).")] = "origin",
    branch: Annotated[
        str | None,
        Field(description="Default: the upstream."),
    ] = None,
) -> PullResult:
    """Fetch from a configured remote and fast-forward the current branch; when histories diverged or local
    changes are in the way, it refuses and changes nothing."""
    repo = _repo()
    engine.check_remote(remote)
    if branch is not None:
        engine.check_value(branch, "branch name")
    if _untrusted():
        await confirm(
            f"Pull {branch or 'the upstream branch'} from the remote {remote!r} into the current branch?",
            rule="pulling in an untrusted workspace needs the person's confirmation",
        )
    r = await anyio.to_thread.run_sync(repo.pull, remote, branch)
    return PullResult(
        success=True,
        message=r.message,
        remote=r.remote,
        branch=r.branch,
        updated=r.updated,
        previousCommit=r.before,
        currentCommit=r.after,
        changedFiles=[_change(e) for e in r.files],
    )


@tool(
    "git",
    title="Switch branch",
    destructive=True,
    idempotent=True,
    requires=("git",),
    example={"branch": "develop"},
    errors=("no such branch", "local changes would be overwritten", "merge or rebase in progress"),
)
async def switch_branch(
    branch: str,
) -> SwitchResult:
    """Check out a branch (one only on a remote is created, tracking it); refused, changing nothing, when
    local changes would be overwritten."""
    repo = _repo()
    plan = await anyio.to_thread.run_sync(repo.switch_plan, branch)
    if _untrusted() and plan.local_changes and plan.current != plan.branch:
        await confirm(
            f"Switch to {branch!r} carrying local changes in {len(plan.local_changes)} file(s)?",
            rule="switching branches with local changes in an untrusted workspace needs the person's confirmation",
        )
    r = await anyio.to_thread.run_sync(repo.switch, plan)
    result = SwitchResult(
        success=True, branch=r.branch, previousBranch=r.previous, carriedChanges=[_p(p) for p in r.carried]
    )
    if r.created_from:
        result["createdFrom"] = r.created_from
    return result


@tool(
    "git",
    title="Create branch",
    requires=("git",),
    example={"branch": "feature/new-feature", "checkout": True},
    errors=("invalid branch name", "already exists", "no commits yet"),
)
def create_branch(
    branch: str,
    checkout: bool = False,
    startPoint: str | None = None,
) -> CreateBranchResult:
    """Create a branch at HEAD (or `startPoint`); `checkout` switches to it."""
    repo = _repo()
    name, commit = repo.create_branch(branch, checkout, startPoint or None)
    return CreateBranchResult(success=True, branch=name, checkedOut=checkout, commit=commit)

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

if TYPE_CHECKING:
    from ..engines import git as engine
else:
    engine = LazyModule("mcp_server_ide.engines.git")

ChangeType = Literal["MODIFICATION", "ADDITION", "DELETION", "MOVED", "UNTRACKED", "CONFLICT"]

PathInProject = Annotated[
    str,
    Field(description="Path relative to the workspace root (an absolute path inside the root also works)."),
]


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
    fileChanges: list[FileChange]


class CommitResult(TypedDict):
    success: bool
    commitHash: str
    branch: str | None
    files: NotRequired[list[str]]
    """The seed's list of paths (REST door); on MCP the paths are in ``fileChanges`` only."""
    fileChanges: list[FileChange]
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


def _lean_status(changes: list[VcsChange]) -> list[VcsChange]:
    return [without(c, staged=False, unstaged=False) for c in changes]


def _lean_commit(details: Any) -> Any:
    """A commit's details or a new commit's result, less what MCP need not repeat: ``files`` (the paths are
    in ``fileChanges``), a committer who is the author, ``hooksEnabled: true``."""
    return without(
        details,
        "files",
        committer=details.get("author"),
        committerDate=details.get("date"),
        hooksEnabled=True,
    )


@tool(
    "git",
    title="VCS status",
    read_only=True,
    requires=("git",),
    errors=("Git not available (not a repository)",),
)
def get_project_vcs_status() -> list[VcsChange]:
    """List the files that differ from the last commit: each `{pathInProject, type}` with `type` one of
    MODIFICATION, ADDITION, DELETION, MOVED (with `oldPathInProject`), UNTRACKED or CONFLICT (unresolved merge),
    plus `staged: true` / `unstaged: true` when the change is in the index, the working tree, or both. An
    untracked folder is listed once, as `folder/`. Ignored files are not listed. An empty list means a clean
    working tree. Never runs the repository's fsmonitor, hooks or filters."""
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
    text: Annotated[str, Field(description="Text to look for in commit messages (case-insensitive).")],
    maxResults: Annotated[int, Field(ge=1, le=1000, description="At most this many hashes.")] = 100,
) -> list[str]:
    """Search commit messages on every branch (local and remote) and tag for `text`, case-insensitively,
    and return the full hashes of the matching commits, newest first. When no message contains the exact
    phrase, commits whose message contains all of its words are returned instead. Use
    `get_commit_details` on a hash to see the commit."""
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
    maxEntries: Annotated[
        int, Field(ge=1, le=1000, description="At most this many commits (newest first).")
    ] = 30,
) -> list[HistoryEntry]:
    """The commits that changed a file, newest first, following renames: each `{hash, message, author,
    date}` (ISO 8601 author date) plus, for a file, `path` in the commits where it had another name (before
    a rename; read an old version with that path). A folder lists the commits
    that touched anything inside it; `/` the whole project's history (every commit of HEAD, as `git log`
    lists it). An empty list means the file has no commits yet."""
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
        Field(
            description="First commit: a hash, branch, tag, HEAD or HEAD~N. Omit to compare the working tree."
        ),
    ] = None,
    commit2: Annotated[str | None, Field(description="Second commit (same forms as commit1).")] = None,
    staged: Annotated[
        bool, Field(description="Compare the index (staged changes) instead of the working tree.")
    ] = False,
) -> str:
    """The unified diff of one file (or folder) as text. What is compared:
    - `commit1` and `commit2`: the file between the two commits;
    - only `commit1`: that commit against the working tree (against the index with `staged`);
    - only `commit2`: the change that commit made (against its first parent);
    - neither: the unstaged changes (working tree against the index; an untracked file shows as all added),
      or with `staged` the staged changes (index against HEAD).
    An empty string means no differences. Diffs over 1 MB keep the head and the tail with a
    `…[N bytes truncated]…` marker. External diff tools and textconv filters never run."""
    repo = _repo()
    path = repo.path(pathInProject)
    return repo.diff(path, commit1 or None, commit2 or None, staged).text


@tool(
    "git",
    title="Branch info",
    read_only=True,
    requires=("git",),
    errors=("Git not available",),
)
def get_branch_info() -> BranchInfo:
    """The current branch and every branch: `{current, branches}` (local branch names), plus
    `remoteBranches` (such as `origin/main`), the current branch's `upstream` with how many commits it is
    `ahead` of and `behind` it (null without an upstream), `detached` and `headCommit` (when HEAD is detached,
    `current` is null), `unborn` (a repository without commits) and `operation` (a merge, rebase,
    cherry-pick, revert or bisect in progress)."""
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
    commitHash: Annotated[
        str, Field(description="A commit hash (7+ characters), branch, tag, HEAD or HEAD~N.")
    ],
) -> CommitDetails:
    """One commit: `{hash, message, author, authorEmail, date, parents, fileChanges}`, `fileChanges` being each
    path it changed with its change type (ADDITION/MODIFICATION/DELETION/MOVED, renames with `oldPath`), plus
    `committer`/`committerDate` when they are not the author's. For a merge, files are those changed against
    its first parent. (The REST door adds the seed's `files`, the paths alone.)"""
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
    message: Annotated[str, Field(description="The commit message (first line: a short summary).")],
    files: Annotated[
        list[str] | None,
        Field(
            description="Files (or folders) to commit: each is staged as it is now (new, changed or deleted) and exactly "
            "these are committed; other staged changes stay staged. Omit to commit everything already staged."
        ),
    ] = None,
) -> CommitResult:
    """Create a commit on the current branch. With `files`, stages exactly those paths (new, modified or
    deleted) and commits only them; without `files`, commits what is already staged, and fails saying so when
    nothing is staged. In a trusted local workspace the repository's hooks (pre-commit, commit-msg...) run as
    `git commit` would, and a hook can refuse the commit; in an untrusted workspace no hook, filter or signing
    program runs and the person is asked first. Returns `{success, commitHash, branch, fileChanges}`
    (the committed paths with their change types), and `hooksEnabled: false` when the repository's hooks did
    not run. (The REST door adds the seed's `files` and always says `hooksEnabled`.)"""
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
    remote: Annotated[str, Field(description="A configured remote's name.")] = "origin",
    branch: Annotated[
        str | None,
        Field(
            description="The remote branch to pull. Default: the current branch's upstream, else the same name."
        ),
    ] = None,
) -> PullResult:
    """Fetch `branch` from a configured `remote` and fast-forward the current branch to it. Never merges,
    rebases, opens an editor or prompts for credentials: when the histories have diverged, or local changes
    would be overwritten, it fails with a report of what is in the way and changes nothing in the working
    tree. Only remotes configured in the repository can be used (no URLs). Returns `{success, message}`
    ("Already up to date." or "Fast-forward a..b") plus `updated`, the commits before and after, and the
    `changedFiles`. In an untrusted workspace the person is asked first and no hook runs."""
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
    branch: Annotated[
        str, Field(description="The branch to switch to (a local branch, or a remote one's name).")
    ],
) -> SwitchResult:
    """Check out another branch. Local changes that do not collide come along (`carriedChanges`); when
    they would be overwritten, it refuses, naming the files, and changes nothing. A branch that exists only
    on one remote (`origin/x`) is created locally, tracking it (`createdFrom`). Returns `{success, branch}`
    plus `previousBranch`."""
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
    branch: Annotated[str, Field(description="The new branch's name, such as 'feature/login'.")],
    checkout: Annotated[bool, Field(description="Switch to the new branch after creating it.")] = False,
    startPoint: Annotated[
        str | None,
        Field(description="Commit, branch or tag the branch starts at. Default: the current commit."),
    ] = None,
) -> CreateBranchResult:
    """Create a branch at the current commit (or `startPoint`), and switch to it with `checkout`. Local
    changes come along when switching. Returns `{success, branch, checkedOut}` plus the `commit` it points at."""
    repo = _repo()
    name, commit = repo.create_branch(branch, checkout, startPoint or None)
    return CreateBranchResult(success=True, branch=name, checkedOut=checkout, commit=commit)

"""Branches: what HEAD is on (with its upstream, ahead/behind, any operation in progress), switching
to a local or remote branch (planned first, so the tool can say which local changes come along),
and creating one.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..failures import ToolFailure
from .args import show
from .messages import listed_files
from .process import Completed
from .refs import short_ref
from .status import Status


@dataclass
class BranchInfo:
    current: str | None
    head: str | None
    detached: bool
    unborn: bool
    branches: list[str]
    remote_branches: list[str]
    upstream: str | None
    ahead: int | None
    behind: int | None
    upstream_gone: bool
    operation: str | None


@dataclass
class SwitchPlan:
    branch: str
    current: str | None
    exists: bool
    remote_match: str | None
    local_changes: list[str]


@dataclass
class SwitchResult:
    branch: str
    previous: str | None
    created_from: str | None
    carried: list[str]


class Branches(Status):
    """The repository's branches."""

    def branch_info(self) -> BranchInfo:
        """The current branch, every local and remote-tracking branch, the upstream with ahead/behind
        counts, and any operation in progress."""
        branch, head = self.head()
        refs = self.git(
            "for-each-ref",
            "--format=%(refname)%00%(upstream)%00%(symref)",
            "refs/heads",
            "refs/remotes",
            what="list branches",
        ).out.splitlines()
        branches: list[str] = []
        remotes: list[str] = []
        upstream_ref: str | None = None
        for line in refs:
            refname, up, symref = [*line.split("\0"), "", ""][:3]
            if symref:
                continue  # refs/remotes/origin/HEAD
            if refname.startswith("refs/heads/"):
                name = refname[len("refs/heads/") :]
                branches.append(name)
                if name == branch:
                    upstream_ref = up or None
            elif refname.startswith("refs/remotes/"):
                remotes.append(refname[len("refs/remotes/") :])
        ahead = behind = None
        gone = False
        upstream = None
        if upstream_ref:
            upstream = short_ref(upstream_ref)
            counts = self.git(
                "rev-list", "--left-right", "--count", f"HEAD...{upstream_ref}", "--", ok=(0, 128)
            )
            if counts.returncode == 0:
                a, b = counts.out.split()
                ahead, behind = int(a), int(b)
            else:
                gone = True
        return BranchInfo(
            current=branch,
            head=head,
            detached=branch is None,
            unborn=head is None and branch is not None,
            branches=branches,
            remote_branches=remotes,
            upstream=upstream,
            ahead=ahead,
            behind=behind,
            upstream_gone=gone,
            operation=self.operation(),
        )

    def switch_plan(self, branch: str) -> SwitchPlan:
        """What switching to ``branch`` would do (a local branch, or a new one tracking the one remote
        branch of that name) and the local changes that would come along; nothing is changed."""
        self.check_branch(branch)
        current = self.head()[0]
        exists = self.branch_exists(branch)
        remote_match = None
        if not exists:
            matches = [
                r
                for r in self.git("for-each-ref", "--format=%(refname)", "refs/remotes").out.split()
                if r.split("/", 3)[-1] == branch
            ]
            if len(matches) == 1:
                remote_match = short_ref(matches[0])
            elif len(matches) > 1:
                raise ToolFailure(
                    f"invalid: {show(branch)} exists on several remotes ({', '.join(short_ref(m) for m in matches)}); "
                    "create a local branch from one with create_branch(startPoint=...)"
                )
            else:
                raise ToolFailure(
                    f"not found: there is no branch {show(branch)} (get_branch_info lists the branches; "
                    "create_branch makes a new one)",
                    kind="not_found",
                )
        changes = [e.path for e in self.status() if e.type != "UNTRACKED"]
        return SwitchPlan(branch, current, exists, remote_match, changes)

    def switch(self, plan: SwitchPlan) -> SwitchResult:
        """Carry out a :meth:`switch_plan`; git refuses (and nothing changes) when local changes would be overwritten."""
        with self._lock:
            if plan.current == plan.branch:
                return SwitchResult(plan.branch, plan.current, None, plan.local_changes)
            op = self.operation()
            if op is not None:
                raise ToolFailure(
                    f"conflict: a {op} is in progress; finish or abort it before switching branches. Nothing was changed",
                    kind="conflict",
                )
            args = ["switch", "--no-progress"]
            if plan.exists:
                args += ["--no-guess", "--end-of-options", plan.branch]
            else:
                args += ["--track", "-c", plan.branch, "--end-of-options", str(plan.remote_match)]
            result = self.git(*args, mode="write", ok=(0, 1, 128), what="switch branches")
            if result.returncode != 0:
                raise self._checkout_failure(result, f"switch to {plan.branch!r}")
            return SwitchResult(plan.branch, plan.current, plan.remote_match, plan.local_changes)

    def _checkout_failure(self, result: Completed, what: str) -> ToolFailure:
        """A failed switch or fast-forward in plain words: which local files were in the way, or unresolved conflicts."""
        text = result.err.strip()
        files = listed_files(text)
        if "would be overwritten" in text or "untracked working tree files would be" in text:
            kind = "untracked files" if "untracked working tree files" in text else "local changes to"
            return ToolFailure(
                f"conflict: cannot {what}: your {kind} {', '.join(files[:20]) or 'some files'} would be overwritten. "
                "Nothing was changed. Commit them (commit_changes), or stash or discard them, then try again.",
                kind="conflict",
            )
        if "resolve your current index" in text or "unmerged" in text.lower():
            return ToolFailure(
                f"conflict: cannot {what}: the repository has unresolved merge conflicts. Nothing was changed.",
                kind="conflict",
            )
        return self._failure(result, what)

    def create_branch(self, branch: str, checkout: bool, start: str | None) -> tuple[str, str | None]:
        """(name, commit it points at) of a new branch at ``start`` (default HEAD), switched to when ``checkout``."""
        with self._lock:
            self.check_branch(branch)
            if self.branch_exists(branch):
                raise ToolFailure(
                    f"conflict: branch {show(branch)} already exists (switch_branch switches to it)",
                    kind="conflict",
                )
            start_hash = self.resolve_commit(start, what="startPoint") if start else self.head()[1]
            if start_hash is None and not checkout:
                raise ToolFailure(
                    "conflict: the repository has no commits yet, so a branch has nothing to point at; commit first, "
                    "or use checkout=true to give the first branch this name",
                    kind="conflict",
                )
            if checkout:
                args = ["switch", "--no-progress", "--no-guess"]
                args += ["-c", branch, "--end-of-options", *([start] if start else [])]
            else:
                args = ["branch", "--end-of-options", branch, *([start] if start else [])]
            result = self.git(*args, mode="write", ok=(0, 1, 128), what="create the branch")
            if result.returncode != 0:
                raise self._checkout_failure(result, f"create and switch to {branch!r}")
            return branch, start_hash

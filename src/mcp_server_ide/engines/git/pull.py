"""Pull: fetch one branch from a configured remote and fast-forward the current branch to it (never
a merge or a rebase). In an untrusted workspace a pull refuses when the repository's own
configuration would make git run a program during the fetch (:data:`NETWORK_DANGER`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..failures import ToolFailure
from .args import check_remote, show
from .branches import Branches
from .messages import tail_lines
from .process import Completed
from .status import StatusEntry, parse_name_status

# Keys of the repository's own configuration that make git run a program (or touch files
# outside the workspace) while fetching. In an untrusted workspace a pull refuses when they are set.
NETWORK_DANGER = (
    re.compile(r"core\.(sshcommand|gitproxy|askpass|alternaterefscommand)"),
    re.compile(r"remote\..+\.(uploadpack|receivepack|vcs)"),
    re.compile(r"credential(\..+)?\.helper"),
    re.compile(r"http(\..+)?\.(cookiefile|savecookies)"),
    re.compile(r"gpg(\..+)?\.program"),
)


@dataclass
class PullResult:
    remote: str
    branch: str
    updated: bool
    before: str | None
    after: str
    message: str
    files: list[StatusEntry]


class Pulls(Branches):
    """Remotes and pulling from them."""

    def remotes(self) -> list[str]:
        """The names of the configured remotes."""
        return self.git("remote", what="list remotes").out.split()

    def pull(self, remote: str, branch: str | None) -> PullResult:
        """Fetch ``branch`` from the configured ``remote`` and fast-forward the current branch to it."""
        check_remote(remote)
        with self._lock:
            op = self.operation()
            if op is not None:
                raise ToolFailure(
                    f"conflict: a {op} is in progress; finish or abort it before pulling", kind="conflict"
                )
            current, before = self.head()
            if current is None:
                raise ToolFailure(
                    "conflict: HEAD is detached (not on a branch); switch to a branch before pulling",
                    kind="conflict",
                )
            configured = self.remotes()
            if remote not in configured:
                names = ", ".join(configured) or "none"
                raise ToolFailure(
                    f"not found: {show(remote)} is not a configured remote (configured: {names}); pull only "
                    "uses the repository's own remotes",
                    kind="not_found",
                )
            if branch is None:
                branch = self._upstream_branch(current, remote) or current
            else:
                self.check_branch(branch)
            if not self.trusted:
                risky = self.local_config(NETWORK_DANGER)
                if risky:
                    raise ToolFailure(
                        "refused: this untrusted workspace's repository configuration sets "
                        + ", ".join(risky)
                        + ", which would make git run a program or touch files outside the workspace during a pull "
                        "(rule: repository configuration is untrusted input). Review .git/config and remove them, "
                        "or open the workspace as trusted.",
                        kind="refused",
                    )
            fetch = self.git(
                "fetch", "--no-recurse-submodules", "--quiet", "--end-of-options",
                remote, f"refs/heads/{branch}", mode="network", ok=(0, 1, 128), what="fetch",
            )  # fmt: skip
            if fetch.returncode != 0:
                raise self._fetch_failure(fetch, remote, branch)
            fetched = self.git(
                "rev-parse", "--verify", "--quiet", "FETCH_HEAD^{commit}", what="read FETCH_HEAD"
            ).out.strip()
            if before is not None and (
                fetched == before
                or self.git("merge-base", "--is-ancestor", fetched, before, ok=(0, 1)).returncode == 0
            ):
                return PullResult(remote, branch, False, before, before, "Already up to date.", [])
            if (
                before is not None
                and self.git("merge-base", "--is-ancestor", before, fetched, ok=(0, 1)).returncode != 0
            ):
                counts = self.git(
                    "rev-list", "--left-right", "--count", f"{before}...{fetched}", "--"
                ).out.split()
                raise ToolFailure(
                    f"conflict: not a fast-forward: {current!r} has {counts[0]} commit(s) that {remote}/{branch} does "
                    f"not have, and {remote}/{branch} has {counts[1]} new commit(s). Nothing in the working tree was "
                    f"changed. Integrate by hand (merge or rebase onto {remote}/{branch}), then pull again.",
                    kind="conflict",
                )
            merge = self.git(
                "merge", "--ff-only", "--no-stat", "--no-edit", "--no-verify", "--end-of-options", fetched,
                mode="write", ok=(0, 1, 128), what="fast-forward",
            )  # fmt: skip
            if merge.returncode != 0:
                raise self._checkout_failure(merge, f"fast-forward {current!r} to {remote}/{branch}")
            after = self.head()[1] or fetched
            files = self._changed(before, after) if before else []
            short = f"{before[:7]}..{after[:7]}" if before else after[:7]
            return PullResult(remote, branch, True, before, after, f"Fast-forward {short}", files)

    def _upstream_branch(self, current: str, remote: str) -> str | None:
        """The branch of ``remote`` that ``current`` tracks, or None when it tracks none there."""
        result = self.git(
            "for-each-ref", "--format=%(upstream:remotename)%00%(upstream)", f"refs/heads/{current}", ok=(0,)
        ).out.strip()
        name, _, up = result.partition("\0")
        if name == remote and up:
            merge = self.git("config", "--get", f"branch.{current}.merge", ok=(0, 1)).out.strip()
            if merge.startswith("refs/heads/"):
                return merge[len("refs/heads/") :]
        return None

    def _fetch_failure(self, result: Completed, remote: str, branch: str) -> ToolFailure:
        """A failed fetch in plain words: no such branch, credentials needed, a transport not allowed."""
        text = result.err.strip()
        if "couldn't find remote ref" in text:
            return ToolFailure(
                f"not found: the remote {remote!r} has no branch {branch!r} (get_branch_info lists the remote "
                "branches it knows)",
                kind="not_found",
            )
        if (
            "terminal prompts disabled" in text
            or "Authentication failed" in text
            or "could not read Username" in text
        ):
            return ToolFailure(
                f"unavailable: {remote!r} needs credentials and this server never prompts for them. Configure a "
                "credential helper or an SSH key, then try again",
                kind="unavailable",
            )
        if "transport" in text and "not allowed" in text:
            return ToolFailure(
                f"refused: the URL of {remote!r} uses a transport that is not allowed here ({self.redact(tail_lines(text))})",
                kind="refused",
            )
        return ToolFailure(
            f"could not fetch from {remote!r}: {self.redact(tail_lines(text))}", kind="unavailable"
        )

    def _changed(self, before: str, after: str) -> list[StatusEntry]:
        """The files changed between two commits."""
        out = self.git(
            "diff", "--no-ext-diff", "--no-textconv", "--name-status", "-z", "-M", before, after, "--"
        ).stdout
        return parse_name_status(out.split(b"\0"))

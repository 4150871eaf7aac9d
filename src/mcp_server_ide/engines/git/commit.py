"""Commits: what is staged, or exactly the given files (staged first; other staged changes stay
staged). In a trusted workspace the user's hooks run (``--no-verify`` otherwise); a failure says why
in git's words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..failures import ToolFailure
from .args import show
from .history import History
from .messages import tail_lines
from .status import Status, StatusEntry

MAX_MESSAGE = 64 * 1024
MAX_FILES = 1000  # paths one commit_changes call may name (they travel as arguments)


@dataclass
class CommitResult:
    hash: str
    branch: str | None
    files: list[StatusEntry]
    hooks_enabled: bool


class Commits(Status, History):
    """Making commits."""

    def commit(self, message: str, paths: list[str] | None) -> CommitResult:
        """Commit what is staged, or exactly ``paths`` (staged first; other staged changes stay staged)."""
        if not message.strip():
            raise ToolFailure("invalid message: a commit message cannot be empty")
        if "\x00" in message:
            raise ToolFailure("invalid message: it contains a NUL byte")
        if len(message.encode()) > MAX_MESSAGE:
            raise ToolFailure(f"invalid message: longer than {MAX_MESSAGE // 1024} KB")
        if paths and len(paths) > MAX_FILES:
            raise ToolFailure(
                f"invalid files: {len(paths)} paths; at most {MAX_FILES} per commit (name their folders instead)"
            )
        with self._lock:
            staged, other, conflicts = self.staged_summary()
            if conflicts:
                raise ToolFailure(
                    "conflict: these files have unresolved merge conflicts: "
                    + ", ".join(e.path for e in conflicts[:20])
                    + " (resolve them, then stage the result; or abort the merge with `git merge --abort`)",
                    kind="conflict",
                )
            before = self.head()[1]
            args = ["commit", "--no-edit", "--quiet", f"--message={message}", "--cleanup=whitespace"]
            if not self.trusted:
                args.append("--no-verify")
            if paths:
                if self.operation() == "merge":
                    raise ToolFailure(
                        "conflict: a merge is in progress; git commits a merge whole. Commit without `files` "
                        "to conclude it (everything staged is committed)",
                        kind="conflict",
                    )
                self._stage(paths)
                args += ["--only", "--", *paths]
            elif not staged:
                hint = (
                    f" ({len(other)} changed or untracked file(s) are not staged: pass them in `files` to commit them)"
                    if other
                    else " (the working tree is clean too)"
                )
                raise ToolFailure(f"nothing to commit: nothing is staged{hint}", kind="conflict")
            result = self.git(*args, mode="write", ok=(0, 1, 128), what="commit")
            after = self.head()[1]
            if result.returncode != 0 or after == before:
                text = (result.err + "\n" + result.out).strip()
                if "nothing to commit" in text or "no changes added" in text or "nothing added" in text:
                    raise ToolFailure(
                        "nothing to commit: the given files have no changes against HEAD", kind="conflict"
                    )
                if "Please tell me who you are" in text or "empty ident" in text:
                    raise ToolFailure(
                        "refused: git does not know who the author is (set user.name and user.email with "
                        "`git config user.name ...` and `git config user.email ...`)",
                        kind="refused",
                    )
                hooks = (
                    " (a hook refused it: its output is above)"
                    if self.trusted and (self.gitdir / "hooks").is_dir()
                    else ""
                )
                raise ToolFailure(
                    f"commit failed{hooks}: {self.redact(tail_lines(text)) or 'git gave no reason'}",
                    kind="conflict",
                )
            assert after is not None
            info = self.commit_details(after)
            return CommitResult(
                hash=after, branch=self.head()[0], files=info.changes, hooks_enabled=self.trusted
            )

    def _stage(self, paths: list[str]) -> None:
        """``git add --all`` of ``paths`` (new, changed and deleted files); a clear failure when one is unknown or ignored."""
        result = self.git("add", "--all", "--", *paths, mode="write", ok=(0, 1, 128), what="stage the files")
        if result.returncode == 0:
            return
        text = result.err.strip()
        m = re.search(r"pathspec '(.+?)' did not match", text)
        if m:
            raise ToolFailure(
                f"not found: {show(m.group(1))} is neither in the working tree nor known to git; nothing was committed",
                kind="not_found",
            )
        if "ignored by one of your .gitignore" in text:
            raise ToolFailure(
                f"refused: a file is ignored by .gitignore; nothing was committed ({self.redact(tail_lines(text))})",
                kind="refused",
            )
        raise self._failure(result, "stage the files")

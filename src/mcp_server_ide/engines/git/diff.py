"""Diffs of one path: between two commits, a commit and the working tree or index, the change one
commit made, or the working tree's own (an untracked file shows as all added). External diff tools
and textconv filters never run; a diff over :data:`MAX_DIFF` keeps its head and tail.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..failures import ToolFailure
from .args import show
from .refs import Refs

MAX_DIFF = 1024 * 1024  # diffs keep the first and the last half of this
_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git hash-object -t tree /dev/null (sha1)


@dataclass
class Diff:
    text: str
    truncated: bool


class Diffs(Refs):
    """Diffs of the repository's files."""

    def diff(self, path: str, commit1: str | None, commit2: str | None, staged: bool) -> Diff:
        """The diff of one path; see the tool for what each combination compares."""
        args = ["diff", "--no-ext-diff", "--no-textconv", "--no-color", "--src-prefix=a/", "--dst-prefix=b/"]
        untracked_ok = False
        revs: list[str]
        if commit1 and commit2:
            if staged:
                raise ToolFailure(
                    "invalid: 'staged' compares with the index; it cannot be combined with commit2"
                )
            revs = [
                self.resolve_commit(commit1, what="commit1"),
                self.resolve_commit(commit2, what="commit2"),
            ]
        elif commit2:
            if staged:
                raise ToolFailure(
                    "invalid: 'staged' compares with the index; it cannot be combined with commit2"
                )
            c2 = self.resolve_commit(commit2, what="commit2")
            parents = self.git("rev-list", "--parents", "-n", "1", "--end-of-options", c2).out.split()[1:]
            revs = [parents[0], c2] if parents else [_EMPTY_TREE, c2]
        elif commit1:
            revs = [self.resolve_commit(commit1, what="commit1")]
            if staged:
                args.append("--cached")
        else:
            revs = []
            if staged:
                args.append("--cached")
                if self.head()[1] is None:
                    revs = [_EMPTY_TREE]
            else:
                untracked_ok = True
        result = self.git(
            *args,
            "--end-of-options",
            *[r for r in revs if r],
            "--",
            path,
            max_output=MAX_DIFF,
            partial_ok=True,
            what="diff",
        )
        text = result.out
        if not text and untracked_ok and self._untracked(path):
            result = self.git(
                "diff", "--no-index", "--no-ext-diff", "--no-textconv", "--no-color", "--", os.devnull, path,
                ok=(0, 1), max_output=MAX_DIFF, partial_ok=True, what="diff",
            )  # fmt: skip
            text = result.out
        if not text and not (self.root / path).exists() and not self._known(path, revs):
            raise ToolFailure(
                f"not found: {show(path)} is neither in the working tree nor in the compared commits",
                kind="not_found",
            )
        return Diff(text=text, truncated=result.truncated)

    def _untracked(self, path: str) -> bool:
        """Whether ``path`` is an untracked file that .gitignore does not hide."""
        if not (self.root / path).is_file():
            return False
        out = self.git("ls-files", "-z", "--others", "--exclude-standard", "--", path).out
        return bool(out.strip("\0"))

    def _known(self, path: str, revs: list[str]) -> bool:
        """Whether git knows ``path`` (in the index or in one of ``revs``, else HEAD)."""
        if self.git("ls-files", "-z", "--", path).out:
            return True
        for rev in [r for r in revs if r and r != _EMPTY_TREE] or ["HEAD"]:
            if self.git("cat-file", "-e", f"{rev}:{path}", ok=(0, 1, 128)).returncode == 0:
                return True
            if self.git("ls-tree", "--name-only", "--end-of-options", rev, "--", path, ok=(0, 128)).out:
                return True
        return False

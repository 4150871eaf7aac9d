"""Refs and names: HEAD (read from the ref files, no process, when that is simple), commits resolved
from revisions, branch names checked by ``git check-ref-format``, the operation in progress, and a
caller's path as git sees it.
"""

from __future__ import annotations

import contextlib
import re
from typing import Literal, overload

from ...workspace import Workspace
from .. import sandbox
from ..failures import ToolFailure
from .args import MAX_REVISION, check_revision, check_value, show
from .core import RepoCore
from .discovery import stat_key
from .messages import no_commits

_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def short_ref(ref: str) -> str:
    """``refs/heads/main`` -> ``main``, ``refs/remotes/origin/x`` -> ``origin/x``, ``refs/tags/v1`` -> ``v1``."""
    for prefix in ("refs/heads/", "refs/remotes/", "refs/tags/"):
        if ref.startswith(prefix):
            return ref[len(prefix) :]
    return ref


class Refs(RepoCore):
    """The small questions every operation asks about the repository's refs and paths."""

    def __init__(self, ws: Workspace) -> None:
        super().__init__(ws)
        self._packed: tuple[object, dict[str, str]] = (None, {})

    def head(self) -> tuple[str | None, str | None]:
        """(branch name or None when detached, commit hash or None when unborn), from HEAD itself."""
        try:
            text = (self.gitdir / "HEAD").read_text(errors="replace").strip()
        except OSError:
            text = ""
        if text.startswith("ref: "):
            ref = text[5:].strip()
            branch = ref[len("refs/heads/") :] if ref.startswith("refs/heads/") else ref
            commit = self.head_commit() or self.resolve_commit("HEAD", missing_ok=True)
            return branch, commit
        return None, (text or None)

    def head_commit(self) -> str | None:
        """HEAD's commit read straight from the ref files (no process), or None when that is not simple
        (unborn branch, symbolic ref chains, other ref storage): then ask git."""
        try:
            text = (self.gitdir / "HEAD").read_text(errors="replace").strip()
        except OSError:
            return None
        if _OBJECT_ID.fullmatch(text):
            return text
        if not text.startswith("ref: refs/heads/") or self._commondir is None:
            return None
        ref = text[5:].strip()
        try:
            value: str | None = (self._commondir / ref).read_text(errors="replace").strip()
        except FileNotFoundError:
            value = self._packed_refs().get(ref)
        except OSError:
            return None
        return value if value and _OBJECT_ID.fullmatch(value) else None

    def _packed_refs(self) -> dict[str, str]:
        """``packed-refs`` as {ref: object id}, read again when the file changes."""
        assert self._commondir is not None
        path = self._commondir / "packed-refs"
        stamp = stat_key(str(path))
        if self._packed[0] != stamp:
            refs: dict[str, str] = {}
            with contextlib.suppress(OSError):
                for line in path.read_text(errors="replace").splitlines():
                    oid, _, name = line.partition(" ")
                    if name and _OBJECT_ID.fullmatch(oid):
                        refs[name] = oid
            self._packed = (stamp, refs)
        return self._packed[1]

    @overload
    def resolve_commit(
        self, revision: str, *, missing_ok: Literal[False] = False, what: str = ...
    ) -> str: ...
    @overload
    def resolve_commit(self, revision: str, *, missing_ok: bool, what: str = ...) -> str | None: ...
    def resolve_commit(
        self, revision: str, *, missing_ok: bool = False, what: str = "revision"
    ) -> str | None:
        """The full hash of a commit-ish; a clear not-found failure (or None with ``missing_ok``)."""
        if revision != "HEAD":
            check_revision(revision, what)
        result = self.git(
            "rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}", ok=(0, 1, 128)
        )
        if result.returncode == 0:
            return result.out.strip()
        if missing_ok:
            return None
        if revision == "HEAD":
            raise no_commits()
        raise ToolFailure(
            f"not found: {what} {show(revision)} is not a commit in this repository "
            "(give a commit hash, a branch or tag name, or HEAD~N)",
            kind="not_found",
        )

    def check_branch(self, name: str) -> str:
        """A branch name that ``git check-ref-format --branch`` accepts unchanged."""
        check_value(name, "branch name")
        if name.startswith("+") or "@{" in name or name in ("@", "HEAD") or len(name) > MAX_REVISION:
            raise ToolFailure(
                f"invalid branch name {show(name)} (rule: a plain branch name such as 'feature/login')"
            )
        result = self.git("check-ref-format", "--branch", name, ok=(0, 1, 128))
        if result.returncode != 0 or result.out.strip() != name:
            raise ToolFailure(
                f"invalid branch name {show(name)}: git check-ref-format refuses it (no spaces, '..', '~', '^', ':', "
                "'?', '*', '[', '\\\\', no trailing '/' or '.lock'); use a name such as 'feature/login'"
            )
        return name

    def branch_exists(self, name: str) -> bool:
        """Whether ``refs/heads/<name>`` exists."""
        return self.git("show-ref", "--verify", "--quiet", f"refs/heads/{name}", ok=(0, 1)).returncode == 0

    def operation(self) -> str | None:
        """The operation in progress (merge, rebase...), from the marker files git leaves."""
        d = self.gitdir
        if (d / "rebase-merge").is_dir() or (d / "rebase-apply").is_dir():
            return "rebase"
        for marker, name in (
            ("MERGE_HEAD", "merge"),
            ("CHERRY_PICK_HEAD", "cherry-pick"),
            ("REVERT_HEAD", "revert"),
            ("BISECT_LOG", "bisect"),
        ):
            if (d / marker).exists():
                return name
        return None

    def path(self, user_path: str, *, for_commit: bool = False) -> str:
        """A caller's path as git sees it: inside the workspace's primary root, relative to it, '/'-separated.

        The sandbox checks it (symlinks resolved, nothing outside the root). Git gets the path with its
        folders resolved but its last component kept, so a tracked symlink is still itself.
        """
        resolved = sandbox.resolve(self.ws, user_path)
        if resolved.root != self.root:
            raise ToolFailure(
                f"refused: {show(user_path)} is in another root of a multi-root workspace; git tools work on the "
                "repository of the first root",
                kind="refused",
            )
        if not resolved.lexical:
            return "."
        parent, _, name = resolved.lexical.rpartition("/")
        parent_rel = sandbox.resolve(self.ws, parent).rel if parent else ""
        rel = f"{parent_rel}/{name}" if parent_rel else name
        if for_commit and sandbox.protected_match(rel, ()) == ".git":
            raise ToolFailure(
                f"refused: {show(user_path)} is inside .git (rule: git's own folder is never committed)",
                kind="refused",
            )
        return rel

"""History: a path's commits (following a file's renames; kept in a per-repository cache keyed by
HEAD's commit), the search of commit messages, and one commit's details with its changed files.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cached_property

from ..failures import ToolFailure
from .args import check_revision, show
from .discovery import stat_key
from .messages import no_commits
from .refs import Refs
from .status import StatusEntry, parse_name_status

HISTORY_CACHE = 256  # file histories kept per repository (keyed by HEAD's commit, path, config)

_LOG_FORMAT = "%H%x00%P%x00%an%x00%ae%x00%aI%x00%B"
_SHOW_FORMAT = "%H%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%cI%x00%B%x00"


@dataclass
class CommitInfo:
    hash: str
    parents: list[str]
    author: str
    author_email: str
    date: str
    message: str
    committer: str = ""
    committer_date: str = ""
    changes: list[StatusEntry] = field(default_factory=list)
    path: str | None = None
    """In a followed file's history: the file's path in this commit (its older name before a rename)."""


class HistoryCache:
    """Histories already read, least recently used first; at most :data:`HISTORY_CACHE` of them."""

    def __init__(self) -> None:
        self._entries: OrderedDict[tuple[object, ...], list[CommitInfo]] = OrderedDict()
        self._lock: threading.Lock = threading.Lock()

    def get(self, key: tuple[object, ...]) -> list[CommitInfo] | None:
        """A copy of the history kept for ``key``, or None."""
        with self._lock:
            hit = self._entries.get(key)
            if hit is None:
                return None
            self._entries.move_to_end(key)
            return list(hit)

    def put(self, key: tuple[object, ...], commits: list[CommitInfo]) -> None:
        with self._lock:
            self._entries[key] = commits
            while len(self._entries) > HISTORY_CACHE:
                self._entries.popitem(last=False)


class History(Refs):
    """The repository's history."""

    @cached_property
    def _history(self) -> HistoryCache:
        return HistoryCache()

    def file_history(self, path: str, max_entries: int) -> list[CommitInfo]:
        """Commits that changed ``path``, newest first, following renames of a file; for ``.`` (the
        whole repository) every commit of HEAD's history, as ``git log`` lists it.

        The answer depends only on the commit HEAD points at (history is immutable), the path and the
        configuration, so it is kept, keyed by those, for repeated questions; a new commit, a branch
        switch or a config change gives a new key.
        """
        follow = path != "." and ((self.root / path).is_file() or not (self.root / path).exists())
        head = self.head_commit()
        key: tuple[object, ...] | None = None
        if head is not None:
            key = (
                head, path, max_entries, follow, self._snapshot().stamp,
                stat_key(str(self.gitdir / "shallow")), stat_key(str(self.commondir / "info" / "grafts")),
            )  # fmt: skip
            hit = self._history.get(key)
            if hit is not None:
                return hit
        args = ["log", f"--max-count={max_entries}", "-z", "--no-color"]
        if follow:  # a record mark before each commit, and the file's name in it after the fields
            args += ["--follow", f"--format=%x1e{_LOG_FORMAT}", "--name-only", "--relative"]
        else:
            args.append(f"--format={_LOG_FORMAT}")
        # The whole repository takes no pathspec: `-- .` makes git compare every commit's tree with its
        # parent's to drop those that change nothing (~1 ms a call); without it the answer is `git log`'s.
        pathspec = () if path == "." else (path,)
        result = self.git(*args, "--", *pathspec, ok=(0, 128), what="read the history")
        if result.returncode == 128:
            if "does not have any commits" in result.err or "bad default revision" in result.err:
                return []
            raise self._failure(result, "read the history")
        commits = parse_followed_log(result.stdout) if follow else parse_log(result.stdout)
        if key is not None:
            self._history.put(key, commits)
        return list(commits)

    def find_commits(self, text: str, limit: int) -> list[str]:
        """Hashes of commits whose message contains ``text`` (case-insensitive), newest first, on every
        local branch, remote branch and tag; when the exact phrase is not found, commits containing all its words."""
        if self.head()[1] is None and not self._any_ref():
            return []
        refs = ["--branches", "--remotes", "--tags"]
        if self.head()[1] is not None:
            refs.insert(0, "HEAD")
        base = [
            "log",
            f"--max-count={limit}",
            "--format=%H",
            "--fixed-strings",
            "--regexp-ignore-case",
            *refs,
        ]
        found = self.git(*base, f"--grep={text}", "--", what="search the history").out.split()
        words = text.split()
        if not found and len(words) > 1:
            greps = [f"--grep={w}" for w in words]
            found = self.git(*base, "--all-match", *greps, "--", what="search the history").out.split()
        return found

    def _any_ref(self) -> bool:
        """Whether the repository has any ref at all (an unborn HEAD may still have other branches or tags)."""
        return bool(self.git("for-each-ref", "--count=1", "--format=%(refname)").out.strip())

    def commit_details(self, revision: str) -> CommitInfo:
        """One commit (a hash, branch, tag or ``HEAD~N``) with its files changed against its first parent."""
        if revision != "HEAD":
            check_revision(revision, "commitHash")
        result = self.git(
            "show", "-z", "--no-color", "--no-ext-diff", "--no-textconv", "--name-status", "-M",
            "--diff-merges=first-parent", f"--format={_SHOW_FORMAT}", "--end-of-options", f"{revision}^{{commit}}", "--",
            ok=(0, 128),
        )  # fmt: skip
        if result.returncode != 0:
            if revision == "HEAD" and self.head()[1] is None:
                raise no_commits()
            if "ambiguous" in result.err:
                raise ToolFailure(
                    f"invalid commitHash {show(revision)}: it matches several commits; give more characters"
                )
            raise ToolFailure(
                f"not found: commit {show(revision)} is not in this repository "
                "(find_commit_by_message or get_file_history give hashes)",
                kind="not_found",
            )
        return parse_show(result.stdout)


def parse_log(data: bytes) -> list[CommitInfo]:
    """``git log -z --format=_LOG_FORMAT``: six NUL-separated fields per commit, commits NUL-separated."""
    tokens = data.decode("utf-8", "replace").split("\0")
    commits: list[CommitInfo] = []
    for i in range(0, len(tokens) - 5, 6):
        h, parents, name, email, date, message = tokens[i : i + 6]
        h = h.lstrip("\n")
        if not h:
            continue
        commits.append(CommitInfo(h, parents.split(), name, email, date, message.strip()))
    return commits


def parse_followed_log(data: bytes) -> list[CommitInfo]:
    """``git log --follow -z --format=%x1e_LOG_FORMAT --name-only``: per commit a record mark, the six
    fields, then the file's name in that commit (NUL-terminated, after a newline)."""
    commits: list[CommitInfo] = []
    for record in data.split(b"\x1e"):
        tokens = record.split(b"\0")
        if len(tokens) < 6 or not tokens[0].strip():
            continue
        h, parents, name, email, date, message = (t.decode("utf-8", "replace") for t in tokens[:6])
        names = [t.lstrip(b"\n") for t in tokens[6:] if t.strip(b"\n")]
        path = os.fsdecode(names[0]) if names else None
        commits.append(CommitInfo(h.strip(), parents.split(), name, email, date, message.strip(), path=path))
    return commits


def parse_show(data: bytes) -> CommitInfo:
    """``git show -z --format=_SHOW_FORMAT --name-status``: eight fields, then the name-status list."""
    tokens = data.split(b"\0")
    fields = [t.decode("utf-8", "replace") for t in tokens[:8]]
    h, parents, name, email, date, cname, cdate, message = fields
    rest = tokens[8:]
    if rest and rest[0] == b"":
        rest = rest[1:]
    if rest and rest[0].startswith(b"\n"):
        rest[0] = rest[0][1:]
    info = CommitInfo(h.strip(), parents.split(), name, email, date, message.strip(), cname, cdate)
    info.changes = parse_name_status(rest)
    return info

"""The git engine: every git operation of the server runs here, through the real ``git`` CLI.

Rules (SECURITY.md §3), enforced in this module and nowhere else:

- **Arguments are data.** Every value a caller gives is checked before any process starts: no
  value may start with ``-``; branch names pass ``git check-ref-format --branch`` and must come
  back unchanged (no ``@{-1}`` expansion); revisions go after ``--end-of-options``; paths go after
  ``--``, through :func:`sandbox.resolve`, as literal pathspecs (``GIT_LITERAL_PATHSPECS=1``).
- **The repository is the workspace's.** ``GIT_DIR`` and ``GIT_WORK_TREE`` are set to the
  workspace root (which overrides ``core.worktree`` and any inherited ``GIT_*`` variable); a
  repository above the root is never used, and no tool takes a repository path.
- **Repository configuration is untrusted input.** Read operations, and every operation in an
  untrusted or hosted workspace, run *contained*: ``core.fsmonitor=false``, hooks pointed at
  ``/dev/null``, every configured clean/smudge/process filter emptied, ``--no-ext-diff
  --no-textconv`` on everything that diffs, no pager. The overrides travel in
  ``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n`` (no ``key=value`` parsing, so a
  subsection such as ``filter "a=b"`` cannot dodge them). In a trusted local workspace the
  operations that change the repository (commit, switch, pull) behave as ``git`` itself would:
  the user's hooks and filters run.
- **Never a prompt.** ``GIT_TERMINAL_PROMPT=0``, an empty ``GIT_ASKPASS`` (so ``core.askPass`` is
  not used either), ``SSH_ASKPASS_REQUIRE=never``, ``GIT_EDITOR=true``, stdin closed, and a new
  session (no controlling terminal for ssh to open). Every call has a timeout; on timeout the
  whole process group gets TERM, then KILL.
- **System configuration is kept** (``GIT_CONFIG_NOSYSTEM`` is not set): ``/etc/gitconfig`` is the
  machine owner's (``safe.directory``, proxies, CA bundles), as trusted as the user's
  ``~/.gitconfig``; only the repository's own configuration is hostile, and it is the one
  contained above.

Every git process starts through :func:`spawn`, the one seam to the shared process engine
(``engines.processes``: own process group, timeout, head + tail capture, whole-tree kill).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..workspace import Workspace
from . import processes, sandbox
from .failures import ToolFailure

Mode = Literal["read", "write", "network"]

MIN_VERSION = (2, 31)  # GIT_CONFIG_COUNT (2.31), --diff-merges (2.31), --end-of-options (2.24), switch (2.23)
READ_TIMEOUT = 30.0
WRITE_TIMEOUT = 120.0  # hooks (pre-commit linters) can be slow
NETWORK_TIMEOUT = 300.0
MAX_OUTPUT = 64 * 1024 * 1024  # whole-output commands (status, log) fail beyond this
MAX_DIFF = 1024 * 1024  # diffs keep the first and the last half of this
MAX_MESSAGE = 64 * 1024
MAX_FILES = 1000  # paths one commit_changes call may name (they travel as arguments)
HISTORY_CACHE = 256  # file histories kept per repository (keyed by HEAD's commit, path, config)
MAX_REVISION = 256

# Inherited GIT_* variables that may stay: identity, the user's own config files, transport
# settings chosen by whoever started the server. Everything else (GIT_DIR, GIT_INDEX_FILE,
# GIT_EXTERNAL_DIFF, GIT_CONFIG_PARAMETERS, GIT_TRACE...) is dropped.
KEEP_ENV = frozenset(
    {
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_AUTHOR_DATE",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
        "GIT_COMMITTER_DATE",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
        "GIT_CONFIG_NOSYSTEM",
        "GIT_EXEC_PATH",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_SSH_VARIANT",
        "GIT_SSL_NO_VERIFY",
        "GIT_SSL_CAINFO",
        "GIT_HTTP_USER_AGENT",
        "GIT_PROXY_SSL_CAINFO",
    }
)

# Always on: no background gc (nothing outlives a call), no ext:: transport, output we can parse.
ALWAYS: tuple[tuple[str, str], ...] = (
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("protocol.ext.allow", "never"),
    ("log.showSignature", "false"),
    ("i18n.logOutputEncoding", "UTF-8"),
    ("core.quotePath", "false"),
    ("color.ui", "false"),
    ("advice.detachedHead", "false"),
)

# Keys of the repository's own configuration that make git run a program (or touch files
# outside the workspace) while fetching. In an untrusted workspace a pull refuses when they are set.
NETWORK_DANGER = (
    re.compile(r"core\.(sshcommand|gitproxy|askpass|alternaterefscommand)"),
    re.compile(r"remote\..+\.(uploadpack|receivepack|vcs)"),
    re.compile(r"credential(\..+)?\.helper"),
    re.compile(r"http(\..+)?\.(cookiefile|savecookies)"),
    re.compile(r"gpg(\..+)?\.program"),
)

Change = Literal["MODIFICATION", "ADDITION", "DELETION", "MOVED", "UNTRACKED", "CONFLICT"]


# --------------------------------------------------------------------------------------------
# Processes


@dataclass
class Completed:
    argv: list[str]
    returncode: int
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    truncated: bool = False
    """Stdout was longer than the cap: it holds the head and the tail around a marker."""

    @property
    def out(self) -> str:
        return self.stdout.decode("utf-8", "replace")

    @property
    def err(self) -> str:
        return self.stderr.decode("utf-8", "replace")


def spawn(
    argv: Sequence[str], *, env: dict[str, str | None], cwd: Path, timeout: float, max_output: int
) -> Completed:
    """Run one git command through the shared process engine (``engines.processes.run``).

    It gives the containment every child of the server gets: own session and process group, stdin on
    ``/dev/null``, the server's environment reduced to an allow-list (``env`` here adds git's own
    variables; ``None`` removes one), head + tail capture of at most ``max_output`` bytes per stream,
    and on timeout or cancellation the whole tree killed (TERM, then KILL, setsid escapees included);
    processes a command leaves behind are stopped too. ``ws`` is not passed on purpose: hosted
    commands go through bubblewrap without network, and git itself (not a user's command) runs here
    with the repository's programs already switched off.
    """
    result = processes.run(list(argv), cwd=cwd, env=env, timeout_s=timeout, max_output=max_output)
    return Completed(
        argv=list(argv),
        returncode=result.exit_code if result.exit_code is not None else -1,
        stdout=result.stdout_bytes,
        stderr=result.stderr_bytes,
        timed_out=result.timed_out,
        truncated=result.stdout_total > max_output,
    )


# --------------------------------------------------------------------------------------------
# Argument checks (all before any process starts)


def check_value(value: str, what: str) -> str:
    """Any caller value that git will see as its own argument."""
    if not isinstance(value, str) or not value.strip():
        raise ToolFailure(f"invalid {what}: it is empty (give a {what})")
    if value.startswith("-"):
        raise ToolFailure(
            f"refused: {what} {_show(value)} starts with '-' (rule: values are never git options; "
            f"give a {what} that does not start with '-')",
            kind="refused",
        )
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ToolFailure(f"invalid {what}: it contains control characters (a NUL, newline or tab)")
    return value


def check_revision(value: str, what: str = "revision") -> str:
    """A commit-ish such as ``HEAD~1``, ``a1b2c3d``, ``main`` or ``v1.0``: passed after ``--end-of-options``."""
    check_value(value, what)
    if len(value) > MAX_REVISION:
        raise ToolFailure(f"invalid {what}: longer than {MAX_REVISION} characters")
    if value != value.strip() or " " in value:
        raise ToolFailure(f"invalid {what} {_show(value)}: revisions contain no spaces")
    if ".." in value:
        raise ToolFailure(
            f"invalid {what} {_show(value)}: give one revision, not a range (use commit1 and commit2 for two)"
        )
    return value


def check_remote(value: str) -> str:
    check_value(value, "remote")
    if len(value) > MAX_REVISION or any(c in value for c in " :\\"):
        raise ToolFailure(
            f"invalid remote {_show(value)}: give the name of a configured remote such as 'origin'"
        )
    return value


def _show(value: str) -> str:
    return repr(value if len(value) <= 120 else value[:120] + "…")


# --------------------------------------------------------------------------------------------
# Results


@dataclass
class StatusEntry:
    path: str
    type: Change
    staged: bool
    unstaged: bool
    old_path: str | None = None


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
class Diff:
    text: str
    truncated: bool


@dataclass
class CommitResult:
    hash: str
    branch: str | None
    files: list[StatusEntry]
    hooks_enabled: bool


@dataclass
class PullResult:
    remote: str
    branch: str
    updated: bool
    before: str | None
    after: str
    message: str
    files: list[StatusEntry]


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


@dataclass
class _ConfigSnapshot:
    files: tuple[str, ...]  # every file the configuration came from or may include
    stamp: tuple[object, ...]  # their stat when it was read
    entries: list[tuple[str, str, str | None]]  # (scope, key, value)
    filter_drivers: tuple[str, ...]


# --------------------------------------------------------------------------------------------
# The repository


_VERSION: tuple[int, ...] | None = None
_VERSION_LOCK = threading.Lock()


def repo(ws: Workspace) -> Repo:
    """The workspace's git repository (one per workspace), or a ``Git not available`` failure."""
    r = ws.service(Repo)
    r.ensure()
    return r


class Repo:
    """The git repository at the workspace root and every operation the tools need."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.root = ws.root
        self._lock = threading.RLock()  # one changing operation at a time (no index.lock races)
        self._config: _ConfigSnapshot | None = None
        self._config_lock = threading.Lock()
        self._git: str | None = None
        # (gitdir, commondir, .git stamp), replaced whole; the env cache names the one it was made for.
        self._found: tuple[Path, Path, object] | None = None
        self._base_env: tuple[object, dict[str, str | None]] | None = None
        self._packed: tuple[object, dict[str, str]] = (None, {})
        self._history: OrderedDict[tuple[object, ...], list[CommitInfo]] = OrderedDict()
        self._history_lock = threading.Lock()

    # ---- setup ------------------------------------------------------------------------------

    @property
    def trusted(self) -> bool:
        return self.ws.policy.trusted and not self.ws.policy.hosted

    def ensure(self) -> None:
        """Find git and the repository at the root; raise the seed's ``Git not available`` failure."""
        if self._git is None:
            self._git = _find_git()
        dotgit = self.root / ".git"
        try:
            st = os.lstat(dotgit)
            stamp: object = (st.st_ino, st.st_mtime_ns, st.st_size)
        except OSError:
            stamp = None
        found = self._found
        if stamp is not None and found is not None and stamp == found[2]:
            return
        if stamp is None:
            raise not_a_repository(self.root)
        gitdir = _read_dotgit(dotgit)
        if gitdir is None or not (gitdir / "HEAD").exists():
            raise not_a_repository(self.root, broken=True)
        commondir = gitdir
        with contextlib.suppress(OSError):
            text = (gitdir / "commondir").read_text().strip()
            if text:
                commondir = Path(os.path.realpath(gitdir / text))
        if self.ws.policy.hosted:
            for d in (gitdir, commondir):
                if not (d == self.root or d.is_relative_to(self.root)):
                    raise ToolFailure(
                        "refused: the workspace's .git points outside the workspace (rule: in hosted mode the "
                        "repository must live inside the project)",
                        kind="refused",
                    )
        # One assignment: a concurrent call sees the old repository or the new one, never none.
        self._found = (gitdir, commondir, stamp)

    @property
    def gitdir(self) -> Path:
        assert self._found is not None
        return self._found[0]

    @property
    def _commondir(self) -> Path | None:
        return None if self._found is None else self._found[1]

    def _env(self, mode: Mode, *, overrides: bool = True) -> dict[str, str | None]:
        """What git gets on top of the process engine's allow-listed environment (``None`` removes)."""
        found, cached = self._found, self._base_env
        if cached is None or cached[0] is not found:
            assert found is not None
            env: dict[str, str | None] = {k: v for k, v in os.environ.items() if k in KEEP_ENV}
            env.update(
                GIT_DIR=str(found[0]),
                GIT_WORK_TREE=str(self.root),
                GIT_TERMINAL_PROMPT="0",
                GIT_ASKPASS="",
                SSH_ASKPASS_REQUIRE="never",
                GIT_PAGER="cat",
                PAGER="cat",
                GIT_EDITOR="true",
                GIT_SEQUENCE_EDITOR="true",
                GIT_MERGE_AUTOEDIT="no",
                GIT_LITERAL_PATHSPECS="1",
                GIT_NO_REPLACE_OBJECTS="1",
                LC_ALL=None,
                LANGUAGE=None,
                LC_MESSAGES="C",  # git's messages are matched in English
            )
            cached = self._base_env = (found, env)
        env = dict(cached[1])
        if mode == "read":
            env["GIT_OPTIONAL_LOCKS"] = "0"  # a read never takes index.lock from the user's own git
        elif (mode == "network" or self.trusted) and os.environ.get("SSH_AUTH_SOCK"):
            # The user's ssh-agent, as their own git has it (the process engine drops it by default).
            env["SSH_AUTH_SOCK"] = os.environ["SSH_AUTH_SOCK"]
        if not overrides:
            return env
        pairs = self._overrides(mode)
        env["GIT_CONFIG_COUNT"] = str(len(pairs))
        for i, (key, value) in enumerate(pairs):
            env[f"GIT_CONFIG_KEY_{i}"] = key
            env[f"GIT_CONFIG_VALUE_{i}"] = value
        return env

    def contained(self, mode: Mode) -> bool:
        """Whether this operation runs with the repository's programs (hooks, filters, fsmonitor) off."""
        return mode == "read" or not self.trusted

    def _overrides(self, mode: Mode) -> list[tuple[str, str]]:
        pairs = list(ALWAYS)
        if self.contained(mode):
            pairs += [("core.fsmonitor", "false"), ("core.hooksPath", os.devnull)]
            for name in self._snapshot().filter_drivers:
                pairs += [
                    (f"filter.{name}.clean", ""),
                    (f"filter.{name}.smudge", ""),
                    (f"filter.{name}.process", ""),
                    (f"filter.{name}.required", "false"),
                ]
        if not self.trusted:
            pairs += [
                ("commit.gpgSign", "false"),
                ("tag.gpgSign", "false"),
                ("merge.verifySignatures", "false"),
                ("submodule.recurse", "false"),
                ("fetch.recurseSubmodules", "false"),
            ]
        if self.ws.policy.hosted:
            pairs.append(("protocol.file.allow", "never"))
        return pairs

    # ---- configuration snapshot (cached by the stat of every file it came from) -------------

    def _snapshot(self) -> _ConfigSnapshot:
        with self._config_lock:
            cached = self._config
            if cached is not None and cached.stamp == _stamp(cached.files):
                return cached
            base = self._config_files()
            seen = {
                f: _stat_key(f) for f in base
            }  # taken before reading: a change while reading shows next time
            entries, origins = self._read_config()
            files = tuple(sorted(set(base) | set(origins)))
            stamp = tuple(seen[f] if f in seen else _stat_key(f) for f in files)
            drivers = {
                key[len("filter.") : key.rindex(".")]
                for _, key, _ in entries
                if key.startswith("filter.") and key.count(".") >= 2
            }
            snap = _ConfigSnapshot(files, stamp, entries, tuple(sorted(drivers)))
            self._config = snap
            return snap

    def _config_files(self) -> list[str]:
        home = os.path.expanduser("~")
        xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        files = [
            str(self.gitdir / "config"),
            str(self.gitdir / "config.worktree"),
            str(self.gitdir / "HEAD"),  # includeIf "onbranch:" depends on it
            os.environ.get("GIT_CONFIG_GLOBAL") or os.path.join(home, ".gitconfig"),
            os.path.join(xdg, "git", "config"),
            os.environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig",
        ]
        if self._commondir is not None:
            files.append(str(self._commondir / "config"))
        return files

    def _read_config(self) -> tuple[list[tuple[str, str, str | None]], list[str]]:
        env = self._env("read", overrides=False)  # `git config` runs no repository programs
        result = self._spawn(
            ["config", "--list", "--show-scope", "--show-origin", "-z"], env=env, timeout=READ_TIMEOUT
        )
        if result.returncode != 0:
            raise self._failure(result, "read the repository configuration")
        tokens = result.stdout.split(b"\0")
        entries: list[tuple[str, str, str | None]] = []
        files: list[str] = []
        for i in range(0, len(tokens) - 2, 3):
            scope = tokens[i].decode("utf-8", "replace")
            origin = tokens[i + 1].decode("utf-8", "replace")
            key, sep, value = tokens[i + 2].decode("utf-8", "replace").partition("\n")
            entries.append((scope, key, value if sep else None))
            if origin.startswith("file:"):
                path = origin[len("file:") :]
                path = path if os.path.isabs(path) else str(self.root / path)
                files.append(path)
                if (
                    key == "include.path" or (key.startswith("includeif.") and key.endswith(".path"))
                ) and value:
                    target = os.path.expanduser(value)
                    files.append(
                        target if os.path.isabs(target) else os.path.join(os.path.dirname(path), target)
                    )
        return entries, sorted(set(files))

    def local_config(self, pattern: re.Pattern[str] | Sequence[re.Pattern[str]]) -> list[str]:
        """Keys set by the repository's own configuration (local or worktree scope) matching ``pattern``."""
        patterns = [pattern] if isinstance(pattern, re.Pattern) else list(pattern)
        found = []
        for scope, key, value in self._snapshot().entries:
            if scope in ("local", "worktree") and value and any(p.fullmatch(key) for p in patterns):
                found.append(key)
        return sorted(set(found))

    # ---- running ----------------------------------------------------------------------------

    def _spawn(
        self, args: Sequence[str], *, env: dict[str, str | None], timeout: float, max_output: int = MAX_OUTPUT
    ) -> Completed:
        assert self._git is not None
        return spawn(
            [self._git, "--no-pager", *args], env=env, cwd=self.root, timeout=timeout, max_output=max_output
        )

    def git(
        self,
        *args: str,
        mode: Mode = "read",
        timeout: float | None = None,
        ok: tuple[int, ...] = (0,),
        what: str = "",
        max_output: int = MAX_OUTPUT,
        partial_ok: bool = False,
    ) -> Completed:
        """Run one git command in ``mode``; a return code outside ``ok`` becomes a ``ToolFailure``.

        Output over ``max_output`` is a ``too_large`` failure unless ``partial_ok`` (then it holds the head
        and the tail around a marker)."""
        if timeout is None:
            timeout = {"read": READ_TIMEOUT, "write": WRITE_TIMEOUT, "network": NETWORK_TIMEOUT}[mode]
        result = self._spawn(args, env=self._env(mode), timeout=timeout, max_output=max_output)
        if result.timed_out:
            raise ToolFailure(
                f"git {args[0]} took longer than {timeout:g}s and was stopped (its whole process group was killed)",
                kind="unavailable",
            )
        if result.returncode not in ok:
            raise self._failure(result, what or f"run git {args[0]}")
        if result.truncated and not partial_ok:
            raise ToolFailure(
                f"git {args[0]} printed more than {max_output // (1024 * 1024)} MB; narrow the request",
                kind="too_large",
            )
        return result

    def _failure(self, result: Completed, what: str) -> ToolFailure:
        text = (result.err or result.out).strip()
        if "dubious ownership" in text:
            return ToolFailure(
                f"Git not available: git refuses the repository at {self.root} because another user owns it "
                "(git's safe.directory rule). If you trust it, run "
                f"`git config --global --add safe.directory {self.root}` and try again.",
                kind="unavailable",
            )
        if "not a git repository" in text:
            return not_a_repository(self.root, broken=True)
        return ToolFailure(f"git could not {what}: {self.redact(_tail_lines(text))}", kind="conflict")

    def redact(self, text: str) -> str:
        """Git's own words, minus host paths outside the workspace."""
        return redact(text, self.root)

    # ---- small queries ------------------------------------------------------------------------

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
        assert self._commondir is not None
        path = self._commondir / "packed-refs"
        stamp = _stat_key(str(path))
        if self._packed[0] != stamp:
            refs: dict[str, str] = {}
            with contextlib.suppress(OSError):
                for line in path.read_text(errors="replace").splitlines():
                    oid, _, name = line.partition(" ")
                    if name and _OBJECT_ID.fullmatch(oid):
                        refs[name] = oid
            self._packed = (stamp, refs)
        return self._packed[1]

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
            f"not found: {what} {_show(revision)} is not a commit in this repository "
            "(give a commit hash, a branch or tag name, or HEAD~N)",
            kind="not_found",
        )

    def check_branch(self, name: str) -> str:
        """A branch name that ``git check-ref-format --branch`` accepts unchanged."""
        check_value(name, "branch name")
        if name.startswith("+") or "@{" in name or name in ("@", "HEAD") or len(name) > MAX_REVISION:
            raise ToolFailure(
                f"invalid branch name {_show(name)} (rule: a plain branch name such as 'feature/login')"
            )
        result = self.git("check-ref-format", "--branch", name, ok=(0, 1, 128))
        if result.returncode != 0 or result.out.strip() != name:
            raise ToolFailure(
                f"invalid branch name {_show(name)}: git check-ref-format refuses it (no spaces, '..', '~', '^', ':', "
                "'?', '*', '[', '\\\\', no trailing '/' or '.lock'); use a name such as 'feature/login'"
            )
        return name

    def branch_exists(self, name: str) -> bool:
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
                f"refused: {_show(user_path)} is in another root of a multi-root workspace; git tools work on the "
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
                f"refused: {_show(user_path)} is inside .git (rule: git's own folder is never committed)",
                kind="refused",
            )
        return rel

    # ---- read operations ----------------------------------------------------------------------

    def status(self) -> list[StatusEntry]:
        """Changes against HEAD: staged and unstaged, untracked (an untracked folder once, as ``dir/``), conflicts."""
        result = self.git(
            "status",
            "--porcelain=v2",
            "-z",
            "--untracked-files=normal",
            "--ignore-submodules=dirty",
            "--renames",
            "--no-ahead-behind",
            what="read the status",
        )
        return parse_status(result.stdout)

    def file_history(self, path: str, max_entries: int) -> list[CommitInfo]:
        """Commits that changed ``path``, newest first, following renames of a file.

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
                _stat_key(str(self.gitdir / "shallow")), _stat_key(str(self._commondir / "info" / "grafts")),
            )  # fmt: skip
            with self._history_lock:
                hit = self._history.get(key)
                if hit is not None:
                    self._history.move_to_end(key)
                    return list(hit)
        args = ["log", f"--max-count={max_entries}", "-z", "--no-color"]
        if follow:  # a record mark before each commit, and the file's name in it after the fields
            args += ["--follow", f"--format=%x1e{_LOG_FORMAT}", "--name-only", "--relative"]
        else:
            args.append(f"--format={_LOG_FORMAT}")
        result = self.git(*args, "--", path, ok=(0, 128), what="read the history")
        if result.returncode == 128:
            if "does not have any commits" in result.err or "bad default revision" in result.err:
                return []
            raise self._failure(result, "read the history")
        commits = parse_followed_log(result.stdout) if follow else parse_log(result.stdout)
        if key is not None:
            with self._history_lock:
                self._history[key] = commits
                while len(self._history) > HISTORY_CACHE:
                    self._history.popitem(last=False)
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
        return bool(self.git("for-each-ref", "--count=1", "--format=%(refname)").out.strip())

    def diff(self, path: str, commit1: str | None, commit2: str | None, staged: bool) -> Diff:
        """The diff of one path; see the tool for what each combination compares."""
        args = ["diff", "--no-ext-diff", "--no-textconv", "--no-color", "--src-prefix=a/", "--dst-prefix=b/"]
        untracked_ok = False
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
            assert c2 is not None
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
                f"not found: {_show(path)} is neither in the working tree nor in the compared commits",
                kind="not_found",
            )
        return Diff(text=text, truncated=result.truncated)

    def _untracked(self, path: str) -> bool:
        if not (self.root / path).is_file():
            return False
        out = self.git("ls-files", "-z", "--others", "--exclude-standard", "--", path).out
        return bool(out.strip("\0"))

    def _known(self, path: str, revs: list[str | None]) -> bool:
        if self.git("ls-files", "-z", "--", path).out:
            return True
        for rev in [r for r in revs if r and r != _EMPTY_TREE] or ["HEAD"]:
            if self.git("cat-file", "-e", f"{rev}:{path}", ok=(0, 1, 128)).returncode == 0:
                return True
            if self.git("ls-tree", "--name-only", "--end-of-options", rev, "--", path, ok=(0, 128)).out:
                return True
        return False

    def branch_info(self) -> BranchInfo:
        branch, head = self.head()
        refs = self.git(
            "for-each-ref",
            "--format=%(refname)%00%(upstream)%00%(symref)",
            "refs/heads",
            "refs/remotes",
            what="list branches",
        ).out.splitlines()
        branches, remotes = [], []
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
            upstream = _short_ref(upstream_ref)
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

    def commit_details(self, revision: str) -> CommitInfo:
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
                    f"invalid commitHash {_show(revision)}: it matches several commits; give more characters"
                )
            raise ToolFailure(
                f"not found: commit {_show(revision)} is not in this repository "
                "(find_commit_by_message or get_file_history give hashes)",
                kind="not_found",
            )
        return parse_show(result.stdout)

    # ---- changing operations ------------------------------------------------------------------

    def staged_summary(self) -> tuple[list[StatusEntry], list[StatusEntry], list[StatusEntry]]:
        """(staged, unstaged or untracked, conflicted) entries of the current status."""
        entries = self.status()
        conflicts = [e for e in entries if e.type == "CONFLICT"]
        staged = [e for e in entries if e.staged and e.type != "CONFLICT"]
        other = [e for e in entries if e.unstaged and not e.staged and e.type != "CONFLICT"]
        return staged, other, conflicts

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
                    f"commit failed{hooks}: {self.redact(_tail_lines(text)) or 'git gave no reason'}",
                    kind="conflict",
                )
            assert after is not None
            info = self.commit_details(after)
            return CommitResult(
                hash=after, branch=self.head()[0], files=info.changes, hooks_enabled=self.trusted
            )

    def _stage(self, paths: list[str]) -> None:
        result = self.git("add", "--all", "--", *paths, mode="write", ok=(0, 1, 128), what="stage the files")
        if result.returncode == 0:
            return
        text = result.err.strip()
        m = re.search(r"pathspec '(.+?)' did not match", text)
        if m:
            raise ToolFailure(
                f"not found: {_show(m.group(1))} is neither in the working tree nor known to git; nothing was committed",
                kind="not_found",
            )
        if "ignored by one of your .gitignore" in text:
            raise ToolFailure(
                f"refused: a file is ignored by .gitignore; nothing was committed ({self.redact(_tail_lines(text))})",
                kind="refused",
            )
        raise self._failure(result, "stage the files")

    def switch_plan(self, branch: str) -> SwitchPlan:
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
                remote_match = _short_ref(matches[0])
            elif len(matches) > 1:
                raise ToolFailure(
                    f"invalid: {_show(branch)} exists on several remotes ({', '.join(_short_ref(m) for m in matches)}); "
                    "create a local branch from one with create_branch(startPoint=...)"
                )
            else:
                raise ToolFailure(
                    f"not found: there is no branch {_show(branch)} (get_branch_info lists the branches; "
                    "create_branch makes a new one)",
                    kind="not_found",
                )
        changes = [e.path for e in self.status() if e.type != "UNTRACKED"]
        return SwitchPlan(branch, current, exists, remote_match, changes)

    def switch(self, plan: SwitchPlan) -> SwitchResult:
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
        text = result.err.strip()
        files = _listed_files(text)
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
        with self._lock:
            self.check_branch(branch)
            if self.branch_exists(branch):
                raise ToolFailure(
                    f"conflict: branch {_show(branch)} already exists (switch_branch switches to it)",
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

    def remotes(self) -> list[str]:
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
                    f"not found: {_show(remote)} is not a configured remote (configured: {names}); pull only "
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
                f"refused: the URL of {remote!r} uses a transport that is not allowed here ({self.redact(_tail_lines(text))})",
                kind="refused",
            )
        return ToolFailure(
            f"could not fetch from {remote!r}: {self.redact(_tail_lines(text))}", kind="unavailable"
        )

    def _changed(self, before: str, after: str) -> list[StatusEntry]:
        out = self.git(
            "diff", "--no-ext-diff", "--no-textconv", "--name-status", "-z", "-M", before, after, "--"
        ).stdout
        return parse_name_status(out.split(b"\0"))


# --------------------------------------------------------------------------------------------
# Parsing

_LOG_FORMAT = "%H%x00%P%x00%an%x00%ae%x00%aI%x00%B"
_SHOW_FORMAT = "%H%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%cI%x00%B%x00"
_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git hash-object -t tree /dev/null (sha1)

_STATUS_LETTER: dict[str, Change] = {
    "M": "MODIFICATION",
    "T": "MODIFICATION",
    "A": "ADDITION",
    "D": "DELETION",
    "R": "MOVED",
    "C": "ADDITION",
}


def parse_status(data: bytes) -> list[StatusEntry]:
    """``git status --porcelain=v2 -z`` into entries, sorted by path."""
    tokens = data.split(b"\0")
    entries: list[StatusEntry] = []
    i = 0
    while i < len(tokens):
        raw = tokens[i]
        i += 1
        if not raw:
            continue
        line = raw.decode("utf-8", "surrogateescape")
        kind = line[0]
        if kind == "1":
            parts = line.split(" ", 8)
            entries.append(_entry(parts[1], _decode(parts[8])))
        elif kind == "2":
            parts = line.split(" ", 9)
            old = _decode(tokens[i]) if i < len(tokens) else None
            i += 1
            entries.append(_entry(parts[1], _decode(parts[9]), old))
        elif kind == "u":
            parts = line.split(" ", 10)
            entries.append(StatusEntry(_decode(parts[10]), "CONFLICT", staged=False, unstaged=True))
        elif kind == "?":
            entries.append(StatusEntry(_decode(line[2:]), "UNTRACKED", staged=False, unstaged=True))
    entries.sort(key=lambda e: e.path)
    return entries


def _entry(xy: str, path: str, old: str | None = None) -> StatusEntry:
    x, y = xy[0], xy[1]
    staged, unstaged = x != ".", y != "."
    if x != "." and not (y == "D" and x in "MT"):
        kind = _STATUS_LETTER.get(x, "MODIFICATION")
    else:
        kind = _STATUS_LETTER.get(y, "MODIFICATION")
    return StatusEntry(path, kind, staged, unstaged, old if kind == "MOVED" or x == "C" else None)


def _decode(raw: str | bytes) -> str:
    if isinstance(raw, bytes):
        return raw.decode("utf-8", "replace")
    return raw.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def parse_log(data: bytes) -> list[CommitInfo]:
    """``git log -z --format=_LOG_FORMAT``: six NUL-separated fields per commit, commits NUL-separated."""
    tokens = data.decode("utf-8", "replace").split("\0")
    commits = []
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
    commits = []
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


def parse_name_status(tokens: list[bytes]) -> list[StatusEntry]:
    changes: list[StatusEntry] = []
    i = 0
    while i < len(tokens):
        status = tokens[i].decode("ascii", "replace").strip()
        i += 1
        if not status:
            continue
        letter = status[0]
        if letter in "RC" and i + 1 < len(tokens):
            old, new = _decode(tokens[i]), _decode(tokens[i + 1])
            i += 2
            kind: Change = "MOVED" if letter == "R" else "ADDITION"
            changes.append(StatusEntry(new, kind, True, False, old))
        elif i < len(tokens):
            path = _decode(tokens[i])
            i += 1
            changes.append(StatusEntry(path, _STATUS_LETTER.get(letter, "MODIFICATION"), True, False))
    return changes


def _listed_files(text: str) -> list[str]:
    """The files git lists (tab-indented) under 'would be overwritten' and similar errors."""
    return [line.strip() for line in text.splitlines() if line.startswith("\t")]


def _short_ref(ref: str) -> str:
    for prefix in ("refs/heads/", "refs/remotes/", "refs/tags/"):
        if ref.startswith(prefix):
            return ref[len(prefix) :]
    return ref


def _tail_lines(text: str, limit: int = 1500) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip() and not ln.startswith("hint:")]
    text = "\n".join(lines)
    return text if len(text) <= limit else "…" + text[-limit:]


_URL = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*)://([^\s'\"`]*)")
_ABS = re.compile(r"(?<![\w./~:-])(/[^\s'\"`:,;()<>]*)")


def redact(text: str, root: Path) -> str:
    """Replace host paths outside ``root`` (bare or as ``file://`` URLs) with a placeholder; strip
    credentials from URLs."""

    def inside(path: str) -> bool:
        try:
            return Path(os.path.normpath(path)).is_relative_to(root)
        except ValueError:
            return False

    def url(m: re.Match[str]) -> str:
        scheme, rest = m.group(1), m.group(2)
        if scheme.lower() == "file":
            return m.group(0) if inside(rest) else "file://<outside the workspace>"
        host, sep, tail = rest.partition("/")
        host = host.rpartition("@")[2]
        return f"{scheme}://{host}{sep}{tail}"

    text = _URL.sub(url, text)
    return _ABS.sub(
        lambda m: m.group(1) if inside(m.group(1)) or m.group(1) == os.devnull else "<outside the workspace>",
        text,
    )


def _stamp(paths: Iterable[str]) -> tuple[object, ...]:
    return tuple(_stat_key(p) for p in paths)


def _stat_key(path: str) -> object:
    try:
        st = os.stat(path)
    except OSError:
        return (path, None)
    return (path, st.st_mtime_ns, st.st_size, st.st_ino)


def _read_dotgit(dotgit: Path) -> Path | None:
    """The git directory named by ``<root>/.git`` (a folder, or a ``gitdir:`` file for worktrees)."""
    if dotgit.is_dir():
        return Path(os.path.realpath(dotgit))
    try:
        text = dotgit.read_text(errors="replace").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    target = Path(text[len("gitdir:") :].strip())
    if not target.is_absolute():
        target = dotgit.parent / target
    target = Path(os.path.realpath(target))
    return target if target.is_dir() else None


def _find_git() -> str:
    global _VERSION
    path = shutil.which("git")
    if path is None:
        raise ToolFailure(
            "Git not available: the `git` command is not installed on this machine", kind="unavailable"
        )
    with _VERSION_LOCK:
        if _VERSION is None:
            out = subprocess.run(
                [path, "version"], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=10
            ).stdout
            m = re.search(r"(\d+)\.(\d+)", out)
            _VERSION = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    if _VERSION < MIN_VERSION:
        raise ToolFailure(
            f"Git not available: git {'.'.join(map(str, MIN_VERSION))} or newer is needed "
            f"(found {'.'.join(map(str, _VERSION))})",
            kind="unavailable",
        )
    return path


def not_a_repository(root: Path, broken: bool = False) -> ToolFailure:
    if broken:
        return ToolFailure(
            f"Git not available: {root} has a .git entry but it is not a usable git repository "
            "(a broken or partial .git; check it with `git status` in that folder)",
            kind="unavailable",
        )
    return ToolFailure(
        f"Git not available: {root} is not a git repository (the workspace root has no .git). "
        "Run `git init` there, or open the repository's top folder as the workspace.",
        kind="unavailable",
    )


def no_commits() -> ToolFailure:
    return ToolFailure(
        "not found: the repository has no commits yet (commit_changes makes the first one)", kind="not_found"
    )

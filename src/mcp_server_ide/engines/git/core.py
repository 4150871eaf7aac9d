"""The repository at the workspace root, and the one way to run git in it (:meth:`RepoCore.git`).

:class:`RepoCore` finds git and the repository (``discovery``), builds each process's environment
and forced configuration (``environment``, from the cached ``config``), runs the command through
``process.spawn`` with a timeout and an output cap, and turns a failure into a ``ToolFailure``
in git's own words (``messages``). The operations (``refs``, ``status``, ``history``, ``diff``,
``branches``, ``commit``, ``pull``) build on it; ``repository.Repo`` is all of them together.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from pathlib import Path

from ...workspace import Workspace
from ..failures import ToolFailure
from .config import ConfigCache, ConfigSnapshot, Entry, config_files, parse_config_list
from .discovery import dotgit_stamp, find_git, locate
from .environment import Env, Mode, add_config, base_env, forced_config, mode_env
from .messages import not_a_repository, redact, tail_lines
from .process import Completed, spawn

READ_TIMEOUT = 30.0
WRITE_TIMEOUT = 120.0  # hooks (pre-commit linters) can be slow
NETWORK_TIMEOUT = 300.0
MAX_OUTPUT = 64 * 1024 * 1024  # whole-output commands (status, log) fail beyond this


class RepoCore:
    """The git repository at the workspace root: where it is, how git runs in it, and its configuration."""

    def __init__(self, ws: Workspace) -> None:
        self.ws: Workspace = ws
        self.root: Path = ws.root
        # One changing operation at a time (no index.lock races).
        self._lock: threading.RLock = threading.RLock()
        self._config: ConfigCache = ConfigCache()
        self._git: str | None = None
        # (gitdir, commondir, .git stamp), replaced whole; the env cache names the one it was made for.
        self._found: tuple[Path, Path, object] | None = None
        self._base_env: tuple[object, Env] | None = None

    # ---- setup ------------------------------------------------------------------------------

    def follow_roots(self, roots: list[Path]) -> bool:
        """Stays (with its caches) while the primary root, whose repository this is, is still the first."""
        return roots[0] == self.root

    @property
    def trusted(self) -> bool:
        """Whether the repository's own programs (hooks, filters) may run on changing operations (a
        trusted local workspace)."""
        return self.ws.policy.trusted and not self.ws.policy.hosted

    def ensure(self) -> None:
        """Find git and the repository at the root; raise the seed's ``Git not available`` failure."""
        if self._git is None:
            self._git = find_git()
        stamp = dotgit_stamp(self.root / ".git")
        found = self._found
        if stamp is not None and found is not None and stamp == found[2]:
            return
        if stamp is None:
            raise not_a_repository(self.root)
        gitdir, commondir = locate(self.root, hosted=self.ws.policy.hosted)
        # One assignment: a concurrent call sees the old repository or the new one, never none.
        self._found = (gitdir, commondir, stamp)

    @property
    def gitdir(self) -> Path:
        assert self._found is not None
        return self._found[0]

    @property
    def commondir(self) -> Path:
        """Where the refs and objects shared by every worktree live (the git directory, outside worktrees)."""
        assert self._found is not None
        return self._found[1]

    @property
    def _commondir(self) -> Path | None:
        return None if self._found is None else self._found[1]

    # ---- environment and configuration ----------------------------------------------------------

    def _env(self, mode: Mode, *, overrides: bool = True) -> Env:
        """What git gets on top of the process engine's allow-listed environment (``None`` removes)."""
        found, cached = self._found, self._base_env
        if cached is None or cached[0] is not found:
            assert found is not None
            cached = self._base_env = (found, base_env(found[0], self.root))
        env = mode_env(cached[1], mode, trusted=self.trusted)
        if not overrides:
            return env
        contained = self.contained(mode)
        pairs = forced_config(
            contained=contained,
            trusted=self.trusted,
            hosted=self.ws.policy.hosted,
            filter_drivers=self._snapshot().filter_drivers if contained else (),
        )
        return add_config(env, pairs)

    def contained(self, mode: Mode) -> bool:
        """Whether this operation runs with the repository's programs (hooks, filters, fsmonitor) off."""
        return mode == "read" or not self.trusted

    def _snapshot(self) -> ConfigSnapshot:
        return self._config.get(lambda: config_files(self.gitdir, self._commondir), self._read_config)

    def _read_config(self) -> tuple[list[Entry], list[str]]:
        env = self._env("read", overrides=False)  # `git config` runs no repository programs
        result = self._spawn(
            ["config", "--list", "--show-scope", "--show-origin", "-z"], env=env, timeout=READ_TIMEOUT
        )
        if result.returncode != 0:
            raise self._failure(result, "read the repository configuration")
        return parse_config_list(result.stdout, self.root)

    def local_config(self, pattern: re.Pattern[str] | Sequence[re.Pattern[str]]) -> list[str]:
        """Keys set by the repository's own configuration (local or worktree scope) matching ``pattern``."""
        patterns = [pattern] if isinstance(pattern, re.Pattern) else list(pattern)
        return self._snapshot().local_keys(patterns)

    # ---- running ----------------------------------------------------------------------------

    def _spawn(
        self, args: Sequence[str], *, env: Env, timeout: float, max_output: int = MAX_OUTPUT
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
        """A failed command as a ``ToolFailure`` in git's words (safe.directory and broken repositories explained)."""
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
        return ToolFailure(f"git could not {what}: {self.redact(tail_lines(text))}", kind="conflict")

    def redact(self, text: str) -> str:
        """Git's own words, minus host paths outside the workspace."""
        return redact(text, self.root)

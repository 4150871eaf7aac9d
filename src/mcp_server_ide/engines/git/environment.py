"""What a git process gets: its environment and the configuration forced on it (the containment).

- **The repository is the workspace's.** ``GIT_DIR`` and ``GIT_WORK_TREE`` are set to the
  workspace root (which overrides ``core.worktree`` and any inherited ``GIT_*`` variable); inherited
  ``GIT_*`` variables are dropped except the allow-list :data:`KEEP_ENV`.
- **Repository configuration is untrusted input.** Read operations, and every operation in an
  untrusted or hosted workspace, run *contained*: ``core.fsmonitor=false``, hooks pointed at
  ``/dev/null``, every configured clean/smudge/process filter emptied, no pager (and the callers
  pass ``--no-ext-diff --no-textconv`` to everything that diffs). The overrides travel in
  ``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n`` (no ``key=value`` parsing, so a
  subsection such as ``filter "a=b"`` cannot dodge them). In a trusted local workspace the
  operations that change the repository (commit, switch, pull) behave as ``git`` itself would:
  the user's hooks and filters run.
- **Never a prompt.** ``GIT_TERMINAL_PROMPT=0``, an empty ``GIT_ASKPASS`` (so ``core.askPass`` is
  not used either), ``SSH_ASKPASS_REQUIRE=never``, ``GIT_EDITOR=true`` (stdin closed and a new
  session come from the process engine).
- **System configuration is kept** (``GIT_CONFIG_NOSYSTEM`` is not set): ``/etc/gitconfig`` is the
  machine owner's (``safe.directory``, proxies, CA bundles), as trusted as the user's
  ``~/.gitconfig``; only the repository's own configuration is hostile, and it is the one
  contained above.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal

Mode = Literal["read", "write", "network"]
"""``read`` never changes the repository; ``write`` changes it (commit, switch); ``network`` fetches."""

Env = dict[str, str | None]
"""Variables added to the process engine's allow-listed environment (``None`` removes one)."""

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


def base_env(gitdir: Path, root: Path) -> Env:
    """The variables every git process of this repository gets, whatever the mode."""
    env: Env = {k: v for k, v in os.environ.items() if k in KEEP_ENV}
    env.update(
        GIT_DIR=str(gitdir),
        GIT_WORK_TREE=str(root),
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
    return env


def mode_env(base: Mapping[str, str | None], mode: Mode, *, trusted: bool) -> Env:
    """A copy of ``base`` for one process in ``mode``."""
    env = dict(base)
    if mode == "read":
        env["GIT_OPTIONAL_LOCKS"] = "0"  # a read never takes index.lock from the user's own git
    elif (mode == "network" or trusted) and os.environ.get("SSH_AUTH_SOCK"):
        # The user's ssh-agent, as their own git has it (the process engine drops it by default).
        env["SSH_AUTH_SOCK"] = os.environ["SSH_AUTH_SOCK"]
    return env


def forced_config(
    *, contained: bool, trusted: bool, hosted: bool, filter_drivers: Iterable[str]
) -> list[tuple[str, str]]:
    """The configuration forced on one process (``filter_drivers``: every filter the configuration names)."""
    pairs = list(ALWAYS)
    if contained:
        pairs += [("core.fsmonitor", "false"), ("core.hooksPath", os.devnull)]
        for name in filter_drivers:
            pairs += [
                (f"filter.{name}.clean", ""),
                (f"filter.{name}.smudge", ""),
                (f"filter.{name}.process", ""),
                (f"filter.{name}.required", "false"),
            ]
    if not trusted:
        pairs += [
            ("commit.gpgSign", "false"),
            ("tag.gpgSign", "false"),
            ("merge.verifySignatures", "false"),
            ("submodule.recurse", "false"),
            ("fetch.recurseSubmodules", "false"),
        ]
    if hosted:
        pairs.append(("protocol.file.allow", "never"))
    return pairs


def add_config(env: Env, pairs: Sequence[tuple[str, str]]) -> Env:
    """``env`` with ``pairs`` in ``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n``."""
    env["GIT_CONFIG_COUNT"] = str(len(pairs))
    for i, (key, value) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env

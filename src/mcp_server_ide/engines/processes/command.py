"""A command checked and resolved before it starts: its argv, shell, working directory, environment.

Nothing is spawned here: :func:`prepare` turns what a caller gave into a
:class:`~.containment.Prepared` (refusing bad input with a ToolFailure naming the rule), and
:func:`.containment.spawn` starts it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..failures import ToolFailure
from .containment import Prepared, hosted_argv, new_tag
from .env import TAG_VAR, child_env
from .sendable import check_sendable

if TYPE_CHECKING:
    from ...workspace import Workspace


def default_shell() -> str:
    """The shell commands given as one string run in: bash when there is one, else /bin/sh."""
    return _SHELL


def _find_shell() -> str:
    for candidate in ("/bin/bash", "/usr/bin/bash"):
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("bash")
    return found or "/bin/sh"


_SHELL = _find_shell()


def command_argv(command: str | Sequence[str], shell: str | None = None) -> list[str]:
    """A string is a shell command (``bash -c``); a sequence is an argv, run without a shell."""
    if isinstance(command, str):
        if not command.strip():
            raise ToolFailure("invalid command: it is empty (give the shell command to run)")
        if "\x00" in command:
            raise ToolFailure("invalid command: it contains a NUL byte")
        check_sendable(command, "command")
        return [shell or _SHELL, "-c", command]
    argv = [os.fspath(a) for a in command]
    if not argv or not argv[0]:
        raise ToolFailure("invalid command: the argument list is empty")
    if any("\x00" in a for a in argv):
        raise ToolFailure("invalid command: an argument contains a NUL byte")
    for arg in argv:
        check_sendable(arg, "command argument")
    return argv


def resolve_cwd(ws: Workspace | None, cwd: str | os.PathLike[str] | None) -> Path:
    """The working directory: inside the workspace (through the sandbox) when ``ws`` is given.

    Without a workspace, ``cwd`` is an internal caller's own absolute path, used as it is.
    """
    if ws is None:
        if cwd is None:
            raise ValueError("cwd is required without a workspace")
        return Path(cwd)
    from .. import sandbox

    resolved = sandbox.resolve(ws, os.fspath(cwd) if cwd not in (None, "") else ".")
    if not resolved.path.is_dir():
        if not resolved.path.exists():
            raise ToolFailure(
                f"not found: the working directory {resolved.display_rel!r} does not exist in the workspace "
                "(give a folder relative to the root, or omit cwd for the root)",
                kind="not_found",
            )
        raise ToolFailure(f"invalid cwd: {resolved.display_rel!r} is a file, not a folder")
    return resolved.path


def prepare(
    command: str | Sequence[str],
    *,
    ws: Workspace | None = None,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str | None] | None = None,
    shell: str | None = None,
    term: str | None = None,
    shared: Sequence[Path] = (),
) -> Prepared:
    """Check and resolve everything before a process starts (nothing is spawned here)."""
    argv = command_argv(command, shell)
    where = resolve_cwd(ws, cwd)
    tag = new_tag()
    display = command if isinstance(command, str) else " ".join(argv)
    limits = ws.policy.limits if ws is not None else None
    if ws is not None and ws.policy.hosted:
        from .bubblewrap import sandbox_env
        from .limits import within_quota

        child = sandbox_env(env, term=term, tag=tag)  # nothing of the server's environment
        argv = hosted_argv(ws, argv, where, tty=term is not None, shared=shared)
        limits = within_quota(limits, ws.policy.disk_quota)
    else:
        child = child_env(env, term=term)
        child[TAG_VAR] = tag
    return Prepared(argv=argv, cwd=where, env=child, tag=tag, display=display, limits=limits, workspace=ws)


def cwd_label(where: Path, root: Path) -> str:
    """A working directory as jobs and terminals show it: relative to the primary root."""
    rel = os.path.relpath(where, root)
    return "." if rel == "." else rel


def inside_any(where: Path | None, roots: list[Path]) -> bool:
    """Whether the folder a job or terminal started in is under one of ``roots`` (None: yes)."""
    return where is None or any(where == r or where.is_relative_to(r) for r in roots)

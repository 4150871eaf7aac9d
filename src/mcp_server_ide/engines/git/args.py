"""Argument checks: every value a caller gives git is checked here, before any process starts.

No value may start with ``-`` (it would be read as an option: mcp-server-git CVE-2025-68144) or hold
control characters; a revision is one commit-ish (passed after ``--end-of-options``), never a range;
a remote is a configured remote's plain name. Branch names are checked by ``Refs.check_branch``,
which also asks ``git check-ref-format``.
"""

from __future__ import annotations

from ..failures import ToolFailure

MAX_REVISION = 256


def check_value(value: str, what: str) -> str:
    """Any caller value that git will see as its own argument."""
    if not isinstance(value, str) or not value.strip():
        raise ToolFailure(f"invalid {what}: it is empty (give a {what})")
    if value.startswith("-"):
        raise ToolFailure(
            f"refused: {what} {show(value)} starts with '-' (rule: values are never git options; "
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
        raise ToolFailure(f"invalid {what} {show(value)}: revisions contain no spaces")
    if ".." in value:
        raise ToolFailure(
            f"invalid {what} {show(value)}: give one revision, not a range (use commit1 and commit2 for two)"
        )
    return value


def check_remote(value: str) -> str:
    """A remote's plain name such as ``origin`` (no spaces, ``:`` or ``\\``: never a URL or a path)."""
    check_value(value, "remote")
    if len(value) > MAX_REVISION or any(c in value for c in " :\\"):
        raise ToolFailure(
            f"invalid remote {show(value)}: give the name of a configured remote such as 'origin'"
        )
    return value


def show(value: str) -> str:
    """A caller's value quoted for a message (cut at 120 characters)."""
    return repr(value if len(value) <= 120 else value[:120] + "…")

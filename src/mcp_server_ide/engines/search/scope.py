"""What every search looks at: the ripgrep flags all searches share (:func:`common_args`), and the
note an answer carries when what ripgrep found is not beneath the root any more (:mod:`.beneath`)."""

from __future__ import annotations

from dataclasses import dataclass

from .globs import check_glob

ALWAYS_SKIPPED = (".git", "*.mcp-ide.tmp")
"""Never searched nor listed: the repository, and our own in-flight temp files (sandbox.TEMP_MARK)."""
SKIPPED_UNLESS_IGNORED = ("node_modules", "dist")


@dataclass(frozen=True)
class Filters:
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    include_ignored: bool = False


def common_args(filters: Filters) -> list[str]:
    # As VS Code searches by default: the workspace's own ignore files only, not those of folders
    # above it (a parent ignoring the workspace folder would hide everything) nor the user's global
    # excludes (answers must not depend on one person's git config).
    args = [
        "--no-config",
        "--hidden",
        "--no-messages",
        "--no-follow",
        "--no-ignore-parent",
        "--no-ignore-global",
    ]
    if filters.include_ignored:
        args.append("--no-ignore")
    else:
        args.append("--no-require-git")
    # Include globs are applied to ripgrep's answer (matches()), not given to it: a ripgrep --glob
    # overrides the ignore files, so '*.py' would bring back every ignored .py file (.venv...).
    for glob in filters.exclude:
        args += ["--glob", "!" + check_glob(glob).lstrip("!")]
    # Last, so they win over the caller's own globs (ripgrep: later globs take precedence).
    for name in ALWAYS_SKIPPED:
        args += ["--glob", f"!{name}"]
    if not filters.include_ignored:
        for name in SKIPPED_UNLESS_IGNORED:
            args += ["--glob", f"!{name}/"]
    return args


SWAPPED = (
    "a file or folder changed while the search ran (a folder became a link, a file was edited or "
    "removed); what ripgrep found there and is not there now was left out"
)

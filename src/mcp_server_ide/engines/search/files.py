"""File search: the files a search would look at (``rg --files``), and our own temp files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .globs import matcher
from .ripgrep import DEFAULT_TIMEOUT, MAX_OUTPUT, rel_name, rg_binary, run
from .scope import SWAPPED, Filters, common_args, swapped


@dataclass
class FilesResult:
    paths: list[str]
    complete: bool = True
    reason: str | None = None


def list_files(
    root: Path,
    *,
    under: str = "",
    filters: Filters = Filters(),
    timeout: float = DEFAULT_TIMEOUT,
    max_output: int = MAX_OUTPUT,
) -> FilesResult:
    """Every file under ``root`` (or its folder ``under``, POSIX, relative) that a search would look
    at (``rg --files``), unsorted, relative to ``root``. The root's ignore files apply in ``under`` too."""
    # Walked from the root even for a folder, so the root's ignore files apply below it too (with the
    # folder as ripgrep's path they would be "parent" ignore files, which are not read).
    args = [rg_binary(), *common_args(filters), "--files", "--null", "--", "."]
    out, _err, _code, reason = run(args, root, timeout, max_output)
    parts = out.split(b"\x00")
    if parts and parts[-1] == b"":
        parts.pop()
    elif parts and reason is not None:
        parts.pop()  # the last name was cut by the stop
    paths = [rel_name(p) for p in parts]
    if under:
        prefix = under.strip("/") + "/"
        paths = [p for p in paths if p.startswith(prefix)]
    wanted = matcher(filters.include)
    if wanted is not None:
        paths = [p for p in paths if wanted(p)]
    changed = swapped(root, paths, files_too=False)
    if changed:
        paths = [p for p in paths if p not in changed]
        reason = reason or SWAPPED
    return FilesResult(paths=paths, complete=reason is None, reason=reason)


def list_temp_files(root: Path, *, timeout: float = DEFAULT_TIMEOUT) -> list[str]:
    """Our own temp files (``*.mcp-ide.tmp``) anywhere under ``root``, ignored and hidden folders
    included, relative to ``root``; never inside ``.git`` or ``node_modules`` (no write goes there).
    For the start-up sweep of leftovers; one ripgrep thread, so it stays in the background."""
    args = [
        rg_binary(),
        "--no-config",
        "--files",
        "--hidden",
        "--no-ignore",
        "--no-messages",
        "--no-follow",
    ]
    args += ["--threads", "1", "--null", "--glob", "*.mcp-ide.tmp"]  # sandbox.TEMP_MARK
    args += ["--glob", "!.git", "--glob", "!node_modules", "--", "."]
    out, _err, _code, reason = run(args, root, timeout, MAX_OUTPUT)
    parts = out.split(b"\x00")
    if parts and (parts[-1] == b"" or reason is not None):
        parts.pop()  # the empty tail, or a name cut by the stop
    return [rel_name(p) for p in parts]

"""File search: the files a search would look at (``rg --files``), those whose name contains a text,
and our own temp files.

``rg --files`` of a 100,000-file tree prints ~6 MB of names; turning each into a ``str`` and testing it
in Python costs more than ripgrep's whole walk. :func:`find_files` therefore looks for the text in the
raw output first (one C-speed scan, :func:`.names.candidates`) and decodes, tests and looks up again
beneath the root (:func:`.beneath.present`) only the names it finds there.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .beneath import present
from .globs import exact_glob, matcher
from .names import NameStream, candidates, contains, records, split_names
from .ripgrep import DEFAULT_TIMEOUT, MAX_OUTPUT, Running, rel_name, rg_binary, run
from .scope import SWAPPED, Filters, common_args


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
    out, reason = _rg_files(root, filters, timeout, max_output)
    paths = split_names(out, cut=reason is not None)
    if under:
        prefix = under.strip("/") + "/"
        paths = [p for p in paths if p.startswith(prefix)]
    return _checked(root, paths, filters, reason)


class StreamedFiles:
    """The files :func:`list_files` lists of the whole root (default filters), handed to ``on_names``
    a batch at a time as ripgrep prints them: ripgrep runs while the caller works, which calls
    :meth:`poll` between its own steps and :meth:`finish` at the end (or :meth:`stop`). With
    ``held``, what ripgrep prints is kept as printed until :meth:`release` (the caller has nowhere
    to put the names yet): splitting it later costs the same, and each batch of names is let go as
    soon as it was handed over instead of all of them being held.

    No name is looked up again beneath the root (:func:`.beneath.present`): only for a caller that
    uses the names to filter a walk of its own that never follows a link (``project_fs_list``),
    where a name from beyond a folder swapped for a link matches nothing."""

    def __init__(
        self,
        root: Path,
        on_names: Callable[[list[str]], None],
        *,
        held: bool = False,
        timeout: float = DEFAULT_TIMEOUT,
        max_output: int = MAX_OUTPUT,
    ) -> None:
        self._names = NameStream(on_names)
        self._held: list[bytes] | None = [] if held else None
        args = [rg_binary(), *common_args(Filters()), "--files", "--null", "--", "."]
        self._rg = Running(args, root, timeout, max_output, self._take)
        self.poll = self._rg.poll
        self.stop = self._rg.stop

    def _take(self, chunk: bytes) -> None:
        if self._held is not None:
            self._held.append(chunk)
        else:
            self._names.feed(chunk)

    def release(self) -> None:
        """Hand over what was held, and from now on every name as it comes."""
        held, self._held = self._held or [], None
        while held:
            self._names.feed(held.pop(0))

    def finish(self) -> str | None:
        """Every name handed over; why ripgrep was stopped early, or None."""
        self.release()
        _out, _err, _code, reason = self._rg.finish()
        self._names.end(cut=reason is not None)
        return reason


def stream_files(
    root: Path,
    on_names: Callable[[list[str]], None],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    max_output: int = MAX_OUTPUT,
) -> str | None:
    """:class:`StreamedFiles` read to the end at once; why ripgrep was stopped early, or None."""
    return StreamedFiles(root, on_names, timeout=timeout, max_output=max_output).finish()


def files_skipping(
    root: Path, skipped: list[str], *, timeout: float = DEFAULT_TIMEOUT, max_output: int = MAX_OUTPUT
) -> set[str] | None:
    """The files :class:`StreamedFiles` lists of the whole root, but for what is below the folders
    ``skipped`` (root-relative POSIX paths): ripgrep is not to enter them. Each is given as a glob
    that matches that path alone (:func:`.globs.exact_glob`, an override ``!/path``): an override
    that matches only ever takes an entry out, and one that does not leaves ripgrep's verdict as it
    was, so every other file is named exactly as a run without them names it (ripgrep still walks
    from the root and reads every ignore file on the way). None when that cannot be told: a path
    ripgrep could not take as a glob, an error (exit status 2), a run stopped early. As with
    :class:`StreamedFiles`, no name is looked up again beneath the root."""
    globs: list[str] = []
    for rel in skipped:
        glob = exact_glob(rel)
        if glob is None:
            return None
        globs += ["--glob", "!" + glob]
    args = [rg_binary(), *common_args(Filters()), *globs, "--files", "--null", "--", "."]
    out, _err, code, reason = run(args, root, timeout, max_output)
    if reason is not None or code not in (0, 1):
        return None
    return set(split_names(out))


def find_files(
    root: Path,
    text: str,
    *,
    case_sensitive: bool = False,
    on_path: bool = False,
    prefix: str = "",
    filters: Filters = Filters(),
    timeout: float = DEFAULT_TIMEOUT,
    max_output: int = MAX_OUTPUT,
) -> FilesResult:
    """The files :func:`list_files` lists whose name contains ``text`` (with ``on_path``, whose path
    ``prefix + relative path`` does), case-insensitively (``str.casefold``) unless ``case_sensitive``;
    unsorted, relative to ``root``."""
    out, reason = _rg_files(root, filters, timeout, max_output, _name_type(text, case_sensitive, on_path))
    if reason is not None:  # the last name was cut by the stop
        out = out[: out.rfind(b"\x00") + 1]
    if on_path and prefix:  # a match may start in the prefix, which the output does not hold
        found = records(out)
    else:
        found = candidates(out, text, case_sensitive=case_sensitive, on_path=on_path)
    paths = [
        rel
        for rel in (rel_name(r) for r in found)
        if contains(rel, text, case_sensitive=case_sensitive, on_path=on_path, prefix=prefix)
    ]
    return _checked(root, paths, filters, reason)


def _rg_files(
    root: Path, filters: Filters, timeout: float, max_output: int, only: tuple[str, ...] = ()
) -> tuple[bytes, str | None]:
    # Walked from the root even for a folder, so the root's ignore files apply below it too (with the
    # folder as ripgrep's path they would be "parent" ignore files, which are not read).
    args = [rg_binary(), *common_args(filters), *only, "--files", "--null", "--", "."]
    out, _err, _code, reason = run(args, root, timeout, max_output)
    return out, reason


_TYPE = "mcpidenames"
_PLAIN = re.compile(r"[A-Za-z0-9_. -]+")


def _name_type(text: str, case_sensitive: bool, on_path: bool) -> tuple[str, ...]:
    """ripgrep flags that keep it to the names that may contain ``text``: a file type of its own (a
    type, unlike a ``--glob``, never brings back an ignored file; it tests the file's own name). With
    case folding, ASCII letters become ``[xX]`` and any name with a non-ASCII character is kept too
    (only ``str.casefold`` can tell). Only for plain texts (letters, digits, ``_ . -`` and spaces);
    none: every name. The exact test follows (:func:`.names.contains`)."""
    if on_path or not text or not _PLAIN.fullmatch(text):
        return ()
    if case_sensitive:
        return ("--type-add", f"{_TYPE}:*{text}*", "--type", _TYPE)
    folded = "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in text)
    return ("--type-add", f"{_TYPE}:*{folded}*", "--type-add", f"{_TYPE}:*[!\x01-\x7f]*", "--type", _TYPE)


def _checked(root: Path, paths: list[str], filters: Filters, reason: str | None) -> FilesResult:
    wanted = matcher(filters.include)
    if wanted is not None:
        paths = [p for p in paths if wanted(p)]
    there = present(root, paths)
    if len(there) < len(paths):
        paths = [p for p in paths if p in there]
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
    return split_names(out, cut=reason is not None)

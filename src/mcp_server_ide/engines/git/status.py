"""What changed: the working tree's status against HEAD, and the name-status list of a diff between
commits, as :class:`StatusEntry` records (paths root-relative, ``/``-separated).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .refs import Refs

Change = Literal["MODIFICATION", "ADDITION", "DELETION", "MOVED", "UNTRACKED", "CONFLICT"]


@dataclass
class StatusEntry:
    path: str
    type: Change
    staged: bool
    unstaged: bool
    old_path: str | None = None


class Status(Refs):
    """The working tree's changes."""

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

    def staged_summary(self) -> tuple[list[StatusEntry], list[StatusEntry], list[StatusEntry]]:
        """(staged, unstaged or untracked, conflicted) entries of the current status."""
        entries = self.status()
        conflicts = [e for e in entries if e.type == "CONFLICT"]
        staged = [e for e in entries if e.staged and e.type != "CONFLICT"]
        other = [e for e in entries if e.unstaged and not e.staged and e.type != "CONFLICT"]
        return staged, other, conflicts


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


def parse_name_status(tokens: list[bytes]) -> list[StatusEntry]:
    """``--name-status -z`` output split on NUL into entries (a change between commits: staged)."""
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

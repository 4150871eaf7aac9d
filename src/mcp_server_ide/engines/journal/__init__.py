"""The change journal: every change this server makes to a file, enough to restore it.

Kept per workspace in its state folder (never inside the workspace): a JSON-lines log of entries
(id, time, tool, arguments, path, hashes before and after), a content-addressed store of the bytes
before and after each change, and a JSON-lines log of checkpoints. Several servers on one workspace
share it under its lock file. The journal tools (``tools/journal.py``) are its users.

- :mod:`.service`: :class:`Journal`, the workspace service: records changes, the door to the rest.
- :mod:`.records`: what the logs hold (:class:`Entry`, :class:`Checkpoint`, :class:`FileState`), as lines.
- :mod:`.log`: the entries log and id allocation; the marks the journal's own writes carry.
- :mod:`.linelog`: a JSON-lines file several processes append to, read incrementally.
- :mod:`.blobs`: the content-addressed store of file contents.
- :mod:`.paths`: how the journal names a workspace's files and reads them now (through the sandbox).
- :mod:`.checkpoints`: checkpoints (create, keep) and files compared with one.
- :mod:`.undo`: writing old bytes back: undo entries, restore checkpoints (all or nothing).
- :mod:`.diffs`: unified diffs of journaled contents.
- :mod:`.budget`: the limits (age, count, ``MCP_IDE_JOURNAL_BUDGET`` bytes) and what fits in them.
- :mod:`.pruning`: forgetting what the limits leave out.
- :mod:`.folder`: the folder on disk, its lock file, and ``journal show|clear`` (:func:`measure`, :func:`clear`).
"""

from __future__ import annotations

from .budget import BUDGET_ENV, DEFAULT_BUDGET, parse_size
from .folder import StoreUsage, clear, journal_folder, measure
from .records import ABSENT, START, Checkpoint, Entry, FileState, iso_time
from .service import Journal

__all__ = [
    "ABSENT",
    "BUDGET_ENV",
    "DEFAULT_BUDGET",
    "START",
    "Checkpoint",
    "Entry",
    "FileState",
    "Journal",
    "StoreUsage",
    "clear",
    "iso_time",
    "journal_folder",
    "measure",
    "parse_size",
]

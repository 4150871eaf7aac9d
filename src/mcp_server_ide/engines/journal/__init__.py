"""The change journal: every change this server makes to a file, enough to restore it.

- :mod:`.service`: the :class:`Journal`, the workspace service.
- :mod:`.linelog`: a JSON-lines file that several processes append to, read incrementally.
"""

from __future__ import annotations

from .service import (
    ABSENT,
    BUDGET_ENV,
    DEFAULT_BUDGET,
    START,
    Checkpoint,
    Entry,
    FileState,
    Journal,
    StoreUsage,
    clear,
    iso_time,
    journal_folder,
    measure,
    parse_size,
)

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

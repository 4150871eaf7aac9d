"""The bounds of a recursive ``project_fs_list`` walk: how deep and how long.

A 10,000-deep chain of folders took 131 s to list (every folder below the held depth is reopened
from the root, one name at a time); a walk stops going deeper than :data:`MAX_DEPTH` folders and
stops altogether after :data:`MAX_SECONDS`, and the answer says so (``truncated`` and a ``note``).
Kept apart from the walk itself so the two change independently.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

MAX_DEPTH = 128
MAX_SECONDS = 20.0


@dataclass
class WalkBounds:
    max_depth: int = MAX_DEPTH
    seconds: float = MAX_SECONDS
    deadline: float = field(init=False)
    note: str | None = None
    """Why the walk stopped short (None: it did not)."""
    timed_out: bool = False

    def __post_init__(self) -> None:
        self.deadline = time.monotonic() + self.seconds

    def stop_here(self, depth: int) -> bool:
        """True when the walk may not list the folders ``depth`` levels below the listed folder
        (too deep, or out of time: then ``timed_out`` is set)."""
        return not (self.in_time() and self.may_enter(depth))

    def may_enter(self, depth: int) -> bool:
        """True when the walk may list the folders ``depth`` levels below the listed folder."""
        if depth > self.max_depth:
            self.note = self.note or (
                f"folders more than {self.max_depth} levels deep were not entered (list a deeper "
                "folder with dir=... to see below it)"
            )
            return False
        return True

    def in_time(self) -> bool:
        """False once the walk's time is up (and the note says so)."""
        if time.monotonic() <= self.deadline:
            return True
        self.timed_out = True
        self.note = (
            f"the walk stopped after {self.seconds:g} s (list a smaller folder with dir=..., or without "
            "recursive)"
        )
        return False

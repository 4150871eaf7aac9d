"""The editor model: open files, the active file, a selection per file, and breakpoints.

The editor tools talk to an editor backend (``backend``: the interface). ``service`` holds the
workspace's editor service, which serves the headless model unless a live editor is attached.
The headless model (``headless``) keeps positions in a state file shared by processes under a
lock (``state``), keeps each file's selection right (``tracking``), follows this server's own
edits through a line diff (``linemap``), and holds the breakpoints (``breakpoints``).
``positions`` has the values (``Position``, ``Selection``) and the arithmetic on them.
"""

from .positions import END_OF_LINE, Position, Selection
from .service import editor_for, editor_status

__all__ = ["END_OF_LINE", "Position", "Selection", "editor_for", "editor_status"]

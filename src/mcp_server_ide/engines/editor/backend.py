"""The editor backend interface: what the editor and debug tools need from an editor.

Two implementations stand behind it: the headless model (:mod:`.headless`) and, when VS Code
is connected, a bridge over the live editor; :mod:`.service` picks one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from ..failures import ToolFailure
from .breakpoints import Breakpoint
from .positions import Selection


@dataclass(frozen=True)
class EditorState:
    """The active file (None when no file is open) and the open files, in the order they were opened.

    A live editor also says which open files have unsaved changes, which are visible and their
    language ids; the headless model leaves those empty (it has no buffers)."""

    active: Path | None
    open: list[Path]
    unsaved: list[Path] = field(default_factory=list)
    visible: list[Path] = field(default_factory=list)
    languages: dict[Path, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ActiveDocument:
    """The active file as it is now: its path, text (read fresh) and selection."""

    path: Path
    text: str
    """The text with line endings as :func:`textio.read_text` gives them (``\\n`` unless mixed)."""
    selection: Selection
    hash: str


@runtime_checkable
class EditorBackend(Protocol):
    """What the editor and debug tools need from an editor.

    Paths given to a backend are already checked by the sandbox (absolute, real, inside the
    workspace; writes also checked against protected paths). Lines and characters are 0-based.
    Failures the caller can act on are raised as ``ToolFailure``.
    """

    def state(self) -> EditorState:
        """The active file and the open files, in the order they were opened."""
        ...

    def open(
        self, path: Path, selection: Selection | None = None, select_text: str | None = None
    ) -> Selection:
        """Open ``path`` (a text file) and make it active; set the selection when one is given
        (``END_OF_LINE`` as a character means the end of that line), or select the only
        occurrence of ``select_text``. Returns the selection the file now has."""
        ...

    def close(self, path: Path | None = None) -> bool:
        """Close ``path`` (the active file when None); True when it was open."""
        ...

    def active(self) -> ActiveDocument | None:
        """The active file, read now, or None when no file is open."""
        ...

    def replace_selection(self, text: str, expected_hash: str | None = None) -> Selection:
        """Replace the active file's selection with ``text`` (insert at the cursor when the
        selection is empty); the cursor ends after the new text. Returns the new selection."""
        ...

    def replace_text(self, text: str, expected_hash: str | None = None) -> None:
        """Replace the whole text of the active file."""
        ...

    def breakpoints(self) -> list[Breakpoint]: ...

    def toggle_breakpoint(self, path: Path, line: int) -> bool:
        """Add a breakpoint at ``line`` (0-based) of ``path``, or remove the one there. True when added."""
        ...

    def clear_breakpoints(self) -> int: ...


def no_active_editor() -> ToolFailure:
    """The failure a backend raises when a call needs an active file and none is open."""
    return ToolFailure(
        "no active editor: no file is open in the editor (open one with open_file_in_editor first)",
        kind="not_found",
    )

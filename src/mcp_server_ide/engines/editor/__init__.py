"""The editor model (moved into a package; split into modules by the next commit)."""

from .headless import END_OF_LINE, Position, Selection, editor_for, editor_status

__all__ = ["END_OF_LINE", "Position", "Selection", "editor_for", "editor_status"]

"""Parameter types several tool modules share (one description each, as ``tools/list`` shows it)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

RELATIVE = "Workspace-relative."

PathInProject = Annotated[str, Field(description=RELATIVE)]
"""A file or folder path relative to the workspace root (``/`` or the host's separator)."""

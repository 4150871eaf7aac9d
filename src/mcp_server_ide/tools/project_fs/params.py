"""The parameters the ``project_fs_*`` tools share."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..params import PathInProject

SandboxPath = PathInProject
ExpectedHash = Annotated[
    str | None,
    Field(description="The `hash` a read returned: refused if the file changed since."),
]

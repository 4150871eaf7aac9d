"""The parameters the ``project_fs_*`` tools share."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

SandboxPath = Annotated[
    str,
    Field(
        description="Path relative to the workspace root, e.g. 'src/app.ts' ('/workspace/src/app.ts' also works)."
    ),
]
ExpectedHash = Annotated[
    str | None,
    Field(
        description="Optional SHA-256 of the file's current bytes (the `hash` project_fs_read returned). "
        "When given and the file has changed since, nothing is written."
    ),
]

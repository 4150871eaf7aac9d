"""Reading a workspace file's bytes (capped) and its text."""

from __future__ import annotations

import os
import stat

from .. import sandbox
from ..failures import ToolFailure
from ..sandbox import Resolved
from .textfile import MAX_TEXT_BYTES, TextFile, decode


def read_bytes(resolved: Resolved, limit: int | None = MAX_TEXT_BYTES) -> tuple[bytes, int]:
    """The file's bytes (at most ``limit``, refusing bigger files) and its mode."""
    fd = sandbox.open_regular(resolved)
    try:
        st = os.fstat(fd)
        if limit is not None and st.st_size > limit:
            raise ToolFailure(
                f"refused: {resolved.display_rel!r} is {st.st_size} bytes, over the {limit}-byte limit "
                "(rule: whole-file reads are capped; read a slice with project_fs_read startLine/endLine)",
                kind="too_large",
            )
        chunks: list[bytes] = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks), stat.S_IMODE(st.st_mode)
    finally:
        os.close(fd)


def read_text(resolved: Resolved) -> TextFile:
    raw, mode = read_bytes(resolved)
    return decode(raw, mode, resolved.display_rel)

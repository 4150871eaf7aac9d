"""Reading and writing text files without damaging them.

- Encodings: BOMs (UTF-8, UTF-16, UTF-32), UTF-8, else the Windows-1252 / Latin-1 code page,
  which round-trips every byte. Text that the file's encoding cannot hold is refused, never
  re-encoded lossily. Files with NUL bytes (and no UTF-16/32 BOM) are binary and refused.
- Line endings: a file whose every line break is CRLF (or CR) is edited in ``\\n`` form and
  written back with its own endings; a file with mixed endings is edited as it is.
- Writes are atomic: a temp file in the same folder, fsync, rename (or link, for "create only
  if absent"), fsync of the folder; the file's mode is kept. kill -9 at any moment leaves the
  old bytes or the new ones. Our temp files are never listed; stale ones are swept by a write
  in their folder and at start-up (never by a listing: reads do not delete).
- Every write can be guarded by the expected SHA-256 of the current bytes, is serialised per
  file within the process, and is journaled and announced through :mod:`..changes`.

Which module holds what:

- :mod:`.textfile`: :class:`TextFile`, :func:`decode` / :func:`encode` (encodings, BOMs, line
  endings), line counts, indentation, the content hash.
- :mod:`.reading`: a workspace file's bytes (capped) and text.
- :mod:`.atomic`: :func:`atomic_write`, relative to a folder opened beneath the root.
- :mod:`.modes`: a new file's mode (the process umask, read without changing it).
- :mod:`.leftovers`: sweeping the temp files killed writes left behind.
- :mod:`.writing`: the guarded, journaled write, delete and edit of a workspace file.
- :mod:`.buffers`: an editor's unsaved buffers (VS Code): reads that see them, writes into them.
"""

from __future__ import annotations

from .atomic import atomic_write
from .buffers import EDITED, UNSAVED, Buffers, current_bytes, read_current, with_buffer
from .leftovers import sweep_leftovers
from .reading import read_bytes, read_text
from .textfile import (
    BINARY_PROBE,
    BOMS,
    MAX_TEXT_BYTES,
    TextFile,
    content_hash,
    count_lines,
    decode,
    encode,
    indentation,
    normalise_input,
)
from .writing import check_expected, delete_file, edit_text, file_lock, refuse_truncated, write_file

__all__ = [
    "BINARY_PROBE",
    "BOMS",
    "EDITED",
    "MAX_TEXT_BYTES",
    "UNSAVED",
    "Buffers",
    "TextFile",
    "atomic_write",
    "check_expected",
    "content_hash",
    "count_lines",
    "current_bytes",
    "decode",
    "delete_file",
    "edit_text",
    "encode",
    "file_lock",
    "indentation",
    "normalise_input",
    "read_bytes",
    "read_current",
    "read_text",
    "refuse_truncated",
    "sweep_leftovers",
    "with_buffer",
    "write_file",
]

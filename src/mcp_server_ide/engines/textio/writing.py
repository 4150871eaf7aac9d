"""Guarded, journaled writes of workspace files.

Every write can be guarded by the expected SHA-256 of the current bytes, is held to the workspace's
disk quota (:mod:`..quota`), is serialised per file
within the process (:func:`file_lock`), refuses text carrying a truncated read's marker, and is
journaled and announced through :mod:`..changes`. The bytes land by :func:`.atomic.atomic_write`.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable
from pathlib import Path

from ...workspace import Workspace
from .. import quota, sandbox
from ..failures import ToolFailure
from ..sandbox import Resolved
from .atomic import atomic_write
from .buffers import into_buffer, read_current
from .textfile import TextFile, content_hash, encode

SHORT_HASH_MIN = 16
"""The shortest ``expectedHash`` prefix taken for the whole hash (the MCP door sends 16 digits)."""

_locks_guard = threading.Lock()
_locks: dict[str, threading.Lock] = {}


def file_lock(path: Path) -> threading.Lock:
    """One lock per file path in this process: check-then-write is atomic among our own callers."""
    key = str(path)
    with _locks_guard:
        lock = _locks.get(key)
        if lock is None:
            lock = _locks[key] = threading.Lock()
        return lock


def check_expected(current: bytes | None, expected_hash: str | None, resolved: Resolved) -> None:
    """Refuse when the caller's expected content hash is not the file's current one (or a prefix of it of
    at least :data:`SHORT_HASH_MIN` digits)."""
    if not expected_hash:
        return
    now = content_hash(current) if current is not None else "absent"
    expected = expected_hash.strip().lower()
    if expected != now and not (len(expected) >= SHORT_HASH_MIN and now.startswith(expected)):
        raise ToolFailure(
            f"conflict: {resolved.display_rel!r} changed since it was read (expected hash "
            f"{expected_hash[:12]}…, it is now {now[:12]}…; rule: an edit against a stale hash changes "
            "nothing). Read the file again and redo the edit.",
            kind="conflict",
        )


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _map_os_error(exc: OSError, resolved: Resolved) -> ToolFailure:
    import errno

    if exc.errno == errno.ENOSPC:
        return ToolFailure(
            f"failed: no space left on the device while writing {resolved.display_rel!r}; the file is unchanged",
            kind="unavailable",
        )
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return ToolFailure(
            f"permission denied writing {resolved.display_rel!r}; the file is unchanged", "refused"
        )
    if exc.errno == errno.EEXIST:
        return ToolFailure(
            f"refused: {resolved.display_rel!r} already exists (rule: create never overwrites; "
            "use rewrite_file_content to replace it)",
            kind="conflict",
        )
    if exc.errno == errno.ENOENT:
        return ToolFailure(
            f"not found: the folder of {resolved.display_rel!r} does not exist", kind="not_found"
        )
    return ToolFailure(
        f"failed writing {resolved.display_rel!r}: {exc.strerror}; the file is unchanged", "unavailable"
    )


def write_file(
    ws: Workspace,
    resolved: Resolved,
    data: bytes,
    *,
    before: bytes | None,
    mode: int | None,
    exclusive: bool = False,
    make_parents: bool = False,
) -> None:
    """Write bytes atomically, then journal and announce the change. Callers hold ``file_lock``.

    A file with unsaved changes in VS Code is not written: a write made from that buffer's text goes
    into the buffer instead (journaled with ``unsaved``), any other is refused (:mod:`.buffers`)."""
    from .. import changes

    if into_buffer(ws, resolved, data, before):
        changes.publish(
            ws,
            changes.FileChange(rel=resolved.rel, path=resolved.path, before=before, after=data, unsaved=True),
        )
        return
    changes.check_write(ws, resolved.path, resolved.rel)
    quota.reserve(ws, resolved.display_rel, len(before) if before is not None else 0, len(data))
    made: list[str] = []
    try:
        atomic_write(
            resolved.path,
            data,
            mode,
            exclusive=exclusive,
            root=resolved.root,
            make_parents=make_parents,
            made=made,
        )
    except BaseException as exc:
        # A write that failed (a full disk...) takes back the folders it made on the way: only
        # those, deepest first, and only while they are empty (someone may have written there since).
        for folder in reversed(made):
            sandbox.remove_empty_folder(resolved.root, folder)
        if isinstance(exc, OSError):
            raise _map_os_error(exc, resolved) from None
        raise
    change = changes.FileChange(
        rel=resolved.rel, path=resolved.path, before=before, after=data, made_folders=tuple(made)
    )
    changes.publish(ws, change)


def delete_file(ws: Workspace, resolved: Resolved, *, before: bytes | None) -> None:
    """Remove a file (never a folder), then journal and announce it. Callers hold ``file_lock``.

    ``unlink`` is atomic: the name is gone or still there. The bytes stay in the journal, so
    an undo re-creates the file byte for byte.
    """
    from .. import changes

    if resolved.path.is_dir() and not resolved.path.is_symlink():
        raise sandbox.is_a_directory(resolved)
    changes.check_write(ws, resolved.path, resolved.rel)
    folder, _, name = resolved.rel.rpartition("/")
    try:
        # Beneath the root without following links: a folder swapped for a link out meanwhile
        # cannot make this remove a file outside.
        dir_fd = sandbox.open_folder_beneath(resolved.root, folder)
        try:
            os.unlink(name, dir_fd=dir_fd)
        finally:
            os.close(dir_fd)
    except OSError as exc:
        raise _map_os_error(exc, resolved) from None
    _fsync_dir(resolved.path.parent)
    quota.released(ws, len(before) if before is not None else 0)
    changes.publish(ws, changes.FileChange(rel=resolved.rel, path=resolved.path, before=before, after=None))


TRUNCATION_MARKER = re.compile(r"…\[\d+ bytes truncated\]…")
"""What a capped read (``project_fs_read`` over 200 KB) puts where it left text out."""


def refuse_truncated(new_text: str, old_text: str, resolved: Resolved) -> None:
    """Refuse new text carrying a truncated read's marker that the file itself does not hold:
    writing it back would replace the left-out middle of the file with the marker (SECURITY.md §7)."""
    for found in TRUNCATION_MARKER.finditer(new_text):
        if found.group(0) not in old_text:
            raise ToolFailure(
                f"refused: the new text for {resolved.display_rel!r} contains the marker {found.group(0)!r} "
                "of a truncated read (rule: truncated text is never written back). Read the omitted lines with "
                "project_fs_read startLine/endLine and change only the region you mean.",
                kind="refused",
            )


def edit_text(
    ws: Workspace,
    resolved: Resolved,
    transform: Callable[[TextFile], str],
    *,
    expected_hash: str | None = None,
) -> tuple[TextFile, bytes]:
    """Read, transform and write back a text file under its lock.

    ``transform(text_file) -> str`` returns the new text in the file's normalised newline
    form; raising ``ToolFailure`` inside it changes nothing. Returns the old file and new bytes.
    """
    with file_lock(resolved.path):
        old = read_current(ws, resolved)  # an unsaved buffer in VS Code is what gets edited
        check_expected(old.raw, expected_hash, resolved)
        new_text = transform(old)
        refuse_truncated(new_text, old.text, resolved)
        data = encode(new_text, old, resolved.display_rel)
        if data != old.raw:
            write_file(ws, resolved, data, before=old.raw, mode=old.mode)
        return old, data

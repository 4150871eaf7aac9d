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
  file within the process, and is journaled and announced through :mod:`.changes`.
"""

from __future__ import annotations

import codecs
import contextlib
import functools
import hashlib
import os
import re
import secrets
import stat
import threading
from dataclasses import dataclass
from pathlib import Path

from ..workspace import Workspace
from . import sandbox
from .failures import ToolFailure
from .sandbox import Resolved

MAX_TEXT_BYTES = 16 * 1024 * 1024
BINARY_PROBE = 8192

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


@dataclass(frozen=True)
class TextFile:
    """A decoded text file and everything needed to write it back the same way."""

    text: str
    """The content with line endings normalised to ``\\n`` when the file uses one kind of ending."""
    encoding: str
    bom: bytes
    newline: str | None
    """``"\\r\\n"``/``"\\r"`` when every break in the file is that one, ``"\\n"`` for LF files,
    None for mixed endings (then ``text`` keeps them as they are)."""
    raw: bytes
    mode: int

    @property
    def hash(self) -> str:
        return content_hash(self.raw)

    @property
    def line_count(self) -> int:
        """How many lines ``text`` has (a last line without a break counts; an empty file has none)."""
        return count_lines(self.text)

    @property
    def encoding_label(self) -> str:
        return self.encoding + ("-bom" if self.bom else "")


def count_lines(text: str) -> int:
    """Lines in ``text``: one per ``\\n``, plus a last line without one; an empty text has none."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def indentation(text: str) -> tuple[int, bool]:
    """How ``text`` indents: (the indent width in columns, True when lines start with tabs).

    The smallest of 2, 4 or 8 spaces that starts a line among the first 400 (4 when none does);
    tabs when more lines start with a tab than with spaces."""
    lines = text.split("\n", 400)[:400]
    tabs = sum(1 for ln in lines if ln.startswith("\t"))
    sizes = [len(ln) - len(ln.lstrip(" ")) for ln in lines if ln.startswith(" ") and ln.strip()]
    size = min((n for n in sizes if n in (2, 4, 8)), default=4)
    return size, tabs > len(sizes)


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


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
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks), stat.S_IMODE(st.st_mode)
    finally:
        os.close(fd)


def decode(raw: bytes, mode: int = 0o644, name: str = "file") -> TextFile:
    """Decode bytes as text, keeping what is needed to encode them back identically."""
    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            try:
                text = raw[len(bom) :].decode(encoding, errors="strict")
            except UnicodeDecodeError:
                break  # it only starts like a BOM: read it as the bytes it is, below
            return _with_newlines(text, encoding, bom, raw, mode)
    if b"\x00" in raw[:BINARY_PROBE]:
        raise ToolFailure(
            f"refused: {name!r} is a binary file ({len(raw)} bytes; rule: text tools read and write text only)",
            kind="refused",
        )
    for encoding in ("utf-8", "cp1252", "latin-1"):
        try:
            text = raw.decode(encoding, errors="strict")
        except UnicodeDecodeError:
            continue
        return _with_newlines(text, encoding, b"", raw, mode)
    raise AssertionError("latin-1 decodes every byte string")


def read_text(resolved: Resolved) -> TextFile:
    raw, mode = read_bytes(resolved)
    return decode(raw, mode, resolved.display_rel)


def encode(text: str, like: TextFile | None, name: str = "file") -> bytes:
    """Encode ``text`` the way ``like`` was encoded (UTF-8 and LF for a new file)."""
    if like is None:
        return text.encode("utf-8")
    if like.newline in ("\r\n", "\r"):
        text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", like.newline)
    try:
        return like.bom + text.encode(like.encoding, errors="strict")
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start : exc.end]
        raise ToolFailure(
            f"refused: the new text has {bad!r}, which {name!r}'s encoding ({like.encoding}) cannot hold "
            "(rule: a file is never re-encoded lossily; leave those characters out, or convert the file "
            "to UTF-8 first)",
            kind="refused",
        ) from None


def normalise_input(text: str, like: TextFile | None) -> str:
    """Caller text in the same newline form as ``like.text`` (``\\n`` unless the file has mixed endings)."""
    if like is not None and like.newline is None:
        return text
    return text.replace("\r\n", "\n")


_ASCII_NEWLINES = frozenset({"utf-8", "cp1252", "latin-1"})
"""Encodings in which byte 0x0D is always CR and 0x0A always LF: the raw bytes tell the endings."""


def _with_newlines(text: str, encoding: str, bom: bytes, raw: bytes, mode: int) -> TextFile:
    if encoding in _ASCII_NEWLINES and b"\r" not in raw:  # the common case: an LF file, one memchr
        return TextFile(text, encoding, bom, "\n", raw, mode)
    crlf = text.count("\r\n")
    cr = text.count("\r") - crlf
    lf = text.count("\n") - crlf
    kinds = (crlf > 0) + (cr > 0) + (lf > 0)
    if kinds > 1:
        return TextFile(text, encoding, bom, None, raw, mode)
    if crlf:
        return TextFile(text.replace("\r\n", "\n"), encoding, bom, "\r\n", raw, mode)
    if cr:
        return TextFile(text.replace("\r", "\n"), encoding, bom, "\r", raw, mode)
    return TextFile(text, encoding, bom, "\n", raw, mode)


# ----------------------------------------------------------------------------- writing

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
    """Refuse when the caller's expected content hash is not the file's current one."""
    if not expected_hash:
        return
    now = content_hash(current) if current is not None else "absent"
    if expected_hash.strip().lower() != now:
        raise ToolFailure(
            f"conflict: {resolved.display_rel!r} changed since it was read (expected hash "
            f"{expected_hash[:12]}…, it is now {now[:12]}…; rule: an edit against a stale hash changes "
            "nothing). Read the file again and redo the edit.",
            kind="conflict",
        )


def atomic_write(
    path: Path,
    data: bytes,
    mode: int | None = None,
    *,
    exclusive: bool = False,
    root: Path | None = None,
    make_parents: bool = False,
    made: list[str] | None = None,
) -> None:
    """Write ``data`` to ``path`` so that any crash leaves the old bytes or the new ones.

    ``exclusive`` creates the file only if it does not exist (a hard link of the finished
    temp file, which fails on an existing name, a symlink included). With ``root`` (workspace
    files), the folder is reached beneath the root without following a symlink and every step
    happens relative to it, so a folder swapped for a link out meanwhile cannot redirect the write;
    ``make_parents`` then creates missing folders the same way (and lists them in ``made``).
    """
    if root is not None:
        rel_folder = path.parent.relative_to(root).as_posix()
        dir_fd = sandbox.open_folder_beneath(
            root, "" if rel_folder == "." else rel_folder, create=make_parents, made=made
        )
    else:
        dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        _write_beneath(dir_fd, path.name, data, mode, exclusive)
    finally:
        os.close(dir_fd)


def _write_beneath(dir_fd: int, name: str, data: bytes, mode: int | None, exclusive: bool) -> None:
    """:func:`atomic_write` relative to an open folder: temp file, fsync, rename (or link), fsync."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    folder_before = _folder_stamp(dir_fd)
    for _ in range(100):
        # Named as tempfile.mkstemp names them (the sweep and the listings know the suffix).
        tmp = f".{name[:100]}.{secrets.token_hex(4)}{sandbox.TEMP_MARK}"
        try:
            fd = os.open(tmp, flags, 0o600, dir_fd=dir_fd)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError("no free temporary name")
    try:
        try:
            if not exclusive:
                _keep_owner(fd, name, dir_fd)
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fchmod(fd, mode if mode is not None else _default_mode())
            os.fsync(fd)
        finally:
            os.close(fd)
        if exclusive:
            os.link(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
            os.unlink(tmp, dir_fd=dir_fd)
        else:
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    with contextlib.suppress(OSError):
        folder_fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=dir_fd)
        try:
            os.fsync(folder_fd)
            _sweep_after_write(folder_fd, folder_before)
        finally:
            os.close(folder_fd)


def _keep_owner(fd: int, path: Path | str, dir_fd: int | None = None) -> None:
    """Give the temp file the owner of the file it replaces (a server running as root must not
    hand the user's files to root). Without the right to, the file keeps ours, as any editor's would."""
    try:
        st = os.stat(path, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return
    if (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
        with contextlib.suppress(OSError):
            os.fchown(fd, st.st_uid, st.st_gid)


# ----------------------------------------------------------------------------- leftovers
#
# Sweeping deletes files, so only what may change the workspace does it: a write (in the folder it
# writes) and the server's start-up (not under --read-only). Listings only leave our temp files out.

_MAX_SWEPT_FOLDERS = 4096
_swept: dict[tuple[int, int], int] = {}
"""Folder (device, inode) -> its mtime (ns) right after this process last wrote and swept there."""


def sweep_temp_names(dir_fd: int, names: list[str]) -> int:
    """Remove our temp files left behind by a killed process, by name inside an open folder.

    Ours live for milliseconds, so one older than a minute is a leftover. Each name is looked at
    and removed relative to ``dir_fd`` without following links: a folder swapped for a link
    meanwhile cannot turn the sweep on anything outside. Returns how many were removed."""
    removed = 0
    cutoff = _now() - 60
    for name in names:
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if stat.S_ISREG(st.st_mode) and st.st_mtime < cutoff:
                os.unlink(name, dir_fd=dir_fd)
                removed += 1
        except OSError:
            pass
    return removed


def sweep_leftovers(root: Path, timeout: float = 30.0) -> int:
    """Remove the temp files killed writes left anywhere under ``root`` (start-up; never under
    ``--read-only``). Ripgrep finds them; each is removed by :func:`sweep_temp_names` inside its
    folder reached beneath the root without following links. Returns how many were removed."""
    from . import search

    folders: dict[str, list[str]] = {}
    for rel in search.list_temp_files(root, timeout=timeout):
        folder, _, name = rel.rpartition("/")
        folders.setdefault(folder, []).append(name)
    removed = 0
    for folder, names in folders.items():
        try:
            dir_fd = sandbox.open_folder_beneath(root, folder)
        except OSError:
            continue
        try:
            removed += sweep_temp_names(dir_fd, names)
        finally:
            os.close(dir_fd)
    return removed


def _folder_stamp(dir_fd: int) -> tuple[tuple[int, int], int] | None:
    try:
        st = os.fstat(dir_fd)
    except OSError:
        return None
    return (st.st_dev, st.st_ino), st.st_mtime_ns


def _sweep_after_write(folder_fd: int, before: tuple[tuple[int, int], int] | None) -> None:
    """After a write, remove stale temp leftovers from its folder (``folder_fd``, readable).

    The folder is scanned only when it changed since this process last wrote there (``before``,
    its stamp ahead of this write, differs from the one kept then): repeated writes in one folder
    cost an ``fstat``, not a scan."""
    if before is None:
        return
    key, mtime = before
    if _swept.get(key) != mtime:
        with os.scandir(folder_fd) as entries:
            names = [e.name for e in entries if sandbox.is_temp_name(e.name)]
        sweep_temp_names(folder_fd, names)
    after = _folder_stamp(folder_fd)
    if after is not None:
        if len(_swept) >= _MAX_SWEPT_FOLDERS:
            _swept.clear()
        _swept[key] = after[1]


def _now() -> float:
    import time

    return time.time()


def _default_mode() -> int:
    """The mode of a new file: ``0o666`` less the process umask (as ``open`` would give it)."""
    return 0o666 & ~process_umask()


@functools.cache
def process_umask() -> int:
    """The process umask, read once without changing it (Linux's ``/proc/self/status`` ``Umask:``).

    Setting it to read it back is process-wide: a ``mkdir`` or child process of another thread in
    that window would get its mode. Where ``/proc`` does not say, it is probed once with the most
    private mask (``0o077``), so anything caught in that window is only more private than asked."""
    with contextlib.suppress(OSError, ValueError, IndexError), open("/proc/self/status", "rb") as status:
        for line in status:
            if line.startswith(b"Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


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
    """Write bytes atomically, then journal and announce the change. Callers hold ``file_lock``."""
    from . import changes

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
    except OSError as exc:
        raise _map_os_error(exc, resolved) from None
    change = changes.FileChange(
        rel=resolved.rel, path=resolved.path, before=before, after=data, made_folders=tuple(made)
    )
    changes.publish(ws, change)


def delete_file(ws: Workspace, resolved: Resolved, *, before: bytes | None) -> None:
    """Remove a file (never a folder), then journal and announce it. Callers hold ``file_lock``.

    ``unlink`` is atomic: the name is gone or still there. The bytes stay in the journal, so
    an undo re-creates the file byte for byte.
    """
    from . import changes

    if resolved.path.is_dir() and not resolved.path.is_symlink():
        raise sandbox.is_a_directory(resolved)
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
    transform: object,
    *,
    expected_hash: str | None = None,
) -> tuple[TextFile, bytes]:
    """Read, transform and write back a text file under its lock.

    ``transform(text_file) -> str`` returns the new text in the file's normalised newline
    form; raising ``ToolFailure`` inside it changes nothing. Returns the old file and new bytes.
    """
    with file_lock(resolved.path):
        old = read_text(resolved)
        check_expected(old.raw, expected_hash, resolved)
        new_text = transform(old)  # type: ignore[operator]
        refuse_truncated(new_text, old.text, resolved)
        data = encode(new_text, old, resolved.display_rel)
        if data != old.raw:
            write_file(ws, resolved, data, before=old.raw, mode=old.mode)
        return old, data

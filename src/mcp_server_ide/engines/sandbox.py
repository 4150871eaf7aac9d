"""The path sandbox: every path a caller gives passes through here.

Rules (SECURITY.md §1, §2):
- A path is relative to the workspace root, or absolute inside it; ``/workspace/...`` (seed 001)
  and ``/`` (seed 000's "use / for root") name the root.
- It is resolved with every symlink followed, then checked by path components (never string
  prefixes) to be inside the root. Anything else is refused with one text, whether or not the
  target exists, and never echoes a resolved host path.
- Reads open only regular files, without blocking (FIFOs and devices are refused).
- Writes are refused under protected paths (``.git`` and ``node_modules`` at any depth, plus
  configured root-relative paths such as ``src/brand``), checked on the lexical and on the
  resolved path, per component, case-insensitively.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import stat
from dataclasses import dataclass
from pathlib import Path

from ..workspace import DEFAULT_PROTECTED, Workspace
from .failures import ToolFailure

SEED_ROOT = "/workspace"
TEMP_MARK = ".mcp-ide.tmp"
PATH_MAX = 4096
NAME_MAX = 255


@dataclass(frozen=True)
class Resolved:
    """A path inside the workspace: ``path`` is absolute and real, ``rel`` is POSIX-style from the root."""

    path: Path
    rel: str
    root: Path
    lexical: str

    @property
    def is_root(self) -> bool:
        return self.rel == ""

    @property
    def display_rel(self) -> str:
        """The relative path in the host's own separators, as the seed's ``relativePath``."""
        return self.rel.replace("/", os.sep) if self.rel else "."


def outside(user_path: str) -> ToolFailure:
    shown = user_path if len(user_path) <= 200 else user_path[:200] + "…"
    return ToolFailure(
        f"refused: {shown!r} is outside the workspace (rule: paths must stay inside the workspace root, "
        "symlinks included; give a path relative to the root such as 'src/app.py')",
        kind="refused",
    )


def resolve(ws: Workspace, user_path: str) -> Resolved:
    """Resolve a caller's path inside ``ws``, or raise a ``ToolFailure`` naming the rule."""
    if not isinstance(user_path, str):
        raise ToolFailure("invalid path: expected a string")
    if "\x00" in user_path:
        raise ToolFailure("invalid path: it contains a NUL byte (rule: paths are plain text; remove the NUL)")
    try:
        os.fsencode(user_path)
    except UnicodeError:
        raise ToolFailure(
            "invalid path: it holds a character no file name can (a lone UTF-16 surrogate) "
            "(rule: paths are plain text; send the name as valid Unicode)"
        ) from None
    text = user_path.replace("\\", "/") if os.sep == "/" else user_path
    _check_length(text)
    root, rel_in = _pick_root(ws, text, user_path)
    lexical = posixpath.normpath(rel_in) if rel_in else ""
    if lexical in (".", ""):
        lexical = ""
    if lexical == ".." or lexical.startswith("../"):
        raise outside(user_path)
    candidate = os.path.join(root, rel_in) if rel_in else str(root)
    real = Path(_realpath(candidate))
    if not _inside(real, root):
        raise outside(user_path)
    _check_length(str(real))
    rel = real.relative_to(root).as_posix()
    return Resolved(path=real, rel="" if rel == "." else rel, root=root, lexical=lexical)


def _realpath(path: str) -> str:
    """``os.path.realpath``, which raises when a link vanishes while it is being read (a race)."""
    for _ in range(3):
        try:
            return os.path.realpath(path)
        except OSError:
            continue  # a link changed under us: look again
    raise ToolFailure(
        "refused: the path kept changing while it was being resolved (rule: a path is checked as it is "
        "at the moment of the call); try again",
        kind="conflict",
    )


def _check_length(path: str) -> None:
    """Refuse names the OS cannot hold (else every later call fails with ENAMETOOLONG)."""
    if len(path.encode("utf-8", "surrogatepass")) >= PATH_MAX:
        raise ToolFailure(
            f"invalid path: it is {len(path)} characters long (rule: paths are shorter than {PATH_MAX} bytes; "
            "give a shorter path)"
        )
    if any(len(part.encode("utf-8", "surrogatepass")) > NAME_MAX for part in path.split("/")):
        raise ToolFailure(
            f"invalid path: a name in it is over {NAME_MAX} bytes (rule: file and folder names are at most "
            f"{NAME_MAX} bytes; give a shorter name)"
        )


def resolve_for_write(ws: Workspace, user_path: str) -> Resolved:
    """Resolve a path for writing: also refuses protected paths and read-only workspaces."""
    if ws.policy.read_only:
        raise ToolFailure(
            "refused: the server runs with --read-only (rule: no tool may change the workspace); "
            "restart it without --read-only to edit",
            kind="refused",
        )
    resolved = resolve(ws, user_path)
    if resolved.is_root:
        raise ToolFailure("invalid path: the workspace root is a folder, not a file; name a file inside it")
    for candidate in (resolved.lexical, resolved.rel):
        hit = protected_match(candidate, tuple(ws.policy.protected))
        if hit is not None:
            raise ToolFailure(
                f"refused: {resolved.rel!r} is under the protected path {hit!r} "
                "(rule: protected paths are never written by tools; change it by hand if you must)",
                kind="refused",
            )
    return resolved


def protected_match(rel: str, configured: tuple[str, ...]) -> str | None:
    """The protected path that ``rel`` falls under, or None. Case-insensitive, by components."""
    parts = [p.casefold() for p in rel.split("/") if p and p != "."]
    for name in DEFAULT_PROTECTED:
        if name.casefold() in parts:
            return name
    for entry in configured:
        prefix = [p.casefold() for p in entry.replace("\\", "/").strip("/").split("/") if p and p != "."]
        if prefix and parts[: len(prefix)] == prefix:
            return entry.strip("/")
    return None


_DIR_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_CLOEXEC | os.O_NOFOLLOW


def open_folder_beneath(
    root: Path, rel_folder: str, *, create: bool = False, made: list[str] | None = None
) -> int:
    """A descriptor of ``rel_folder`` (POSIX, relative to ``root``) reached one name at a time,
    never following a symlink. :func:`resolve` checked the path, but a folder on it can be swapped
    for a link out before the file is opened (a race another process can win); walking with
    ``O_NOFOLLOW`` then fails (ELOOP/ENOTDIR) instead of leading outside. With ``create``, missing
    folders are made on the way, each one opened the same way; ``made`` collects the ones this call
    made (root-relative, parents first), so undoing a created file can take them away again."""
    fd = os.open(root, _DIR_FLAGS)
    walked: list[str] = []
    try:
        for part in rel_folder.split("/"):
            if part in ("", "."):
                continue
            walked.append(part)
            try:
                nfd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(part, dir_fd=fd)
                    _owner_of_parent(part, fd)
                    if made is not None:
                        made.append("/".join(walked))
                except FileExistsError:
                    pass
                nfd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = nfd
    except BaseException:
        os.close(fd)
        raise
    return fd


def _owner_of_parent(name: str, parent_fd: int) -> None:
    """Give a folder we just made the owner of its parent (a server running as root must not hand
    the user's folders, or a hosted project's, to root). Without the right to, it stays ours."""
    try:
        st = os.fstat(parent_fd)
    except OSError:
        return
    if (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
        with contextlib.suppress(OSError):
            os.chown(name, st.st_uid, st.st_gid, dir_fd=parent_fd, follow_symlinks=False)


def remove_empty_folder(root: Path, rel_folder: str) -> bool:
    """Remove the folder ``rel_folder`` (POSIX, beneath ``root``) if it is empty; its parent is reached
    as :func:`open_folder_beneath` reaches it. True when it was removed; a folder that holds anything,
    is gone, or is not a folder is left alone."""
    parent, _, name = rel_folder.rpartition("/")
    if not name or name in (".", ".."):
        return False
    try:
        parent_fd = open_folder_beneath(root, parent)
    except OSError:
        return False
    try:
        os.rmdir(name, dir_fd=parent_fd)
        return True
    except OSError:
        return False
    finally:
        os.close(parent_fd)


def open_listing(root: Path, rel_folder: str) -> int:
    """A readable descriptor of a folder beneath ``root`` for ``os.scandir`` (reached as
    :func:`open_folder_beneath` reaches it). The caller closes it."""
    folder_fd = open_folder_beneath(root, rel_folder)
    try:
        return os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=folder_fd)
    finally:
        os.close(folder_fd)


def open_regular(resolved: Resolved) -> int:
    """Open a regular file for reading without ever blocking; refuse FIFOs, devices and sockets.

    The file is opened beneath the root one name at a time (:func:`open_folder_beneath`), so a
    folder swapped for a symlink after :func:`resolve` cannot lead the read outside."""
    if resolved.is_root:
        raise is_a_directory(resolved)
    folder, _, name = resolved.rel.rpartition("/")
    try:
        dir_fd = open_folder_beneath(resolved.root, folder)
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW, dir_fd=dir_fd)
        finally:
            os.close(dir_fd)
    except FileNotFoundError:
        raise not_found(resolved) from None
    except IsADirectoryError:
        raise is_a_directory(resolved) from None
    except OSError as exc:
        raise ToolFailure(f"cannot open {resolved.rel!r}: {exc.strerror}", kind="refused") from None
    st = os.fstat(fd)
    if stat.S_ISDIR(st.st_mode):
        os.close(fd)
        raise is_a_directory(resolved)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise ToolFailure(
            f"refused: {resolved.rel!r} is not a regular file (rule: only regular files are read; "
            "FIFOs, sockets and devices are refused)",
            kind="refused",
        )
    return fd


def regular_file_size(ws: Workspace, user_path: str) -> int | None:
    """The size of the regular file ``user_path`` names (resolved by :func:`resolve`'s rules), or None
    when the path is refused, names nothing or names no regular file. One ``lstat``; nothing is opened.
    A hint for choosing how to read (the read itself checks the file again as it opens it)."""
    try:
        st = os.lstat(resolve(ws, user_path).path)
    except (ToolFailure, OSError, ValueError):
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def not_found(resolved: Resolved) -> ToolFailure:
    return ToolFailure(
        f"not found: {resolved.display_rel!r} does not exist in the workspace "
        "(list the folder with list_files_in_folder, or create it with create_new_file_with_text)",
        kind="not_found",
    )


def is_a_directory(resolved: Resolved) -> ToolFailure:
    return ToolFailure(
        f"{resolved.display_rel!r} is a folder, not a file (use list_files_in_folder to see what is in it)",
        kind="invalid",
    )


def is_temp_name(name: str) -> bool:
    """Our own in-flight temp files (``.name.XXXX.mcp-ide.tmp``): never listed."""
    return name.endswith(TEMP_MARK)


def _pick_root(ws: Workspace, text: str, original: str) -> tuple[Path, str]:
    """Which root a path belongs to, and the path relative to it (not yet normalised)."""
    if text in ("", ".", "/", "./"):
        return ws.root, ""
    if text.startswith("/"):
        for root in ws.roots:
            real_text = _realpath(text) if not _contains_dotdot(text) else text
            for form in (text, real_text):
                if _inside(Path(posixpath.normpath(form)), root):
                    rel = Path(posixpath.normpath(form)).relative_to(root).as_posix()
                    return root, "" if rel == "." else rel
        if text == SEED_ROOT or text.startswith(SEED_ROOT + "/"):
            return ws.root, text[len(SEED_ROOT) :].lstrip("/")
        raise outside(original)
    if len(ws.roots) > 1:
        first = text.split("/", 1)[0]
        for root in ws.roots[1:]:
            if first == root.name and not (ws.root / first).exists():
                return root, text.split("/", 1)[1] if "/" in text else ""
    return ws.root, text


def _contains_dotdot(text: str) -> bool:
    return ".." in text.split("/")


def _inside(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)

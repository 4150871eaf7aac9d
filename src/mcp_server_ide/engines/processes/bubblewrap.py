"""The sandbox of a hosted workspace: everything that runs code runs in bubblewrap as the project's uid.

What a command of a hosted workspace sees (SECURITY.md §6):

- a root of its own built from read-only binds of the system's folders (``/usr``, ``/etc``, ``/opt``
  and the ``/bin``, ``/lib``… links) and of the server's own Python (language servers and the
  tools the server ships run on it); ``/dev``; its own ``/proc`` (its own pid namespace: it sees
  only its own processes); its own ``/tmp``, a tmpfs limited in size (:func:`tmp_size`);
- its project's folder at ``/workspace``, read-write, and at its real path too (so the absolute
  paths of tool answers, run configurations and language-server URIs agree; the folders on the way
  hold nothing else); nothing of the other projects, the server's home, state or data folder;
- a uid and gid of its own (:func:`project_uid`), no capabilities, ``no_new_privs``, no further
  user namespaces;
- a clean environment (:func:`sandbox_env`): ``PATH``, ``HOME=/tmp/home``, ``LANG``, ``TERM``, and the
  variables the command was given, nothing of the server's;
- no network (a network namespace with only ``lo``) unless the workspace's ``Policy.network``.

Ownership: a project's files belong to its uid. A server running as root switches to that uid
(``setpriv``) before bwrap starts, and before each start hands the project's files not yet the
uid's over to it (:func:`adopt`); the server's own writes keep the owner of the file they replace
and give a new file or folder the owner of its folder (``textio.atomic``, ``sandbox``). A server
not running as root cannot switch uid: the sandbox then maps the project's uid to the server's own
(the files stay the server user's).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import sys
import threading
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..failures import ToolFailure
from .env import TAG_VAR, child_env

if TYPE_CHECKING:
    from ...workspace import Workspace

MOUNT = "/workspace"
"""Where the project's folder is inside its sandbox."""
HOME = "/tmp/home"
"""A sandboxed command's ``HOME``: empty at each start, in its ``/tmp``."""
UID_BASE = 10_000_000
"""Project uids are ``UID_BASE + n``: far above the uids of people and the usual subordinate ranges."""
UID_SPAN = 1 << 30
SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
TMP_SIZE = 256 << 20
"""Size of a sandbox's ``/tmp`` (tmpfs: memory, counted in the project's memory limit), at most."""
SYSTEM_FOLDERS = ("usr", "etc", "opt", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
"""Top-level folders of the host a sandbox sees, read-only (links among them stay links)."""


def project_uid(ws: Workspace) -> int:
    """The uid (and gid) a hosted workspace's processes run as: ``Policy.sandbox_uid`` (the hosted
    service gives ``UID_BASE`` + the project's number), else one derived from the root's path."""
    if ws.policy.sandbox_uid is not None:
        return ws.policy.sandbox_uid
    digest = hashlib.sha256(os.fsencode(ws.root)).digest()
    return UID_BASE + int.from_bytes(digest[:8], "big") % UID_SPAN


def tmp_size(ws: Workspace) -> int:
    """Bytes the sandbox's ``/tmp`` may hold: :data:`TMP_SIZE`, or the disk quota when smaller."""
    quota = ws.policy.disk_quota
    return min(TMP_SIZE, quota) if quota else TMP_SIZE


def inside_path(ws: Workspace, path: Path) -> str:
    """``path`` (on the host) as the sandbox sees it: under ``/workspace`` for the primary root."""
    if path == ws.root or path.is_relative_to(ws.root):
        rel = path.relative_to(ws.root).as_posix()
        return MOUNT if rel == "." else f"{MOUNT}/{rel}"
    return str(path)


def sandbox_env(
    extra: Mapping[str, str | None] | None = None, *, term: str | None = None, tag: str | None = None
) -> dict[str, str]:
    """A sandboxed command's whole environment: fixed values and the command's own variables.

    Nothing comes from the server's environment (no ``PATH`` of the server, no home, no proxies)."""
    given = child_env(extra, term=term)  # checks the names and values of ``extra``
    env = {"PATH": SANDBOX_PATH, "HOME": HOME, "LANG": "C.UTF-8", "TMPDIR": "/tmp", "USER": "workspace"}
    if term is not None:
        env["TERM"] = term
    for name, value in (extra or {}).items():
        if value is None:
            env.pop(name, None)
        elif name in given:
            env[name] = given[name]
    if tag is not None:
        env[TAG_VAR] = tag
    return env


def _tool(name: str) -> str:
    found = shutil.which(name) or next(
        (p for p in (f"/usr/bin/{name}", f"/bin/{name}") if os.access(p, os.X_OK)), None
    )
    if found is None:
        raise ToolFailure(
            f"unavailable: commands in a hosted workspace run in a bubblewrap sandbox and `{name}` is not "
            "installed on this server (rule: hosted commands are always sandboxed; install bubblewrap)",
            kind="unavailable",
        )
    return found


def _system_binds() -> list[str]:
    args: list[str] = []
    for name in SYSTEM_FOLDERS:
        path = f"/{name}"
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    return args


def _runtime_folders() -> list[str]:
    """The server's own Python (its virtualenv, the interpreter under it, this package: the
    multi-step runner of run configurations is one of its files), shown read-only."""
    folders: set[str] = set()
    package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for prefix in (sys.prefix, sys.base_prefix, os.path.dirname(os.path.realpath(sys.executable)), package):
        real = os.path.realpath(prefix)
        if real not in ("/", "") and not any(real.startswith(f"/{n}/") for n in SYSTEM_FOLDERS):
            folders.add(real)
    kept: list[str] = []
    for folder in sorted(folders):  # parents first: a folder inside one kept is shown already
        if not any(folder.startswith(k + "/") for k in kept):
            kept.append(folder)
    return kept


def _may_show(ws: Workspace, folder: str) -> bool:
    """Whether a folder may be shown read-only: not ``/``, not the server's home or state, nor a
    folder holding them or the projects (a language server's install below them is fine)."""
    hidden = {os.path.expanduser("~"), str(ws.state_home), *(str(r.parent) for r in ws.roots)}
    return folder not in ("/", "") and not any(h == folder or h.startswith(folder + "/") for h in hidden)


class _Binds:
    """bwrap mount arguments; the folders on the way to a mount point are made ``0755`` (bwrap
    makes them ``0700``, which the project's uid could not pass)."""

    def __init__(self) -> None:
        self.args: list[str] = []
        self._made: set[str] = {"/"}

    def _parents(self, dest: str) -> None:
        parts = Path(dest).parent.parts[1:]
        for i in range(len(parts)):
            folder = "/" + "/".join(parts[: i + 1])
            if folder not in self._made:
                self._made.add(folder)
                self.args += ["--perms", "0755", "--dir", folder]

    def add(self, option: str, source: str, dest: str) -> None:
        self._parents(dest)
        self.args += [option, source, dest]
        self._made.add(dest)


def wrap(
    ws: Workspace,
    argv: list[str],
    cwd: Path,
    *,
    tty: bool = False,
    network: bool | None = None,
    real_paths: bool = True,
    readonly: Sequence[Path] = (),
    shared: Sequence[Path] = (),
) -> list[str]:
    """``argv`` wrapped to run in the workspace's sandbox, in ``cwd`` (a host path inside a root).

    ``tty``: the command runs on our own pty (a terminal) and keeps its session so job control
    works; anything else gets a new session (no terminal to inject keystrokes into). ``network``:
    overrides the workspace's ``Policy.network``. ``real_paths``: the roots are also at their host
    paths (what the tools answer, a run configuration's ``${workspaceFolder}``, the file URIs a
    language server is sent), the folders on the way holding nothing else; the primary root is at
    ``/workspace`` always.
    ``readonly``: more host folders shown read-only (a language server's own install); ``shared``:
    folders of the server's shown read-write at their paths, given to the project's uid (a
    multi-step run's plan and progress files)."""
    bwrap = _tool("bwrap")
    uid = project_uid(ws)
    as_root = os.geteuid() == 0
    if as_root:
        adopt_workspace(ws, uid)
    if ws.policy.disk_quota:
        from .. import quota

        quota.watch(ws)
    share_net = ws.policy.network if network is None else network
    binds = _Binds()
    binds.args += _system_binds()
    binds.args += ["--dev", "/dev", "--proc", "/proc", "--perms", "01777", "--size", str(tmp_size(ws))]
    binds.args += ["--tmpfs", "/tmp"]
    binds.args += ["--symlink", "/tmp", "/var/tmp", "--perms", "01777", "--dir", HOME]
    binds._made.update({"/tmp", "/dev", "/proc", "/var"} | {f"/{n}" for n in SYSTEM_FOLDERS})
    shown = _runtime_folders()
    for folder in sorted({str(f) for f in readonly}):
        if not any(folder == k or folder.startswith(k + "/") for k in shown) and _may_show(ws, folder):
            shown.append(folder)
    for folder in shown:
        binds.add("--ro-bind", folder, folder)
    if share_net and os.path.isdir("/run/systemd/resolve"):
        binds.add("--ro-bind", "/run/systemd/resolve", "/run/systemd/resolve")
    for folder in shared:
        if as_root:
            adopt(folder, uid)
        binds.add("--bind", str(folder), str(folder))
    binds.add("--bind", str(ws.root), MOUNT)
    for root in ws.roots:
        if real_paths or root != ws.root:
            binds.add("--bind", str(root), str(root))
    wrapped = [bwrap, *binds.args, "--remount-ro", "/"]
    wrapped += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not share_net:
        wrapped.append("--unshare-net")
    wrapped += ["--die-with-parent", "--hostname", "workspace"]
    if not tty:
        wrapped.append("--new-session")
    wrapped += ["--chdir", inside_path(ws, cwd)]
    if as_root:
        # bwrap (as root, no user namespace) keeps only what setpriv needs; setpriv then becomes the
        # project's uid with no capabilities at all and no_new_privs before the command runs.
        for cap in ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP"):
            wrapped += ["--cap-add", cap]
        wrapped += ["--", _tool("setpriv"), f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
        wrapped += ["--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--", *argv]
    else:
        # Not root: a user namespace maps the project's uid to the server's own.
        wrapped += ["--unshare-user", "--disable-userns", "--uid", str(uid), "--gid", str(uid), "--", *argv]
    return wrapped


_ADOPTED: weakref.WeakKeyDictionary[Workspace, set[Path]] = weakref.WeakKeyDictionary()
_ADOPT_LOCK = threading.Lock()


def adopt_workspace(ws: Workspace, uid: int) -> None:
    """:func:`adopt` each root the first time it is sandboxed in this server; after that only its
    ``.git`` (git, run by the server itself, is the one writer that does not keep owners)."""
    with _ADOPT_LOCK:
        done = _ADOPTED.setdefault(ws, set())
        todo = [r for r in ws.roots if r not in done]
        done.update(todo)
    for root in ws.roots:
        if root in todo:
            adopt(root, uid)
        elif os.path.isdir(root / ".git") and not os.path.islink(root / ".git"):
            adopt(root / ".git", uid)


def adopt(root: Path, uid: int) -> int:
    """Give ``uid`` every file and folder under ``root`` that is not yet its (returns how many).

    Walks by folder descriptor without following links, so a folder swapped for a link meanwhile
    leads nowhere; links are changed themselves (``lchown``), never their targets; a file with
    several hard links is left alone (one of its names may be outside the project)."""
    changed = 0
    try:
        st = os.lstat(root)
    except OSError:
        return 0
    if (st.st_uid, st.st_gid) != (uid, uid):
        with contextlib.suppress(OSError):
            os.chown(root, uid, uid, follow_symlinks=False)
            changed += 1
    for _, dirs, files, dir_fd in os.fwalk(root, follow_symlinks=False):
        for name in (*dirs, *files):
            try:
                st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except OSError:
                continue
            if (st.st_uid, st.st_gid) == (uid, uid):
                continue
            if not stat.S_ISDIR(st.st_mode) and st.st_nlink > 1:
                continue
            with contextlib.suppress(OSError):
                os.chown(name, uid, uid, dir_fd=dir_fd, follow_symlinks=False)
                changed += 1
    return changed

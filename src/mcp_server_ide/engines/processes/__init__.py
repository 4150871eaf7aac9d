"""The process engine: every child process the server starts goes through here.

Containment (SECURITY.md §4), for one-shot commands (:func:`run`, :func:`run_async`), jobs
(:class:`Jobs`) and pty terminals (:class:`Terminals`) alike:

- Each command starts in its own session and process group (``start_new_session``), with stdin
  on ``/dev/null`` (unless the caller gives input), a scrubbed environment (:func:`child_env`: a
  short allow-list of the server's variables, never its tokens or ``MCP_IDE_*`` settings, plus the
  caller's own), and a ``cwd`` resolved inside the workspace by the sandbox.
- Output is captured into a head + tail buffer (:class:`Capture`): memory stays flat whatever the
  command prints (``yes``), and the result keeps the start and the end with a
  ``…[N bytes truncated]…`` marker.
- The whole tree is killed on timeout, cancellation, workspace close and server exit: SIGTERM,
  a grace period, then SIGSTOP + SIGKILL until nothing is left. The tree is found through
  ``/proc``: the session and process group, every descendant by parent pid, and every process
  carrying this run's tag in its environment (which catches children that called ``setsid`` and
  were re-parented, e.g. ``setsid -f sleep 999``). A process that ignores SIGTERM
  (``trap '' TERM``) gets SIGKILL after the grace period.
- When a one-shot command exits, background processes it left behind are stopped too.
- Long-lived children (jobs, terminals) get ``PR_SET_PDEATHSIG`` so they die with the server
  even when it is killed with SIGKILL; they are spawned from their own long-lived thread because
  the kernel ties that signal to the spawning *thread*.
- In a hosted workspace commands run inside bubblewrap (separate user, mount, pid and network
  namespaces); without ``bwrap`` they are refused.

Nothing here knows about MCP: tools in ``tools/terminal.py`` shape the results.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import errno
import fcntl
import itertools
import os
import re
import secrets
import selectors
import shutil
import signal
import struct
import subprocess
import termios
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio

from ..failures import ToolFailure

if TYPE_CHECKING:
    from ...workspace import Workspace

DEFAULT_TIMEOUT_S = 60.0
MAX_TIMEOUT_S = 3600.0
DEFAULT_MAX_OUTPUT = 1 << 20
"""Bytes kept per stream (stdout and stderr each) by one-shot commands: half head, half tail."""
KILL_GRACE_S = 2.0
"""Time between SIGTERM and SIGKILL."""
LEFTOVER_WAIT_S = 0.05
"""After the main process exits, how long its pipes may stay open before the holders are stopped."""
JOB_LOG_BYTES = 4 << 20
TERMINAL_LOG_BYTES = 1 << 20
MAX_RUNNING_JOBS = 16
MAX_KEPT_JOBS = 64
MAX_TERMINALS = 8
TAG_VAR = "MCP_IDE_PROC_TAG"
"""Environment variable carrying each process tree's tag (found again through /proc/PID/environ)."""

SWEEP_BATCH_S = 0.1
"""Finished commands are checked for leftovers in batches, this long after they end."""
_READ_CHUNK = 256 * 1024


# ---------------------------------------------------------------------------------------------
# Environment


PASS_ENV: set[str] = {
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "TEMP",
    "TMP",
    "TERM",
    "COLORTERM",
    "EDITOR",
    "VISUAL",
    "JAVA_HOME",
    "GOPATH",
    "GOROOT",
    "GOBIN",
    "GOCACHE",
    "GOMODCACHE",
    "GOPROXY",
    "GOFLAGS",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "NVM_DIR",
    "PNPM_HOME",
    "VOLTA_HOME",
    "BUN_INSTALL",
    "DENO_DIR",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "PYENV_ROOT",
    "PIPX_HOME",
    "UV_CACHE_DIR",
    "DOTNET_ROOT",
    "ANDROID_HOME",
    "GRADLE_USER_HOME",
    "MAVEN_HOME",
    "M2_HOME",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
}
"""Server variables a child sees (plus ``LC_*``). The CLI may add names (``--pass-env``)."""

_SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSW(?:OR)?D|PASSPHRASE|CREDENTIAL|PRIVATE|API_?KEY|ACCESS_?KEY|_KEY$|^KEY|AUTH|COOKIE|SESSION"
    r"|^MCP_IDE_|^AWS_|^AZURE_|^GCP_|^GOOGLE_APPLICATION|^GH_|^GITHUB_|^ANTHROPIC|^OPENAI|^HF_|^NPM_CONFIG_",
    re.IGNORECASE,
)
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def is_secret_name(name: str) -> bool:
    """Whether a variable name looks like it holds a credential or a server setting."""
    return bool(_SECRET_NAME.search(name))


def child_env(extra: Mapping[str, str | None] | None = None, *, term: str | None = None) -> dict[str, str]:
    """The environment of a child: allow-listed server variables (never secrets), then ``extra``.

    ``extra`` is the caller's own (a value of ``None`` removes a variable). Proxy variables whose
    URL carries credentials are dropped.
    """
    env: dict[str, str] = {}
    for name, value in os.environ.items():
        if (name in PASS_ENV or name.startswith("LC_")) and not is_secret_name(name):
            if "proxy" in name.lower() and "@" in value:
                continue
            env[name] = value
    env.setdefault("PATH", os.defpath)
    env.setdefault("LANG", "C.UTF-8")
    if term is not None:
        env["TERM"] = term
    for name, value in (extra or {}).items():
        if not isinstance(name, str) or not _ENV_NAME.match(name):
            raise ToolFailure(
                f"invalid environment variable name {name!r} (rule: names are letters, digits and '_', "
                "not starting with a digit)"
            )
        if name == TAG_VAR:
            continue
        if value is None:
            env.pop(name, None)
            continue
        value = str(value)
        if "\x00" in value:
            raise ToolFailure(f"invalid value for environment variable {name!r}: it contains a NUL byte")
        env[name] = value
    return env


# ---------------------------------------------------------------------------------------------
# Shell and working directory


def default_shell() -> str:
    """The shell commands given as one string run in: bash when there is one, else /bin/sh."""
    return _SHELL


def _find_shell() -> str:
    for candidate in ("/bin/bash", "/usr/bin/bash"):
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("bash")
    return found or "/bin/sh"


_SHELL = _find_shell()


def command_argv(command: str | Sequence[str], shell: str | None = None) -> list[str]:
    """A string is a shell command (``bash -c``); a sequence is an argv, run without a shell."""
    if isinstance(command, str):
        if not command.strip():
            raise ToolFailure("invalid command: it is empty (give the shell command to run)")
        if "\x00" in command:
            raise ToolFailure("invalid command: it contains a NUL byte")
        return [shell or _SHELL, "-c", command]
    argv = [os.fspath(a) for a in command]
    if not argv or not argv[0]:
        raise ToolFailure("invalid command: the argument list is empty")
    if any("\x00" in a for a in argv):
        raise ToolFailure("invalid command: an argument contains a NUL byte")
    return argv


def resolve_cwd(ws: Workspace | None, cwd: str | os.PathLike[str] | None) -> Path:
    """The working directory: inside the workspace (through the sandbox) when ``ws`` is given.

    Without a workspace, ``cwd`` is an internal caller's own absolute path, used as it is.
    """
    if ws is None:
        if cwd is None:
            raise ValueError("cwd is required without a workspace")
        return Path(cwd)
    from .. import sandbox

    resolved = sandbox.resolve(ws, os.fspath(cwd) if cwd not in (None, "") else ".")
    if not resolved.path.is_dir():
        if not resolved.path.exists():
            raise ToolFailure(
                f"not found: the working directory {resolved.display_rel!r} does not exist in the workspace "
                "(give a folder relative to the root, or omit cwd for the root)",
                kind="not_found",
            )
        raise ToolFailure(f"invalid cwd: {resolved.display_rel!r} is a file, not a folder")
    return resolved.path


def hosted_argv(ws: Workspace, argv: list[str], cwd: Path, *, tty: bool = False) -> list[str]:
    """Wrap ``argv`` in bubblewrap for a hosted workspace: only its own root is visible and writable.

    ``tty``: the command runs on our own pty (a terminal), which keeps its session so job control
    works; anything else gets a new session (no terminal to inject keystrokes into)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise ToolFailure(
            "unavailable: commands in a hosted workspace run in a bubblewrap sandbox and `bwrap` is not "
            "installed on this server (rule: hosted commands are always sandboxed)",
            kind="unavailable",
        )
    wrapped = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    # Hide the server's home (credentials), its state and the other projects beside this one.
    hidden = {os.path.expanduser("~"), str(ws.state_home), *(str(Path(r).parent) for r in ws.roots)}
    for folder in sorted(h for h in hidden if h not in ("/", "") and os.path.isdir(h)):
        wrapped += ["--tmpfs", folder]
    for root in ws.roots:
        wrapped += ["--bind", str(root), str(root)]
    wrapped += ["--unshare-all", "--die-with-parent", "--uid", "1000", "--gid", "1000"]
    if not tty:
        wrapped.append("--new-session")
    wrapped += ["--chdir", str(cwd), "--", *argv]
    return wrapped


# ---------------------------------------------------------------------------------------------
# Output capture


class Capture:
    """Keeps the first and the last ``limit / 2`` bytes of a stream, whatever its length."""

    def __init__(self, limit: int = DEFAULT_MAX_OUTPUT) -> None:
        self.limit = max(0, int(limit))
        self.head_limit = self.limit - self.limit // 2
        self.tail_limit = self.limit // 2
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        if not data:
            return
        self.total += len(data)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
            if not data:
                return
        if self.tail_limit <= 0:
            return
        if len(data) >= self.tail_limit:
            self.tail[:] = data[-self.tail_limit :]
            return
        self.tail += data
        if len(self.tail) > 2 * self.tail_limit:
            del self.tail[: len(self.tail) - self.tail_limit]

    @property
    def truncated(self) -> bool:
        return self.total > self.limit

    def value(self) -> bytes:
        """The whole stream, or its head and tail around a ``…[N bytes truncated]…`` marker."""
        if not self.truncated:
            return bytes(self.head + self.tail)
        head = _cut_utf8_end(bytes(self.head))
        tail = _cut_utf8_start(bytes(self.tail[-self.tail_limit :]) if self.tail_limit else b"")
        dropped = self.total - len(head) - len(tail)
        marker = f"\n…[{dropped} bytes truncated]…\n".encode()
        return head + marker + tail


def _cut_utf8_end(data: bytes) -> bytes:
    """Drop an incomplete UTF-8 sequence at the end of ``data``."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte < 0x80:
            return data
        if byte >= 0xC0:  # lead byte: complete only if its sequence fits
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return data if back >= need else data[:-back]
    return data


def _cut_utf8_start(data: bytes) -> bytes:
    """Drop UTF-8 continuation bytes at the start of ``data``."""
    i = 0
    while i < min(3, len(data)) and 0x80 <= data[i] < 0xC0:
        i += 1
    return data[i:]


def decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


class OutputLog:
    """An append-only byte log with absolute offsets that keeps only its last ``limit`` bytes."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.buf = bytearray()
        self.start = 0
        self.lock = threading.Lock()
        self.version = 0

    @property
    def end(self) -> int:
        return self.start + len(self.buf)

    def append(self, data: bytes) -> None:
        if not data:
            return
        with self.lock:
            self.buf += data
            excess = len(self.buf) - self.limit
            if excess > self.limit // 4:
                del self.buf[:excess]
                self.start += excess
            self.version += 1

    def read(self, offset: int, max_bytes: int, *, final: bool = False) -> tuple[bytes, int, int, int]:
        """``(data, start_offset, next_offset, skipped)`` from ``offset``.

        ``skipped`` counts bytes before the kept window that were dropped. An incomplete UTF-8
        sequence at the end is left for the next read unless the stream is ``final``.
        """
        with self.lock:
            offset = max(0, offset)
            kept_from = self.start + max(0, len(self.buf) - self.limit)
            skipped = max(0, kept_from - offset)
            offset = max(offset, kept_from)
            if offset > self.end:
                offset = self.end
            lo = offset - self.start
            hi = min(len(self.buf), lo + max(0, max_bytes))
            data = bytes(self.buf[lo:hi])
            at_end = hi == len(self.buf)
        if skipped:
            cut = _cut_utf8_start(data)
            offset += len(data) - len(cut)
            data = cut
        if not (final and at_end):
            data = _cut_utf8_end(data)
        return data, offset, offset + len(data), skipped


# ---------------------------------------------------------------------------------------------
# Process trees


@dataclass(frozen=True)
class ProcInfo:
    pid: int
    ppid: int
    pgid: int
    sid: int
    start: int
    state: str


def scan_proc() -> dict[int, ProcInfo]:
    """Every process visible in /proc (pid → info). Zombies are included (state ``Z``)."""
    found: dict[int, ProcInfo] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        info = read_proc(int(name))
        if info is not None:
            found[info.pid] = info
    return found


def _read_small(path: str, size: int = 1024) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.read(fd, size)
    except OSError:
        return None
    finally:
        os.close(fd)


def read_proc(pid: int) -> ProcInfo | None:
    data = _read_small(f"/proc/{pid}/stat")
    if not data:
        return None
    try:
        right = data.rindex(b")")
        fields = data[right + 2 :].split()
        return ProcInfo(
            pid=pid,
            ppid=int(fields[1]),
            pgid=int(fields[2]),
            sid=int(fields[3]),
            start=int(fields[19]),
            state=fields[0].decode(),
        )
    except (ValueError, IndexError):
        return None


def _environ_has(pid: int, needle: bytes) -> bool:
    data = _read_small(f"/proc/{pid}/environ", 1 << 20)
    return bool(data) and needle in data  # type: ignore[operator]


_ALL_TREES: weakref.WeakSet[ProcessTree] = weakref.WeakSet()
_TREES_LOCK = threading.Lock()


class ProcessTree:
    """One started command and everything it started, found again through /proc."""

    def __init__(self, pid: int, tag: str) -> None:
        self.pid = pid
        self.tag = tag
        self.needle = f"{TAG_VAR}={tag}\x00".encode()
        info = read_proc(pid)
        self.start = info.start if info else 0
        self.sid = pid  # start_new_session: the child leads its own session and group
        self.done = False
        with _TREES_LOCK:
            _ALL_TREES.add(self)

    def members(self, procs: dict[int, ProcInfo] | None = None) -> list[ProcInfo]:
        """Live (non-zombie) processes of this tree."""
        procs = procs if procs is not None else scan_proc()
        protected = {1, os.getpid(), os.getppid()}
        newer = [p for p in procs.values() if p.start >= self.start and p.pid not in protected]
        tree: dict[int, ProcInfo] = {}
        for p in newer:
            if p.sid == self.sid or p.pgid == self.sid or p.pid == self.pid:
                tree[p.pid] = p
        children: dict[int, list[ProcInfo]] = {}
        for p in newer:
            children.setdefault(p.ppid, []).append(p)
        for p in newer:
            if p.pid not in tree and _environ_has(p.pid, self.needle):
                tree[p.pid] = p
        todo = list(tree)
        while todo:
            for child in children.get(todo.pop(), ()):
                if child.pid not in tree:
                    tree[child.pid] = child
                    todo.append(child.pid)
        return [p for p in tree.values() if p.state not in ("Z", "X")]

    def signal_all(self, sig: int, members: list[ProcInfo] | None = None) -> list[ProcInfo]:
        members = self.members() if members is None else members
        for p in members:
            with contextlib.suppress(OSError):
                os.kill(p.pid, sig)
        return members

    def kill(self, grace_s: float = KILL_GRACE_S) -> int:
        """SIGTERM the whole tree, wait up to ``grace_s``, then SIGKILL whatever is left. Blocking."""
        count = len(self._term())
        deadline = time.monotonic() + max(0.0, grace_s)
        pause = 0.01
        while time.monotonic() < deadline:
            if not self.members():
                break
            time.sleep(pause)
            pause = min(pause * 2, 0.1)
        self._kill_rounds(time.sleep)
        self.done = True
        return count

    async def kill_async(self, grace_s: float = KILL_GRACE_S) -> int:
        count = len(self._term())
        deadline = time.monotonic() + max(0.0, grace_s)
        pause = 0.01
        while time.monotonic() < deadline:
            if not self.members():
                break
            await anyio.sleep(pause)
            pause = min(pause * 2, 0.1)
        self._kill_rounds(time.sleep)
        self.done = True
        return count

    def _term(self) -> list[ProcInfo]:
        with contextlib.suppress(OSError):
            os.killpg(self.sid, signal.SIGTERM)
        members = self.signal_all(signal.SIGTERM)
        for p in members:  # a stopped process acts on SIGTERM only once continued
            with contextlib.suppress(OSError):
                os.kill(p.pid, signal.SIGCONT)
        return members

    def _kill_rounds(self, sleep: Callable[[float], Any]) -> None:
        for _ in range(50):
            members = self.members()
            if not members:
                return
            # Freeze first so nothing can fork new members between the scan and the kill.
            self.signal_all(signal.SIGSTOP, members)
            again = self.members()
            self.signal_all(signal.SIGKILL, again)
            with contextlib.suppress(OSError):
                os.killpg(self.sid, signal.SIGKILL)
            sleep(0.005)

    def forget(self) -> None:
        self.done = True
        with _TREES_LOCK:
            _ALL_TREES.discard(self)


def _new_tag() -> str:
    return secrets.token_hex(8)


# A background sweeper stops what a finished one-shot command left running (daemons that
# called setsid and closed their output) without delaying the command's result.
class _Sweeper:
    def __init__(self) -> None:
        self.pending: list[ProcessTree] = []
        self.busy = 0
        self.cond = threading.Condition()
        self.thread: threading.Thread | None = None

    def add(self, tree: ProcessTree) -> None:
        with self.cond:
            self.pending.append(tree)
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._loop, name="mcp-ide-sweeper", daemon=True)
                self.thread.start()
            self.cond.notify_all()

    def _loop(self) -> None:
        while True:
            with self.cond:
                while not self.pending:
                    if not self.cond.wait(timeout=30) and not self.pending:
                        self.thread = None
                        return
                self.busy += 1
            time.sleep(SWEEP_BATCH_S)  # let a burst of commands share one /proc scan
            with self.cond:
                batch, self.pending = self.pending, []
            try:
                procs = scan_proc()
                for tree in batch:
                    with contextlib.suppress(Exception):
                        if tree.members(procs):
                            tree.kill()
                    tree.forget()
            except Exception:
                pass
            finally:
                with self.cond:
                    self.busy -= 1
                    self.cond.notify_all()

    def flush(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        with self.cond:
            while self.pending or self.busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self.cond.wait(left)


_SWEEPER = _Sweeper()


def _sweep_later(tree: ProcessTree) -> None:
    _SWEEPER.add(tree)


def flush_sweeps(timeout: float = 10.0) -> None:
    """Block until background sweeps of finished commands are done (tests, shutdown)."""
    _SWEEPER.flush(timeout)


# ---------------------------------------------------------------------------------------------
# Spawning


_libc: Any = None
with contextlib.suppress(OSError):
    _libc = ctypes.CDLL(None, use_errno=True)
_PR_SET_PDEATHSIG = 1


def _make_preexec(*, pdeathsig: bool, ctty: bool) -> Callable[[], None] | None:
    if not pdeathsig and not ctty:
        return None
    prctl = getattr(_libc, "prctl", None) if pdeathsig else None
    parent = os.getpid()

    def preexec() -> None:  # runs in the child between fork and exec: keep it tiny
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if os.getppid() != parent:
                os._exit(1)
        if ctty:
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    return preexec


@dataclass
class Prepared:
    argv: list[str]
    cwd: Path
    env: dict[str, str]
    tag: str
    display: str


def prepare(
    command: str | Sequence[str],
    *,
    ws: Workspace | None = None,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str | None] | None = None,
    shell: str | None = None,
    term: str | None = None,
) -> Prepared:
    """Check and resolve everything before a process starts (nothing is spawned here)."""
    argv = command_argv(command, shell)
    where = resolve_cwd(ws, cwd)
    child = child_env(env, term=term)
    tag = _new_tag()
    child[TAG_VAR] = tag
    if ws is not None and ws.policy.hosted:
        argv = hosted_argv(ws, argv, where, tty=term is not None)
    display = command if isinstance(command, str) else " ".join(argv)
    return Prepared(argv=argv, cwd=where, env=child, tag=tag, display=display)


def _popen(
    prep: Prepared,
    *,
    stdin: Any,
    stdout: Any,
    stderr: Any,
    pdeathsig: bool = False,
    ctty: bool = False,
) -> tuple[subprocess.Popen[bytes], ProcessTree]:
    try:
        proc = subprocess.Popen(
            prep.argv,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            cwd=prep.cwd,
            env=prep.env,
            start_new_session=True,
            close_fds=True,
            preexec_fn=_make_preexec(pdeathsig=pdeathsig, ctty=ctty),
        )
    except FileNotFoundError:
        raise ToolFailure(
            f"not found: the program {os.path.basename(prep.argv[0])!r} is not installed or not on PATH",
            kind="not_found",
        ) from None
    except PermissionError:
        raise ToolFailure(
            f"refused: the program {os.path.basename(prep.argv[0])!r} is not executable", kind="refused"
        ) from None
    except OSError as exc:
        raise ToolFailure(f"could not start the command: {exc.strerror}", kind="unavailable") from None
    return proc, ProcessTree(proc.pid, prep.tag)


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _read_available(fd: int, sink: Callable[[bytes], None]) -> bool:
    """Read what a non-blocking fd has now; True at end of file."""
    while True:
        try:
            data = os.read(fd, _READ_CHUNK)
        except BlockingIOError:
            return False
        except OSError as exc:
            if exc.errno == errno.EIO:  # pty whose other side is gone
                return True
            raise
        if not data:
            return True
        sink(data)
        if len(data) < _READ_CHUNK:
            return False


# ---------------------------------------------------------------------------------------------
# One-shot commands


@dataclass
class Completed:
    stdout_bytes: bytes
    stderr_bytes: bytes
    exit_code: int | None
    """The process's exit status; negative when a signal ended it (-9: killed)."""
    timed_out: bool = False
    truncated: bool = False
    duration_ms: int = 0
    cancelled: bool = False
    stdout_total: int = 0
    stderr_total: int = 0
    leftovers_killed: int = 0

    @property
    def stdout(self) -> str:
        return decode(self.stdout_bytes)

    @property
    def stderr(self) -> str:
        return decode(self.stderr_bytes)

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


def _check_timeout(timeout_s: float | None) -> float:
    if timeout_s is None:
        return DEFAULT_TIMEOUT_S
    if timeout_s <= 0:
        raise ToolFailure("invalid timeout: it must be more than 0")
    return min(float(timeout_s), MAX_TIMEOUT_S)


def _stdin_bytes(stdin: bytes | str | None) -> bytes | None:
    if stdin is None:
        return None
    return stdin.encode() if isinstance(stdin, str) else bytes(stdin)


def _start_captured(
    command: str | Sequence[str],
    ws: Workspace | None,
    cwd: str | os.PathLike[str] | None,
    env: Mapping[str, str | None] | None,
    shell: str | None,
    stdin: bytes | str | None,
    max_output: int,
) -> tuple[subprocess.Popen[bytes], ProcessTree, bytes | None, Capture, Capture, float]:
    """Start a contained command with piped, non-blocking stdout/stderr and their capped captures
    (what :func:`run` and :func:`run_async` share). Returns the process, its tree tracker, the stdin
    bytes to feed, the two captures and the start time."""
    prep = prepare(
        command, ws=ws, cwd=cwd if cwd is not None or ws is not None else os.getcwd(), env=env, shell=shell
    )
    data_in = _stdin_bytes(stdin)
    started = time.perf_counter()
    proc, tree = _popen(
        prep,
        stdin=subprocess.PIPE if data_in is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    os.set_blocking(proc.stdout.fileno(), False)
    os.set_blocking(proc.stderr.fileno(), False)
    return proc, tree, data_in, Capture(max_output), Capture(max_output), started


def run(
    command: str | Sequence[str],
    *,
    ws: Workspace | None = None,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str | None] | None = None,
    timeout_s: float | None = DEFAULT_TIMEOUT_S,
    max_output: int = DEFAULT_MAX_OUTPUT,
    stdin: bytes | str | None = None,
    shell: str | None = None,
    grace_s: float = KILL_GRACE_S,
    cancel: threading.Event | None = None,
) -> Completed:
    """Run a command to completion, contained (see the module docstring). Blocking.

    ``command``: a shell string (run with ``bash -c``) or an argv list (no shell). ``cwd`` is a
    workspace path when ``ws`` is given (default: the root). ``stdin``: bytes to feed, else
    ``/dev/null``. On timeout the tree is killed and ``timed_out`` is set; output so far is kept.
    ``cancel`` (default: the current tool call's ``cancelled`` event) kills the tree and raises.
    """
    timeout = _check_timeout(timeout_s)
    if cancel is None:
        cancel = _call_cancel_event()
    proc, tree, data_in, out, err, started = _start_captured(command, ws, cwd, env, shell, stdin, max_output)
    assert proc.stdout is not None and proc.stderr is not None
    fds = {proc.stdout.fileno(): out.feed, proc.stderr.fileno(): err.feed}
    pidfd = _pidfd(proc.pid)
    sel = selectors.DefaultSelector()
    for fd in fds:
        sel.register(fd, selectors.EVENT_READ)
    if pidfd is not None:
        sel.register(pidfd, selectors.EVENT_READ)
    pending_in = memoryview(data_in) if data_in else None
    in_fd = proc.stdin.fileno() if proc.stdin is not None else None
    if in_fd is not None:
        if pending_in:
            os.set_blocking(in_fd, False)
            sel.register(in_fd, selectors.EVENT_WRITE)
        else:
            proc.stdin.close()  # type: ignore[union-attr]
            in_fd = None
    deadline = started + timeout
    exited_at: float | None = None
    timed_out = leftovers = cancelled = False
    open_fds = set(fds)
    try:
        while True:
            if exited_at is None and pidfd is None and proc.poll() is not None:
                exited_at = time.perf_counter()
            if exited_at is not None and not open_fds:
                break
            now = time.perf_counter()
            if now >= deadline:
                timed_out = exited_at is None
                leftovers = not timed_out
                break
            wait = deadline - now
            if exited_at is not None:
                wait = min(wait, exited_at + LEFTOVER_WAIT_S - now)
                if wait <= 0:
                    leftovers = True
                    break
            elif pidfd is None:
                wait = min(wait, 0.02)
            if cancel is not None:
                if cancel.is_set():
                    cancelled = True
                    break
                wait = min(wait, 0.1)
            for key, _ in sel.select(wait):
                fd = key.fd
                if fd == pidfd:
                    sel.unregister(pidfd)
                    os.close(pidfd)
                    pidfd = None
                    proc.wait()
                    if exited_at is None:
                        exited_at = time.perf_counter()
                elif fd == in_fd:
                    try:
                        n = os.write(fd, pending_in[:65536])  # type: ignore[index]
                        pending_in = pending_in[n:]  # type: ignore[index]
                    except BrokenPipeError:
                        pending_in = None
                    except BlockingIOError:
                        continue
                    if not pending_in:
                        sel.unregister(fd)
                        proc.stdin.close()  # type: ignore[union-attr]
                        in_fd = None
                elif fd in open_fds and _read_available(fd, fds[fd]):
                    sel.unregister(fd)
                    open_fds.discard(fd)
    finally:
        killed = 0
        if timed_out or leftovers or cancelled or exited_at is None:
            killed = tree.kill(grace_s)
            _drain(open_fds, fds, sel)
        sel.close()
        if pidfd is not None:
            os.close(pidfd)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(5)
        if not (timed_out or leftovers or cancelled):
            _sweep_later(tree)
        else:
            tree.forget()
    if cancelled:
        raise ToolFailure(
            "cancelled: the caller cancelled this call (the command was stopped)", kind="conflict"
        )
    return Completed(
        stdout_bytes=out.value(),
        stderr_bytes=err.value(),
        exit_code=proc.returncode,
        timed_out=timed_out,
        truncated=out.truncated or err.truncated,
        duration_ms=int((time.perf_counter() - started) * 1000),
        stdout_total=out.total,
        stderr_total=err.total,
        leftovers_killed=killed if leftovers else 0,
    )


def _call_cancel_event() -> threading.Event | None:
    from ...call import current_or_none

    call = current_or_none()
    event = getattr(call, "cancelled", None) if call is not None else None
    return event if isinstance(event, threading.Event) else None


def _drain(
    open_fds: set[int], sinks: dict[int, Callable[[bytes], None]], sel: selectors.BaseSelector | None
) -> None:
    """After a kill: read what is left in the pipes, for at most a second."""
    deadline = time.monotonic() + 1.0
    while open_fds and time.monotonic() < deadline:
        for fd in list(open_fds):
            try:
                if _read_available(fd, sinks[fd]):
                    open_fds.discard(fd)
            except OSError:
                open_fds.discard(fd)
        if open_fds:
            time.sleep(0.01)


ProgressFn = Callable[[float, int], Awaitable[None]]
"""``on_progress(elapsed_seconds, output_bytes_so_far)``."""


async def run_async(
    command: str | Sequence[str],
    *,
    ws: Workspace | None = None,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str | None] | None = None,
    timeout_s: float | None = DEFAULT_TIMEOUT_S,
    max_output: int = DEFAULT_MAX_OUTPUT,
    stdin: bytes | str | None = None,
    shell: str | None = None,
    grace_s: float = KILL_GRACE_S,
    on_progress: ProgressFn | None = None,
    progress_every_s: float = 1.0,
) -> Completed:
    """:func:`run` for the event loop. Cancelling the caller kills the tree (then re-raises)."""
    timeout = _check_timeout(timeout_s)
    proc, tree, data_in, out, err, started = _start_captured(command, ws, cwd, env, shell, stdin, max_output)
    assert proc.stdout is not None and proc.stderr is not None
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    open_fds = {out_fd, err_fd}
    sinks = {out_fd: out.feed, err_fd: err.feed}
    pidfd = _pidfd(proc.pid)
    eof = anyio.Event()
    timed_out = leftovers = False
    finished = False

    async def pump(fd: int) -> None:
        while fd in open_fds:
            await anyio.wait_readable(fd)
            if _read_available(fd, sinks[fd]):
                open_fds.discard(fd)
        if not open_fds:
            eof.set()

    async def feed_stdin() -> None:
        assert proc.stdin is not None
        fd = proc.stdin.fileno()
        os.set_blocking(fd, False)
        view = memoryview(data_in or b"")
        try:
            while view:
                await anyio.wait_writable(fd)
                try:
                    view = view[os.write(fd, view[:65536]) :]
                except BlockingIOError:
                    continue
        except BrokenPipeError:
            pass
        finally:
            proc.stdin.close()

    async def ticker() -> None:
        assert on_progress is not None
        while True:
            await anyio.sleep(progress_every_s)
            await on_progress(time.perf_counter() - started, out.total + err.total)

    async def wait_exit() -> None:
        if pidfd is not None:
            await anyio.wait_readable(pidfd)
        while proc.poll() is None:
            await anyio.sleep(0.02)

    try:
        with anyio.move_on_after(max(0.0, started + timeout - time.perf_counter())) as limit:
            async with anyio.create_task_group() as tg:
                tg.start_soon(pump, out_fd)
                tg.start_soon(pump, err_fd)
                if data_in is not None:
                    tg.start_soon(feed_stdin)
                if on_progress is not None:
                    tg.start_soon(ticker)
                await wait_exit()
                with anyio.move_on_after(LEFTOVER_WAIT_S):
                    await eof.wait()
                leftovers = bool(open_fds)
                tg.cancel_scope.cancel()
        timed_out = limit.cancelled_caught
        finished = True
    finally:
        with anyio.CancelScope(shield=True):
            killed = 0
            if not finished or timed_out or leftovers:
                killed = await tree.kill_async(grace_s)
                _drain(open_fds, sinks, None)
            if pidfd is not None:
                os.close(pidfd)
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
            for _ in range(250):
                if proc.poll() is not None:
                    break
                await anyio.sleep(0.02)
            if finished and not (timed_out or leftovers):
                _sweep_later(tree)
            else:
                tree.forget()
    return Completed(
        stdout_bytes=out.value(),
        stderr_bytes=err.value(),
        exit_code=proc.returncode,
        timed_out=timed_out,
        truncated=out.truncated or err.truncated,
        duration_ms=int((time.perf_counter() - started) * 1000),
        stdout_total=out.total,
        stderr_total=err.total,
        leftovers_killed=killed if leftovers else 0,
    )


# ---------------------------------------------------------------------------------------------
# Jobs

JobState = Literal["running", "exited", "killed", "timed_out", "failed"]

_ids = itertools.count(1)


def _now() -> float:
    return time.time()


@dataclass
class Job:
    id: str
    title: str
    command: str
    cwd: str
    started_at: float
    state: JobState = "running"
    exit_code: int | None = None
    ended_at: float | None = None
    pid: int | None = None
    error: str | None = None
    log: OutputLog = field(default_factory=lambda: OutputLog(JOB_LOG_BYTES))
    has_stdin: bool = False
    timeout_s: float | None = None
    _proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _tree: ProcessTree | None = field(default=None, repr=False)
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _stop_reason: str = field(default="killed", repr=False)
    _done: threading.Event = field(default_factory=threading.Event, repr=False)
    _wake_w: int | None = field(default=None, repr=False)
    _stdin_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _where: Path | None = field(default=None, repr=False)
    """The absolute working directory: which root the job belongs to."""

    @property
    def running(self) -> bool:
        return self.state == "running"

    @property
    def duration_ms(self) -> int:
        return int(((self.ended_at or _now()) - self.started_at) * 1000)

    def read(self, offset: int = 0, max_bytes: int = 100_000) -> tuple[str, int, int, int, bool]:
        """``(text, start, next_offset, skipped, has_more)``."""
        data, start, nxt, skipped = self.log.read(offset, max_bytes, final=not self.running)
        return decode(data), start, nxt, skipped, nxt < self.log.end


class Jobs:
    """A workspace's background jobs: long commands started now and read later."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.jobs: dict[str, Job] = {}
        self.lock = threading.Lock()
        self.closed = False
        _register_service(self)

    def start(
        self,
        command: str | Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str | None] | None = None,
        title: str | None = None,
        stdin: bool = False,
        timeout_s: float | None = None,
    ) -> Job:
        """Start ``command`` in the background; its merged stdout+stderr go to the job's log."""
        if self.closed:
            raise ToolFailure("unavailable: the workspace is closing", kind="unavailable")
        with self.lock:
            if sum(j.running for j in self.jobs.values()) >= MAX_RUNNING_JOBS:
                raise ToolFailure(
                    f"refused: {MAX_RUNNING_JOBS} jobs are already running in this workspace (rule: a workspace runs "
                    "at most that many jobs; cancel one with cancel_job)",
                    kind="refused",
                )
        prep = prepare(command, ws=self.ws, cwd=cwd, env=env)
        job = Job(
            id=f"job-{next(_ids)}",
            title=title or prep.display[:80],
            command=prep.display,
            cwd=_cwd_label(prep.cwd, self.ws.root),
            started_at=_now(),
            has_stdin=stdin,
            timeout_s=timeout_s,
            _where=prep.cwd,
        )
        started = threading.Event()
        failure: list[BaseException] = []
        thread = threading.Thread(
            target=self._run_job, args=(job, prep, started, failure), name=f"mcp-ide-{job.id}", daemon=True
        )
        thread.start()
        started.wait()
        if failure:
            raise failure[0]
        with self.lock:
            self.jobs[job.id] = job
            self._forget_old()
        return job

    def _run_job(
        self, job: Job, prep: Prepared, started: threading.Event, failure: list[BaseException]
    ) -> None:
        # The process is spawned from this thread, which lives as long as it does (PDEATHSIG).
        try:
            proc, tree = _popen(
                prep,
                stdin=subprocess.PIPE if job.has_stdin else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                pdeathsig=True,
            )
        except BaseException as exc:
            failure.append(exc)
            started.set()
            return
        job._proc, job._tree, job.pid = proc, tree, proc.pid
        if proc.stdin is not None:
            os.set_blocking(proc.stdin.fileno(), False)
        wake_r, wake_w = os.pipe()
        job._wake_w = wake_w
        started.set()
        assert proc.stdout is not None
        out_fd = proc.stdout.fileno()
        os.set_blocking(out_fd, False)
        pidfd = _pidfd(proc.pid)
        sel = selectors.DefaultSelector()
        sel.register(out_fd, selectors.EVENT_READ)
        sel.register(wake_r, selectors.EVENT_READ)
        if pidfd is not None:
            sel.register(pidfd, selectors.EVENT_READ)
        deadline = time.monotonic() + job.timeout_s if job.timeout_s else None
        out_open = True
        exited_at: float | None = None
        reason: JobState = "exited"
        try:
            while True:
                if exited_at is None and proc.poll() is not None:
                    exited_at = time.monotonic()
                if exited_at is not None and not out_open:
                    break
                if job._stop.is_set():
                    reason = "killed" if job._stop_reason == "killed" else "exited"
                    break
                now = time.monotonic()
                wait: float | None = None
                if deadline is not None:
                    if now >= deadline and exited_at is None:
                        reason = "timed_out"
                        break
                    wait = max(0.0, deadline - now)
                if exited_at is not None:
                    left = exited_at + LEFTOVER_WAIT_S - now
                    if left <= 0:
                        break  # leftovers hold the output open: stopped below
                    wait = left if wait is None else min(wait, left)
                elif pidfd is None:
                    wait = 0.05 if wait is None else min(wait, 0.05)
                for key, _ in sel.select(wait):
                    if key.fd == pidfd:
                        sel.unregister(pidfd)
                        proc.wait()
                        exited_at = time.monotonic()
                    elif key.fd == wake_r:
                        with contextlib.suppress(OSError):
                            os.read(wake_r, 64)
                    elif key.fd == out_fd and out_open and _read_available(out_fd, job.log.append):
                        sel.unregister(out_fd)
                        out_open = False
        except Exception as exc:  # never leave a job "running" because of a bug here
            job.error = str(exc)
            reason = "failed"
        finally:
            clean = reason == "exited" and exited_at is not None and not out_open and not job._stop.is_set()
            if not clean:
                tree.kill(KILL_GRACE_S)
            if out_open:
                _drain({out_fd}, {out_fd: job.log.append}, None)
            sel.close()
            for fd in (pidfd, wake_r):
                if fd is not None:
                    with contextlib.suppress(OSError):
                        os.close(fd)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
            job._wake_w = None
            with contextlib.suppress(OSError):
                os.close(wake_w)
            if clean:
                _sweep_later(tree)  # what it left running in the background, found through /proc
            else:
                tree.forget()
            job.exit_code = proc.returncode
            job.ended_at = _now()
            if reason == "exited" and job._stop.is_set() and job._stop_reason == "killed":
                reason = "killed"
            job.state = reason
            job.log.version += 1
            job._done.set()

    def track(self, title: str, command: str, *, started_at: float, stop: threading.Event) -> Job:
        """Record work the server does on its own thread (an action's git fetch, a formatting) as a job
        with no process: listed, read and waited on like any job. ``cancel`` sets ``stop`` (the work
        passes it on to ``run``, which then stops its command); the work ends the job with :meth:`finish`."""
        job = Job(
            id=f"job-{next(_ids)}", title=title, command=command, cwd=".", started_at=started_at, _stop=stop
        )
        with self.lock:
            self.jobs[job.id] = job
            self._forget_old()
        return job

    def finish(self, job: Job, error: str | None = None) -> None:
        """End a job made by :meth:`track`: "exited" with exit code 0, or, given ``error``, "failed"
        (or "killed" when it was cancelled) with no exit code and the error as its output."""
        if error is not None:
            job.log.append(f"{error}\n".encode())
            job.error = error
        job.exit_code = 0 if error is None else None
        job.ended_at = _now()
        job.state = "exited" if error is None else "killed" if job._stop.is_set() else "failed"
        job.log.version += 1
        job._done.set()

    def _forget_old(self) -> None:
        finished = [j for j in self.jobs.values() if not j.running]
        for job in finished[: max(0, len(finished) - MAX_KEPT_JOBS)]:
            self.jobs.pop(job.id, None)

    def get(self, job_id: str) -> Job:
        with self.lock:
            job = self.jobs.get(job_id)
        if job is None:
            raise ToolFailure(
                f"not found: no job {job_id!r} in this workspace (list_jobs shows the jobs)", kind="not_found"
            )
        return job

    def list(self) -> list[Job]:
        with self.lock:
            return list(self.jobs.values())

    def send(self, job_id: str, data: bytes, *, close: bool = False) -> int:
        job = self.get(job_id)
        if not job.running:
            raise ToolFailure(f"conflict: job {job_id!r} has ended ({job.state})", kind="conflict")
        proc = job._proc
        if not job.has_stdin or proc is None or proc.stdin is None:
            raise ToolFailure(
                f"refused: job {job_id!r} was started without stdin (rule: commands get no input unless "
                "started with stdin=true)",
                kind="refused",
            )
        with job._stdin_lock:
            if proc.stdin.closed:
                raise ToolFailure(f"conflict: the input of job {job_id!r} is already closed", kind="conflict")
            fd = proc.stdin.fileno()
            written = 0
            deadline = time.monotonic() + 10
            try:
                view = memoryview(data)
                while view:
                    if time.monotonic() > deadline:
                        raise ToolFailure(
                            f"unavailable: job {job_id!r} is not reading its input ({written} bytes sent)",
                            kind="unavailable",
                        )
                    try:
                        n = os.write(fd, view)
                    except BlockingIOError:
                        time.sleep(0.01)
                        continue
                    written += n
                    view = view[n:]
            except BrokenPipeError:
                raise ToolFailure(f"conflict: job {job_id!r} closed its input", kind="conflict") from None
            if close:
                proc.stdin.close()
        return written

    def cancel(self, job_id: str, *, wait_s: float = KILL_GRACE_S + 3) -> Job:
        job = self.get(job_id)
        self._stop(job)
        job._done.wait(wait_s)
        return job

    def _stop(self, job: Job) -> None:
        job._stop_reason = "killed"
        job._stop.set()
        if job._wake_w is not None:
            with contextlib.suppress(OSError):
                os.write(job._wake_w, b"x")

    def follow_roots(self, roots: list[Path]) -> bool:
        """The workspace's roots changed: kill the jobs started in a folder no root holds now (as
        ``cancel_job`` does); the others keep running and stay readable. The service stays."""
        jobs = self.list()
        gone = [j for j in jobs if j.running and not _inside_any(j._where, roots)]
        for job in gone:
            self._stop(job)
        for job in jobs:
            if job._where is not None:
                job.cwd = _cwd_label(job._where, roots[0])
        for job in gone:
            job._done.wait(KILL_GRACE_S + 3)
        return True

    def close(self) -> None:
        """Kill every job's tree (workspace close, server exit)."""
        self.closed = True
        jobs = self.list()
        for job in jobs:
            if job.running:
                self._stop(job)
        for job in jobs:
            job._done.wait(KILL_GRACE_S + 3)


# ---------------------------------------------------------------------------------------------
# Terminals

_ESCAPE = re.compile(
    rb"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC ... BEL/ST
    rb"|\x1b[P^_X][^\x1b]*\x1b\\"  # DCS/PM/APC/SOS ... ST
    rb"|\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    rb"|\x1b(?![\[\]P^_X])[ -/]*[0-~]"  # two-byte and charset escapes
)
_ANSI = re.compile(
    _ESCAPE.pattern + rb"|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]"
)  # + other C0 controls (keeps \t \n \r)
_CRLF = re.compile(rb"\r+\n")
_MARK = re.compile(rb"\x1b\]633;D;(-?\d+)\x07")
_PROMPT_MARK = "\x1b]633;D;%s\x07"
PROMPT = "$ "


class TerminalFilter:
    """Turns a pty byte stream into plain text (escapes out, CRLF → LF) and finds prompt markers."""

    def __init__(self) -> None:
        self.carry = b""

    def feed(self, data: bytes) -> tuple[bytes, list[tuple[int, int]]]:
        """``(text, marks)``; each mark is (position in text, exit code) of a finished command."""
        data = self.carry + data
        self.carry = b""
        esc = data.rfind(b"\x1b", max(0, len(data) - 512))
        if esc != -1 and not _complete_escape(data, esc):
            data, self.carry = data[:esc], data[esc:]
        if data.endswith(b"\r"):
            kept = data.rstrip(b"\r")
            data, self.carry = kept, data[len(kept) :] + self.carry
        out = bytearray()
        marks: list[tuple[int, int]] = []
        pos = 0
        for m in _MARK.finditer(data):
            out += _plain(data[pos : m.start()])
            marks.append((len(out), int(m.group(1))))
            pos = m.end()
        out += _plain(data[pos:])
        return bytes(out), marks


def _complete_escape(data: bytes, at: int) -> bool:
    return _ESCAPE.match(data, at) is not None


def _plain(data: bytes) -> bytes:
    return _CRLF.sub(b"\n", _ANSI.sub(b"", data))


@dataclass
class TerminalCommand:
    command: str
    offset: int
    exit_code: int | None = None
    end_offset: int | None = None

    @property
    def finished(self) -> bool:
        return self.end_offset is not None


@dataclass
class Terminal:
    id: str
    name: str
    shell: str
    cwd: str
    created_at: float
    log: OutputLog = field(default_factory=lambda: OutputLog(TERMINAL_LOG_BYTES))
    commands: list[TerminalCommand] = field(default_factory=list)
    state: Literal["starting", "running", "exited", "killed"] = "starting"
    exit_code: int | None = None
    pid: int | None = None
    tracks_commands: bool = True
    ready: threading.Event = field(default_factory=threading.Event, repr=False)
    _master: int | None = field(default=None, repr=False)
    _proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _tree: ProcessTree | None = field(default=None, repr=False)
    _done: threading.Event = field(default_factory=threading.Event, repr=False)
    _write_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _stopping: bool = field(default=False, repr=False)
    _where: Path | None = field(default=None, repr=False)
    """The absolute folder it started in: which root the terminal belongs to."""

    @property
    def alive(self) -> bool:
        return self.state in ("starting", "running")

    @property
    def busy(self) -> bool:
        """A command sent to it has not reached the next prompt yet."""
        return self.alive and any(not c.finished for c in self.commands)

    @property
    def last(self) -> TerminalCommand | None:
        return self.commands[-1] if self.commands else None

    def read(self, offset: int = 0, max_bytes: int = 100_000) -> tuple[str, int, int, int, bool]:
        data, start, nxt, skipped = self.log.read(offset, max_bytes, final=not self.alive)
        return decode(data), start, nxt, skipped, nxt < self.log.end


class Terminals:
    """A workspace's persistent shell sessions, each on its own pty."""

    COLS = 160
    ROWS = 48

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.terminals: dict[str, Terminal] = {}
        self.lock = threading.Lock()
        self.closed = False
        self._ids = itertools.count(1)
        _register_service(self)

    def create(
        self, *, name: str | None = None, cwd: str | None = None, env: Mapping[str, str | None] | None = None
    ) -> Terminal:
        if self.closed:
            raise ToolFailure("unavailable: the workspace is closing", kind="unavailable")
        with self.lock:
            alive = [t for t in self.terminals.values() if t.alive]
            if len(alive) >= MAX_TERMINALS:
                raise ToolFailure(
                    f"refused: {MAX_TERMINALS} terminals are already open in this workspace (rule: at most that "
                    "many; close one with kill_terminal)",
                    kind="refused",
                )
            for dead in [t for t in self.terminals.values() if not t.alive][
                : max(0, len(self.terminals) - 32)
            ]:
                self.terminals.pop(dead.id, None)
            term_id = f"terminal-{next(self._ids)}"
        shell = _SHELL
        bash = os.path.basename(shell) == "bash"
        # The prompt ends with an invisible marker carrying the last exit status: when it arrives the
        # prompt is fully printed and the shell waits for the next command.
        extra: dict[str, str | None] = {
            "PS1": PROMPT + (_PROMPT_MARK % "$?" if bash else ""),
            "PS2": "> ",
            "HISTFILE": "",
            "PAGER": "cat",
            "GIT_PAGER": "cat",
        }
        extra["COLUMNS"], extra["LINES"] = str(self.COLS), str(self.ROWS)
        extra.update(env or {})
        argv = [shell, "--noprofile", "--norc", "--noediting", "-i"] if bash else [shell, "-i"]
        prep = prepare(argv, ws=self.ws, cwd=cwd, env=extra, term="xterm-256color")
        term = Terminal(
            id=term_id,
            name=name or term_id,
            shell=shell,
            cwd=_cwd_label(prep.cwd, self.ws.root),
            created_at=_now(),
            tracks_commands=bash,
            _where=prep.cwd,
        )
        started = threading.Event()
        failure: list[BaseException] = []
        threading.Thread(
            target=self._run, args=(term, prep, started, failure), name=f"mcp-ide-{term_id}", daemon=True
        ).start()
        started.wait()
        if failure:
            raise failure[0]
        with self.lock:
            self.terminals[term.id] = term
        if bash:
            term.ready.wait(5)
        else:
            time.sleep(0.1)
            term.ready.set()
        return term

    def _run(
        self, term: Terminal, prep: Prepared, started: threading.Event, failure: list[BaseException]
    ) -> None:
        master, slave = os.openpty()
        with contextlib.suppress(OSError):
            fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", self.ROWS, self.COLS, 0, 0))
        try:
            proc, tree = _popen(prep, stdin=slave, stdout=slave, stderr=slave, pdeathsig=True, ctty=True)
        except BaseException as exc:
            failure.append(exc)
            os.close(master)
            os.close(slave)
            started.set()
            return
        os.close(slave)
        os.set_blocking(master, False)
        term._master, term._proc, term._tree, term.pid = master, proc, tree, proc.pid
        term.state = "running"
        started.set()
        filt = TerminalFilter()

        def sink(data: bytes) -> None:
            text, marks = filt.feed(data)
            base = term.log.end
            term.log.append(text)
            for pos, code in marks:
                if not term.ready.is_set():
                    term.ready.set()
                    continue
                pending = next((c for c in term.commands if not c.finished), None)
                if pending is not None:
                    pending.exit_code = code
                    end = pos - len(PROMPT) if text[:pos].endswith(PROMPT.encode()) else pos
                    pending.end_offset = base + max(0, end)
            if marks:
                term.log.version += 1

        sel = selectors.DefaultSelector()
        sel.register(master, selectors.EVENT_READ)
        try:
            while True:
                events = sel.select(0.5)
                if term._stopping:
                    break
                if events and _read_available(master, sink):
                    break
                if not events and proc.poll() is not None:
                    _read_available(master, sink)
                    break
        except Exception:
            pass
        finally:
            sel.close()
            tree.kill(KILL_GRACE_S if not term._stopping else 0.5)
            with contextlib.suppress(OSError):
                os.close(master)
            term._master = None
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)
            tree.forget()
            term.exit_code = proc.returncode
            term.state = "killed" if term._stopping else "exited"
            for c in term.commands:
                if not c.finished:
                    c.end_offset = term.log.end
            term.ready.set()
            term.log.version += 1
            term._done.set()

    def get(self, term_id: str) -> Terminal:
        with self.lock:
            term = self.terminals.get(term_id)
        if term is None:
            raise ToolFailure(
                f"not found: no terminal {term_id!r} in this workspace (list_terminals shows them)",
                kind="not_found",
            )
        return term

    def list(self) -> list[Terminal]:
        with self.lock:
            return list(self.terminals.values())

    def idle_or_new(self) -> Terminal:
        """The first idle live terminal, or a new one."""
        for term in self.list():
            if term.alive and not term.busy:
                return term
        return self.create()

    def write(self, term: Terminal, data: bytes) -> None:
        if not term.alive or term._master is None:
            raise ToolFailure(f"conflict: terminal {term.id!r} has ended ({term.state})", kind="conflict")
        with term._write_lock:
            view = memoryview(data)
            deadline = time.monotonic() + 10
            while view:
                fd = term._master
                if fd is None:
                    raise ToolFailure(f"conflict: terminal {term.id!r} has ended", kind="conflict")
                try:
                    view = view[os.write(fd, view[:1024]) :]
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise ToolFailure(
                            f"unavailable: terminal {term.id!r} is not reading its input", kind="unavailable"
                        ) from None
                    time.sleep(0.01)
                except OSError:
                    raise ToolFailure(f"conflict: terminal {term.id!r} has ended", kind="conflict") from None

    def execute(self, term: Terminal, command: str) -> TerminalCommand:
        """Type ``command`` and Enter into the terminal's shell."""
        if "\x00" in command:
            raise ToolFailure("invalid command: it contains a NUL byte")
        lines = command.rstrip("\n").split("\n")
        if any(len(line.encode()) > 4000 for line in lines):
            raise ToolFailure(
                "too large: a terminal takes lines of at most 4000 bytes (rule: the terminal line buffer is 4 KB); "
                "use run_command_on_background or start_job for long commands, or write a script file and run it",
                kind="too_large",
            )
        record = TerminalCommand(command=command, offset=term.log.end)
        with self.lock:
            term.commands.append(record)
            del term.commands[:-200]
        self.write(term, ("\n".join(lines) + "\n").encode())
        return record

    def kill(self, term_id: str) -> Terminal:
        term = self.get(term_id)
        self._stop(term)
        term._done.wait(5)
        return term

    def _stop(self, term: Terminal) -> None:
        term._stopping = True
        if term._tree is not None:
            threading.Thread(target=term._tree.kill, args=(0.5,), daemon=True).start()

    def follow_roots(self, roots: list[Path]) -> bool:
        """The workspace's roots changed: close the terminals opened in a folder no root holds now;
        the others stay open. The service stays."""
        terms = self.list()
        gone = [t for t in terms if t.alive and not _inside_any(t._where, roots)]
        for term in gone:
            self._stop(term)
        for term in terms:
            if term._where is not None:
                term.cwd = _cwd_label(term._where, roots[0])
        for term in gone:
            term._done.wait(5)
        return True

    def close(self) -> None:
        self.closed = True
        terms = self.list()
        for term in terms:
            if term.alive:
                self._stop(term)
        for term in terms:
            term._done.wait(5)


def _cwd_label(where: Path, root: Path) -> str:
    """A working directory as jobs and terminals show it: relative to the primary root."""
    rel = os.path.relpath(where, root)
    return "." if rel == "." else rel


def _inside_any(where: Path | None, roots: list[Path]) -> bool:
    return where is None or any(where == r or where.is_relative_to(r) for r in roots)


# ---------------------------------------------------------------------------------------------
# Shutdown: nothing outlives the server


_SERVICES: weakref.WeakSet[Any] = weakref.WeakSet()


def _register_service(service: Any) -> None:
    with _TREES_LOCK:
        _SERVICES.add(service)
    _ensure_atexit()


def kill_all() -> None:
    """Kill every job, terminal and running command of every workspace (server shutdown)."""
    with _TREES_LOCK:
        services = list(_SERVICES)
        trees = list(_ALL_TREES)
    threads = [threading.Thread(target=s.close, daemon=True) for s in services]
    for t in threads:
        t.start()
    for tree in trees:
        if not tree.done:
            with contextlib.suppress(Exception):
                tree.signal_all(signal.SIGKILL)
    for t in threads:
        t.join(10)
    # Last sweep: anything a closing service or a finished command left behind.
    with contextlib.suppress(Exception):
        procs = scan_proc()
        for tree in trees:
            members = tree.members(procs)
            if members:
                tree.signal_all(signal.SIGKILL, members)


_atexit_done = False


def _ensure_atexit() -> None:
    global _atexit_done
    if not _atexit_done:
        _atexit_done = True
        atexit.register(kill_all)


def install_exit_hooks() -> None:
    """Kill every child on SIGTERM/SIGHUP as well as at normal exit. Call from the main thread."""
    _ensure_atexit()

    def handler(signum: int, frame: Any) -> None:
        kill_all()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        previous = signal.getsignal(sig)
        if previous in (signal.SIG_DFL, None):
            signal.signal(sig, handler)

"""A workspace's persistent shell sessions, each on its own pty.

The shell's prompt ends with an invisible marker carrying the last exit status, so
:class:`TerminalFilter` knows when a command typed into the terminal has finished (and how);
the pty stream is kept as plain text (escapes out, CRLF to LF) in an :class:`~.capture.OutputLog`.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import os
import re
import selectors
import struct
import subprocess
import termios
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..failures import ToolFailure
from .capture import OutputLog, decode, read_available
from .command import cwd_label, default_shell, inside_any, prepare
from .containment import KILL_GRACE_S, Prepared, ProcessTree, spawn
from .sendable import check_sendable
from .shutdown import register_service

if TYPE_CHECKING:
    from ...workspace import Workspace

TERMINAL_LOG_BYTES = 1 << 20
MAX_TERMINALS = 8

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
    """A command typed into a terminal: where its output starts and, once the prompt is back, ends."""

    command: str
    offset: int
    exit_code: int | None = None
    end_offset: int | None = None

    @property
    def finished(self) -> bool:
        return self.end_offset is not None


@dataclass
class Terminal:
    """One shell on a pty: its output log and the commands typed into it (``_`` fields: the engine's)."""

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
        register_service(self)

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
        shell = default_shell()
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
            cwd=cwd_label(prep.cwd, self.ws.root),
            created_at=time.time(),
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
            proc, tree = spawn(prep, stdin=slave, stdout=slave, stderr=slave, pdeathsig=True, ctty=True)
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
                if events and read_available(master, sink):
                    break
                if not events and proc.poll() is not None:
                    read_available(master, sink)
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
        check_sendable(command, "command")
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
        gone = [t for t in terms if t.alive and not inside_any(t._where, roots)]
        for term in gone:
            self._stop(term)
        for term in terms:
            if term._where is not None:
                term.cwd = cwd_label(term._where, roots[0])
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

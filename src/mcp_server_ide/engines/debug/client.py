"""A DAP client over one adapter process: requests with blocking answers, events, reverse requests.

The adapter is spawned *by the reader thread* (``PR_SET_PDEATHSIG`` follows the spawning thread, and
this thread lives as long as the adapter), through the process engine's :func:`spawn`, so it runs
contained: own session and process group, scrubbed environment, tracked :class:`ProcessTree`.
Outgoing requests are checked against the protocol's schema (:mod:`.protocol`).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import socket
import subprocess
import threading
from collections.abc import Callable
from typing import IO, Any

from ..failures import ToolFailure
from ..processes.containment import Prepared, ProcessTree, spawn
from .protocol import check_request
from .wire import FrameReader, WireError, encode

log = logging.getLogger(__name__)

REQUEST_TIMEOUT_S = 15.0

EventHandler = Callable[[str, dict[str, Any]], None]
ReverseHandler = Callable[[str, dict[str, Any]], dict[str, Any]]


def _last_lines(text: str) -> str:
    """An adapter's error text without the program's traceback (its last line names the error)."""
    if "Traceback (most recent call last)" in text:
        lines = [ln for ln in text.strip().splitlines() if ln.strip()]
        head = text.split("Traceback (most recent call last)", 1)[0].strip().rstrip(":")
        return f"{head}: {lines[-1].strip()}" if head else lines[-1].strip()
    return text[:2000]


class _Pending:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.message: dict[str, Any] | None = None


class DapClient:
    """One connection to one adapter: a process :meth:`start` spawns from ``prep`` (and :meth:`close` kills
    with its tree) and talks to on stdio, or on the unix socket ``listen`` it was told to serve on; or,
    given ``connect``, an adapter already listening on a loopback port (debugpy's ``--listen`` in a
    program the workspace started) or unix socket (a js-debug server's child session), which
    :meth:`close` only disconnects from."""

    def __init__(
        self,
        prep: Prepared | None,
        on_event: EventHandler,
        on_reverse: ReverseHandler,
        connect: tuple[str, int] | str | None = None,
        listen: str | None = None,
    ) -> None:
        self.prep = prep
        self.connect = connect
        self.listen = listen
        """With ``prep``: the adapter is a DAP server told to listen on this unix socket (js-debug)."""
        self.sock: socket.socket | None = None
        self._out: IO[bytes] | None = None
        self.on_event = on_event
        self.on_reverse = on_reverse
        self.proc: subprocess.Popen[bytes] | None = None
        self.tree: ProcessTree | None = None
        self.closed = threading.Event()
        self._seq = itertools.count(1)
        self._pending: dict[int, _Pending] = {}
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()

    def start(self) -> None:
        started = threading.Event()
        failure: list[BaseException] = []
        thread = threading.Thread(target=self._run, args=(started, failure), name="mcp-ide-dap", daemon=True)
        thread.start()
        started.wait()
        if failure:
            raise failure[0]

    def _open(self) -> IO[bytes]:
        """Spawn the adapter or connect to it; returns the stream its messages come on."""
        if self.connect is not None:
            return self._connect(self.connect)
        assert self.prep is not None
        self.proc, self.tree = spawn(
            self.prep,
            stdin=subprocess.DEVNULL if self.listen else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            pdeathsig=True,
        )
        assert self.proc.stdout is not None
        if self.listen is not None:
            first = self.proc.stdout.readline(4096)  # "Debug server listening at <path>"
            if not first:
                raise ToolFailure(
                    "unavailable: the debug adapter ended before it listened", kind="unavailable"
                )
            out = self.proc.stdout
            threading.Thread(target=lambda: all(iter(lambda: out.read(65536), b"")), daemon=True).start()
            return self._connect(self.listen)
        assert self.proc.stdin is not None
        self._out = self.proc.stdin
        return self.proc.stdout

    def _connect(self, where: tuple[str, int] | str) -> IO[bytes]:
        try:
            if isinstance(where, str):
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.settimeout(5)
                self.sock.connect(where)
            else:
                self.sock = socket.create_connection(where, timeout=5)
        except OSError as exc:
            what = "its socket" if isinstance(where, str) else f"port {where[1]}"
            raise ToolFailure(
                f"unavailable: cannot connect to the debugger on {what}: {exc.strerror or exc}",
                kind="unavailable",
            ) from None
        self.sock.settimeout(None)
        self._out = self.sock.makefile("wb")
        return self.sock.makefile("rb")

    def _run(self, started: threading.Event, failure: list[BaseException]) -> None:
        try:
            stream = self._open()
        except BaseException as exc:
            failure.append(exc)
            started.set()
            return
        started.set()
        reader = FrameReader(stream)
        try:
            while True:
                message = reader.read()
                if message is None:
                    break
                self._dispatch(message)
        except (WireError, ValueError, OSError) as exc:
            log.warning("debug adapter connection ended: %s", exc)
        finally:
            self.closed.set()
            with self._lock:
                pending = list(self._pending.values())
            for p in pending:
                p.done.set()
            self.on_event("_closed", {})

    def _dispatch(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "response":
            with self._lock:
                waiter = self._pending.pop(message.get("request_seq", -1), None)
            if waiter is not None:
                waiter.message = message
                waiter.done.set()
        elif kind == "event":
            try:
                self.on_event(str(message.get("event")), message.get("body") or {})
            except Exception:
                log.exception("debug event handler failed")
        elif kind == "request":
            threading.Thread(target=self._answer_reverse, args=(message,), daemon=True).start()

    def _answer_reverse(self, message: dict[str, Any]) -> None:
        command = str(message.get("command"))
        reply: dict[str, Any] = {"type": "response", "request_seq": message.get("seq"), "command": command}
        try:
            reply |= {"success": True, "body": self.on_reverse(command, message.get("arguments") or {})}
        except Exception as exc:
            reply |= {"success": False, "message": str(exc)}
        self._send(reply)

    def _send(self, message: dict[str, Any]) -> None:
        message.setdefault("seq", self._next_seq())
        out = self._out
        if out is None or self.closed.is_set():
            raise ToolFailure("conflict: the debug adapter has ended", kind="conflict")
        with self._write_lock:
            try:
                out.write(encode(message))
                out.flush()
            except OSError:
                raise ToolFailure("conflict: the debug adapter has ended", kind="conflict") from None

    def send_request(self, command: str, arguments: dict[str, Any] | None = None) -> _Pending:
        """Send a request; returns the waiter for its response (see :meth:`answer`)."""
        arguments = arguments or {}
        check_request(command, arguments)
        waiter = _Pending()
        seq = self._next_seq()
        with self._lock:
            self._pending[seq] = waiter
        try:
            self._send({"type": "request", "seq": seq, "command": command, "arguments": arguments})
        except BaseException:
            with self._lock:
                self._pending.pop(seq, None)
            raise
        return waiter

    def _next_seq(self) -> int:
        with self._lock:
            return next(self._seq)

    def answer(self, command: str, waiter: _Pending, timeout_s: float = REQUEST_TIMEOUT_S) -> dict[str, Any]:
        """The body of ``waiter``'s response; a failed response or silence is a ToolFailure."""
        if not waiter.done.wait(timeout_s):
            raise ToolFailure(
                f"unavailable: the debug adapter did not answer {command!r} within {timeout_s:g} s",
                kind="unavailable",
            )
        message = waiter.message
        if message is None:
            raise ToolFailure(
                f"conflict: the debug adapter ended before answering {command!r}", kind="conflict"
            )
        if not message.get("success"):
            text = (
                message.get("message")
                or (message.get("body") or {}).get("error", {}).get("format")
                or "failed"
            )
            text = _last_lines(str(text))
            raise ToolFailure(f"refused: the debugger answered {command!r} with: {text}", kind="refused")
        return message.get("body") or {}

    def request(
        self, command: str, arguments: dict[str, Any] | None = None, timeout_s: float = REQUEST_TIMEOUT_S
    ) -> dict[str, Any]:
        return self.answer(command, self.send_request(command, arguments), timeout_s)

    def close(self, grace_s: float = 1.0) -> None:
        """Kill the adapter and everything it started (its launcher, a debuggee it spawned)."""
        if self._out is not None:
            with contextlib.suppress(OSError):
                self._out.close()
        if self.sock is not None:
            with contextlib.suppress(OSError):
                self.sock.shutdown(socket.SHUT_RDWR)
            self.sock.close()
        if self.tree is not None:
            self.tree.kill(grace_s)
            self.tree.forget()
        if self.proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(5)

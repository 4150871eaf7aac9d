"""The channel to the VS Code companion extension: JSON lines over a private Unix socket.

The extension listens on a socket in a folder only its user can enter (0700) and hands the
server the socket's path and a random token in its environment (:data:`SOCKET_VAR`,
:data:`TOKEN_VAR`; never argv, never a file). The server connects, says ``hello`` with the
token (a peer without it is refused and cut off by the extension), then sends requests
``{"id": n, "method": m, "params": {...}}`` and reads ``{"id": n, "result": ...}`` or
``{"id": n, "error": {"message": ..., "kind": ...}}``, one JSON object a line.

Every request has a deadline (:data:`TIMEOUT`, 1 s). When the extension does not answer
(gone, hung, wrong token) :class:`Channel` raises :class:`BridgeDown` and stays down for
:data:`RETRY` seconds, so callers fall back at once; then the next call tries to connect
again, which is how the server comes back to a restarted extension.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

from ..failures import FailureKind, ToolFailure

SOCKET_VAR = "MCP_IDE_BRIDGE_SOCKET"
TOKEN_VAR = "MCP_IDE_BRIDGE_TOKEN"
TIMEOUT = 1.0
"""Seconds a request (or connecting and saying hello) may take before the extension counts as gone."""
RETRY = 3.0
"""Seconds after a failure before the channel tries to connect again."""
MAX_LINE = 64 << 20
"""The largest answer line accepted (a whole file's text travels in one line)."""


class BridgeDown(Exception):
    """The extension did not answer (not listening, gone, hung, or refused the token)."""

    sent = False
    """True when the request was sent before the channel failed: VS Code may have acted on it."""


@dataclass(frozen=True)
class Address:
    socket: str
    token: str


_env_address: Address | None = None
_env_read = False
_env_lock = threading.Lock()


def address_from_env() -> Address | None:
    """The bridge address the extension gave this process, read once from the environment and
    then removed from ``os.environ`` (children never see it; SECURITY.md §4). None without one."""
    global _env_address, _env_read
    with _env_lock:
        if not _env_read:
            _env_read = True
            path = os.environ.pop(SOCKET_VAR, "")
            token = os.environ.pop(TOKEN_VAR, "")
            if path and token:
                _env_address = Address(path, token)
        return _env_address


class Channel:
    """One connection to the extension, used by one request at a time; reconnects after :data:`RETRY`."""

    def __init__(self, address: Address, *, timeout: float = TIMEOUT, retry: float = RETRY) -> None:
        self.address = address
        self.timeout = timeout
        self.retry = retry
        self._sock: socket.socket | None = None
        self._buffer = b""
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._down_until = 0.0
        self.info: dict[str, Any] = {}
        """What the extension said in its hello answer (its version, VS Code's version)."""

    @property
    def connected(self) -> bool:
        return self._sock is not None

    def call(self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = None) -> Any:
        """Send one request and return its result (``timeout`` replaces the channel's deadline for this
        request). Raises :class:`BridgeDown` when the extension does not answer within the deadline
        (``sent`` tells whether the request may have reached it), ``ToolFailure`` when it answers
        with an error."""
        with self._lock:
            if self._sock is None:
                if time.monotonic() < self._down_until:
                    raise BridgeDown("the editor bridge is down (retrying shortly)")
                self._connect()
            try:
                return self._request(method, params or {}, timeout)
            except BridgeDown:
                self._drop()
                raise

    def close(self) -> None:
        with self._lock:
            self._drop(retry=False)

    # -- inside the lock -------------------------------------------------------------

    def _connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self.address.socket)
        except OSError as exc:
            sock.close()
            self._down_until = time.monotonic() + self.retry
            raise BridgeDown(f"cannot reach the editor bridge: {exc.strerror or exc}") from None
        self._sock, self._buffer = sock, b""
        try:
            info = self._request("hello", {"token": self.address.token, "pid": os.getpid()})
        except (BridgeDown, ToolFailure) as exc:
            self._drop()
            raise BridgeDown(f"the editor bridge refused this server: {exc}") from None
        self.info = info if isinstance(info, dict) else {}

    def _drop(self, *, retry: bool = True) -> None:
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()
        self._sock, self._buffer = None, b""
        if retry:
            self._down_until = time.monotonic() + self.retry

    def _request(self, method: str, params: dict[str, Any], timeout: float | None = None) -> Any:
        sock = self._sock
        assert sock is not None
        ident = next(self._ids)
        line = json.dumps({"id": ident, "method": method, "params": params}, ensure_ascii=False) + "\n"
        wait = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + wait
        sent = False
        try:
            sock.settimeout(wait)
            sock.sendall(line.encode("utf-8"))
            sent = True
            while True:
                answer = self._read_line(sock, deadline)
                if answer.get("id") == ident:
                    break  # an answer to an earlier request that timed out is skipped
        except (OSError, ValueError) as exc:
            down = BridgeDown(f"the editor bridge stopped answering ({method}): {exc}")
            down.sent = sent
            raise down from None
        error = answer.get("error")
        if error is not None:
            message = error.get("message") if isinstance(error, dict) else str(error)
            kind = error.get("kind") if isinstance(error, dict) else None
            raise ToolFailure(str(message or "the editor refused the request"), kind=_kind(kind))
        return answer.get("result")

    def _read_line(self, sock: socket.socket, deadline: float) -> dict[str, Any]:
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer within the deadline")
            sock.settimeout(left)
            chunk = sock.recv(1 << 16)
            if not chunk:
                raise ConnectionResetError("the extension closed the channel")
            self._buffer += chunk
            if len(self._buffer) > MAX_LINE:
                raise ValueError("an answer longer than the limit")
        line, _, self._buffer = self._buffer.partition(b"\n")
        value = json.loads(line)
        if not isinstance(value, dict):
            raise ValueError("an answer that is not a JSON object")
        return value


_KINDS: tuple[FailureKind, ...] = ("invalid", "refused", "not_found", "conflict", "unavailable", "too_large")


def _kind(value: object) -> FailureKind:
    for kind in _KINDS:
        if value == kind:
            return kind
    return "unavailable"

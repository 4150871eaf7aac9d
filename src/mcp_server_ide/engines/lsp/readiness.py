"""Whether a language server has loaded the project yet.

The server reports its loading with ``$/progress`` (work-done tokens it creates), for
rust-analyzer ``experimental/serverStatus``, or, for adapters with a ``ready_log``, log lines that
say it is busy or ready. :meth:`Readiness.wait` waits for those to finish (no fixed sleep); when
the wait runs out the caller gets the reason: the answer is marked partial, never complete.

The handlers run on the connection's reader thread and wake waiters through a condition that is
never held while waiting on the server.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable

from lsprotocol import types as lsp

Closed = Callable[[], bool]
"""True once the server's connection is gone (a waiter stops waiting then)."""


class Readiness:
    def __init__(self, server_name: str) -> None:
        self.server_name = server_name
        self._cond = threading.Condition()
        self._progress: dict[str, str] = {}
        self._quiescent: bool | None = None
        self._log_ready = True
        self._ready_log: tuple[str, str] | None = None

    def reset(self, ready_log: tuple[str, str] | None) -> None:
        """A new server process: nothing in progress; with ``ready_log`` (the adapter's (busy, ready)
        log patterns) it counts as loading until a ready line."""
        with self._cond:
            self._progress.clear()
            self._quiescent = None
            self._log_ready = ready_log is None
            self._ready_log = ready_log

    def clear_progress(self) -> None:
        """The process is gone: its progress tokens will never end."""
        with self._cond:
            self._progress.clear()
            self._cond.notify_all()

    def on_progress(self, params: lsp.ProgressParams) -> None:
        token = str(params.token)
        value = params.value if isinstance(params.value, dict) else {}
        kind = value.get("kind")
        with self._cond:
            if kind == "begin":
                self._progress[token] = str(value.get("title") or value.get("message") or "loading")
            elif kind == "report" and token in self._progress and value.get("message"):
                self._progress[token] = f"{self._progress[token].split(':')[0]}: {value['message']}"
            elif kind == "end":
                self._progress.pop(token, None)
            self._cond.notify_all()

    def on_log(self, params: lsp.LogMessageParams) -> None:
        """A ``window/logMessage``, matched against the adapter's (busy, ready) ``ready_log`` patterns."""
        patterns = self._ready_log
        message = getattr(params, "message", "") or ""
        if patterns is None:
            return
        busy, ready = patterns
        with self._cond:
            if re.search(ready, message):
                self._log_ready = True
            elif re.search(busy, message):
                self._log_ready = False
            self._cond.notify_all()

    def on_server_status(self, params: object) -> None:
        """rust-analyzer's ``experimental/serverStatus`` (an untyped object with ``quiescent``)."""
        with self._cond:
            if isinstance(params, dict):
                self._quiescent = bool(params.get("quiescent"))
            self._cond.notify_all()

    def loading(self) -> list[str]:
        """What the server says it is still doing (empty when idle)."""
        with self._cond:
            busy = list(self._progress.values())
            if self._quiescent is False:
                busy.append("indexing")
            if not self._log_ready:
                busy.append("finding the project's source files")
            return busy

    def wait(self, timeout: float, closed: Closed) -> str | None:
        """Wait until the server has loaded the project; None when ready, else why it is not yet."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                busy = self.loading()  # re-entering the condition's RLock
                if not busy:
                    return None
                left = deadline - time.monotonic()
                if left <= 0:
                    return f"{self.server_name} was still loading the project ({', '.join(busy)[:200]})"
                if closed():
                    return None
                self._cond.wait(min(left, 0.5))

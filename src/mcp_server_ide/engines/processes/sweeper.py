"""A background sweeper stops what a finished command left running, without delaying its result.

Daemons that called ``setsid`` and closed their output outlive the command's pipes; a finished
command's tree is handed to :func:`sweep_later`, and one thread checks trees in batches (one
``/proc`` scan for a burst of commands) and kills what is left.
"""

from __future__ import annotations

import contextlib
import threading
import time

from .containment import ProcessTree
from .procfs import scan_proc

SWEEP_BATCH_S = 0.1
"""Finished commands are checked for leftovers in batches, this long after they end."""


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


def sweep_later(tree: ProcessTree) -> None:
    _SWEEPER.add(tree)


def flush_sweeps(timeout: float = 10.0) -> None:
    """Block until background sweeps of finished commands are done (tests, shutdown)."""
    _SWEEPER.flush(timeout)

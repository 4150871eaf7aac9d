"""One project run: the chosen sources over the whole tree, each on its own thread, answered from
the last run of a source whose files are unchanged (see :mod:`.tree`).

A run serialises behind the one before it (two calls never check the same tree twice at once: the
second waits and then answers from the cache), reports how many sources are done, and can be
stopped (its commands are killed). When it outlives the caller's wait it is tracked as a job of the
process engine, which it ends when it finishes.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...workspace import Workspace
from ..failures import ToolFailure
from .model import SourceRun
from .sources import SOURCES, Skip
from .tree import Tree, scan

if TYPE_CHECKING:
    from ..processes import Job

log = logging.getLogger(__name__)


@dataclass
class Run:
    names: tuple[str, ...]
    started: float = field(default_factory=time.time)
    stop: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    results: dict[str, SourceRun] = field(default_factory=dict)
    cached: set[str] = field(default_factory=set)
    failed: dict[str, str] = field(default_factory=dict)
    finished_sources: int = 0
    running: set[str] = field(default_factory=set)
    job: Job | None = None

    def progress(self) -> tuple[int, int, str]:
        """(sources done, sources in all, what runs now)."""
        now = ", ".join(sorted(self.running)) or ("scanning the tree" if not self.results else "")
        return self.finished_sources, len(self.names), now


def execute(ws: Workspace, run: Run, last: dict[str, SourceRun], lock: threading.Lock) -> None:
    """Fill ``run.results`` (``last``: the previous run of each source, updated in place)."""
    tree: Tree = scan(ws)
    trust = "trusted" if ws.policy.trusted and not ws.policy.hosted else "untrusted"
    todo: list[tuple[str, object, str]] = []
    for name in run.names:
        source = SOURCES[name]()
        key = f"{trust}:{tree.key(*source.kinds)}"
        try:
            source.check(ws, tree)
        except Skip as skip:
            run.results[name] = SourceRun(name, skipped=str(skip), key=key)
            run.finished_sources += 1
            continue
        with lock:
            previous = last.get(name)
        if previous is not None and previous.key == key and previous.skipped is None:
            run.results[name] = previous
            run.cached.add(name)
            run.finished_sources += 1
            continue
        todo.append((name, source, key))

    def one(name: str, source: object, key: str) -> None:
        at = time.monotonic()
        try:
            files = source.run(ws, run.stop)  # type: ignore[attr-defined]
        except ToolFailure as exc:
            run.failed[name] = str(exc)
        except Exception as exc:  # a broken source must not hide the others
            log.exception("problems source %s failed", name)
            run.failed[name] = f"{type(exc).__name__}: {exc}"
        else:
            result = SourceRun(
                name, files=files, at=at, key=key, duration_ms=int((time.monotonic() - at) * 1000)
            )
            run.results[name] = result
            with lock:
                last[name] = result
        finally:
            run.running.discard(name)
            run.finished_sources += 1

    threads = []
    for name, source, key in todo:
        run.running.add(name)
        thread = threading.Thread(
            target=one, args=(name, source, key), name=f"mcp-ide-problems-{name}", daemon=True
        )
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join()

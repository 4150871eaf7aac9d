"""In-process work of actions (formatting, ``git fetch``), on worker threads.

In-process work runs on a worker thread and is given :data:`QUICK_S`: a failure by then is the
call's error; work still running then becomes a job of the process engine (with no process) whose
state ends "failed" with the error as its output. All of it shows in ``get_progress_indicators``
while it runs. Process work (tasks, tests, run configurations) is a job from the start.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ...call import Call, calling, current_or_none
from ...workspace import Workspace
from ..failures import ToolFailure
from ..progress import ProgressItem, item

if TYPE_CHECKING:
    from ..processes import Job, Jobs

log = logging.getLogger(__name__)

QUICK_S = 1.0
"""How long running an action waits for its in-process work: a failure by then is the answer."""


@dataclass
class Work:
    """In-process work of an action, on its own thread."""

    id: str
    title: str
    detail: str
    started: float
    stop: threading.Event = field(default_factory=threading.Event)
    """Set to stop it (cancel_job once it is a job, workspace close): the process engine stops on it."""
    finished: threading.Event = field(default_factory=threading.Event)
    failure: ToolFailure | None = None
    job: Job | None = None
    """The process engine's job that stands for it once it outlived :data:`QUICK_S`."""


class ActionWork:
    """In-process work started by actions (formatting, git fetch), shown by ``get_progress_indicators``.

    :meth:`wait` gives the caller the failure of work that ends quickly; work that runs longer
    becomes a job of the process engine (no process of its own), whose state ("exited", "failed",
    "killed") and output (the error) the job tools read.
    """

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._lock = threading.Lock()
        self._work: dict[str, Work] = {}
        self._count = 0

    def spawn(self, title: str, fn: Callable[[], object], detail: str = "") -> Work:
        with self._lock:
            self._count += 1
            work = Work(f"action-{self._count}", title, detail or title, time.time())
            self._work[work.id] = work
        # The journal names the call that started the work; the work stops on its own event and
        # neither reports to that call's caller (answered already) nor counts as its session's read.
        parent = current_or_none()
        call = Call(
            self.ws,
            door=parent.door if parent is not None else "action",
            tool=parent.tool if parent is not None else "execute_action_by_id",
            arguments=dict(parent.arguments) if parent is not None else {},
            cancelled=work.stop,
        )

        def body() -> None:
            failure: ToolFailure | None = None
            try:
                with calling(call):
                    fn()
            except ToolFailure as exc:
                failure = ToolFailure(f"{title} failed: {exc}", kind=exc.kind)
                log.info("action %s failed: %s", title, exc)
            except Exception as exc:
                failure = ToolFailure(f"{title} failed: {type(exc).__name__}: {exc}", kind="unavailable")
                log.exception("action %s failed", title)
            with self._lock:
                work.failure = failure
                work.finished.set()
                self._work.pop(work.id, None)
                job = work.job
            if job is not None:
                self.ws.service(_jobs_type()).finish(job, None if failure is None else str(failure))

        threading.Thread(target=body, name=f"mcp-ide-{work.id}", daemon=True).start()
        return work

    def wait(self, work: Work, timeout_s: float) -> Job | None:
        """Wait up to ``timeout_s`` for ``work``. Raises its failure when it failed by then; when it
        still runs, makes it a job of the process engine and returns that job (else None)."""
        if not work.finished.wait(timeout_s):
            with self._lock:
                if not work.finished.is_set():
                    work.job = self.ws.service(_jobs_type()).track(
                        work.title, work.detail, started_at=work.started, stop=work.stop
                    )
                    return work.job
        if work.failure is not None:
            raise ToolFailure(str(work.failure), kind=work.failure.kind)
        return None

    def progress_items(self) -> list[ProgressItem]:
        with self._lock:
            running = list(self._work.values())
        return [
            item(
                w.id,
                w.title,
                "action",
                cancellable=w.job is not None,
                message=w.detail if w.detail != w.title else None,
                job_id=None if w.job is None else w.job.id,
                elapsed_ms=int((time.time() - w.started) * 1000),
            )
            for w in running
        ]

    def follow_roots(self, roots: list[Path]) -> bool:
        """Stays, its work running on: each piece holds what it acts on since it started (a file, the
        repository), and a write it makes outside the new roots is refused like any other."""
        return True

    def close(self) -> None:
        with self._lock:
            running = list(self._work.values())
        for work in running:
            work.stop.set()


def _jobs_type() -> type[Jobs]:
    from ..processes import Jobs

    return Jobs

"""The workspace's problems: the last project run of each source, the problems single-file checks
found, the live diagnostics of running language servers, and what other providers add.

:class:`ProblemStore` is the workspace service behind ``get_project_problems`` and the
``ide://workspace/problems`` resource. For each (file, source) the newest observation wins: a
language server's publication newer than the project run replaces that run's problems of the same
engine for that file (basedpyright for Python, tsc for TS/JS), a ``get_file_problems`` ruff check
replaces the run's ruff problems of that file. Listeners (resource subscribers) hear when the
merged view changes; while any listens, a change to a file of the project re-runs the last project
run (debounced; unchanged sources answer from their cache) so a fix shows without a new call.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...workspace import Workspace
from .model import ByFile, Problem, SourceRun, problem, sort_key
from .providers import merged
from .runs import Run, execute
from .sources import relative
from .tree import CONFIG_NAMES, PYTHON, SCRIPT

log = logging.getLogger(__name__)

REFRESH_DEBOUNCE_S = 1.0
CHECK_DEBOUNCE_S = 0.2
LSP_ENGINE = {"python": "basedpyright", "typescript": "tsc"}
"""The project source whose problems a language's server replaces for the files it publishes."""
LSP_SEVERITY = {1: "error", 2: "warning", 3: "information", 4: "hint"}


class ProblemStore:
    def __init__(self, ws: Workspace) -> None:
        from ..lsp import servers

        self.ws = ws
        self._lock = threading.Lock()
        self.last: dict[str, SourceRun] = {}
        """The last successful run of each source (its cache)."""
        self.reported: dict[str, SourceRun] = {}
        """What the last project run said of each source it was asked for (ran, cached or skipped)."""
        self.failed: dict[str, str] = {}
        self.checked: dict[tuple[str, str], tuple[float, list[Problem]]] = {}
        """(file, source) -> (time, problems) of single-file checks (get_file_problems' ruff)."""
        self._current: Run | None = None
        self._listeners: list[Callable[[], None]] = []
        self._digest = ""
        self._timers: dict[str, threading.Timer] = {}
        self._dirty: dict[str, Path] = {}
        self._closed = False
        self._lsp = servers(ws)
        self._lsp.diagnostics_listeners.append(self._published)

    # ------------------------------------------------------------------ project runs
    def start(self, names: tuple[str, ...]) -> Run:
        """Start a project run of ``names`` (or join the running one when it covers them)."""
        with self._lock:
            current = self._current
            if current is not None and not current.done.is_set() and set(names) <= set(current.names):
                return current
            run = Run(names)
            self._current = run
        threading.Thread(
            target=self._execute, args=(run, current), name="mcp-ide-problems", daemon=True
        ).start()
        return run

    def _execute(self, run: Run, before: Run | None) -> None:
        if before is not None:
            before.done.wait()
        error: str | None = None
        try:
            execute(self.ws, run, self.last, self._lock)
        except Exception as exc:
            log.exception("the project problems run failed")
            error = f"{type(exc).__name__}: {exc}"
            run.failed["run"] = error
        with self._lock:
            for name, result in run.results.items():
                self.reported[name] = result
            for name in run.names:
                if name in run.failed:
                    self.failed[name] = run.failed[name]
                else:
                    self.failed.pop(name, None)
            run.done.set()
            job = run.job
        if job is not None:
            from ..processes import Jobs

            failures = "; ".join(f"{k}: {v}" for k, v in run.failed.items()) or None
            self.ws.service(Jobs).finish(job, failures)
        self._schedule("check", CHECK_DEBOUNCE_S, self._check)

    def track(self, run: Run) -> str:
        """Make ``run`` a job of the process engine (for a caller that stops waiting); its id."""
        from ..processes import Jobs

        with self._lock:
            if run.job is None and not run.done.is_set():
                run.job = self.ws.service(Jobs).track(
                    "Project problems", "get_project_problems: " + ", ".join(run.names),
                    started_at=run.started, stop=run.stop,
                )  # fmt: skip
            return run.job.id if run.job is not None else ""

    # ------------------------------------------------------------------ single-file checks
    def record_file(self, rel: str, source: str, problems: list[Problem]) -> None:
        """A single-file check's problems of ``source`` for ``rel`` (newer than any run before it)."""
        with self._lock:
            self.checked[(rel, source)] = (time.monotonic(), [dict(p) for p in problems])
        self._schedule("check", CHECK_DEBOUNCE_S, self._check)

    # ------------------------------------------------------------------ the merged view
    def view(self) -> dict[str, Any]:
        """Every problem known now, merged, grouped by file (see the module docstring)."""
        layers: dict[tuple[str, str], tuple[float, list[Problem]]] = {}
        with self._lock:
            reported = dict(self.reported)
            failed = dict(self.failed)
            checked = dict(self.checked)
        for name, result in reported.items():
            if result.skipped is None:
                for rel, found in result.files.items():
                    layers[(rel, name)] = (result.at, found)
        for key, entry in checked.items():
            if key not in layers or entry[0] > layers[key][0]:
                layers[key] = entry
        for server, path, at, diags in self._lsp.live_diagnostics():
            rel = relative(self.ws, str(path))
            if rel is None:
                continue
            engine = LSP_ENGINE.get(server.language, server.adapter.server_name)
            key = (rel, engine)
            if key not in layers or at > layers[key][0]:
                layers[key] = (at, [_from_lsp(d, server.adapter.server_name) for d in diags])
        by_file: ByFile = {}
        for (rel, _source), (_at, found) in sorted(layers.items()):
            if found:
                by_file.setdefault(rel, []).extend(found)
        by_file = merged(self.ws, by_file)  # other providers' (VS Code's), without what the server has
        ran = sorted(n for n, r in reported.items() if r.skipped is None)
        skipped = {n: r.skipped for n, r in sorted(reported.items()) if r.skipped is not None}
        skipped.update({n: f"failed: {why}" for n, why in failed.items()})
        return summary(
            by_file,
            ran=ran,
            skipped=skipped,
            live=sorted({s.adapter.server_name for s in self._lsp.running()}),
        )

    # ------------------------------------------------------------------ listening and refreshing
    def listen(self, listener: Callable[[], None]) -> Callable[[], None]:
        """``listener()`` is called when the merged view changes; returns the function that stops it."""
        with self._lock:
            self._listeners.append(listener)
            if not self._digest:
                self._digest = "pending"
        threading.Thread(target=self._prime, daemon=True).start()

        def stop() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return stop

    def _prime(self) -> None:
        digest = _digest(self.view())
        with self._lock:
            if self._digest == "pending":
                self._digest = digest

    def touched(self, path: Path) -> None:
        """A file changed (a tool's write or on disk): while anyone listens, refresh what it affects
        (debounced, on a timer thread: the writer never waits for it)."""
        if path.suffix not in PYTHON and path.suffix not in SCRIPT and path.name not in CONFIG_NAMES:
            return
        rel = relative(self.ws, str(path))
        with self._lock:
            if not self._listeners:
                return
            if rel is not None:
                self._dirty[rel] = path
        self._schedule("refresh", REFRESH_DEBOUNCE_S, self._refresh)

    def _recheck_ruff(self, rel: str, path: Path) -> None:
        from .. import sandbox, textio
        from ..code.ruff import ruff_problems
        from ..failures import ToolFailure

        try:
            resolved = sandbox.resolve(self.ws, rel)
            found = ruff_problems(self.ws, resolved, textio.read_text(resolved).text) if path.exists() else []
        except ToolFailure:
            found = []
        self.record_file(rel, "ruff", found)

    def _refresh(self) -> None:
        with self._lock:
            names = tuple(self.reported)
            dirty, self._dirty = self._dirty, {}
            recheck = [(rel, path) for rel, path in dirty.items() if (rel, "ruff") in self.checked]
        for rel, path in recheck:
            self._recheck_ruff(rel, path)
        if names:
            self.start(names)
        else:
            self._check()

    def notify_soon(self) -> None:
        """Something the view merges changed: listeners hear of it if the view did change."""
        self._schedule("check", CHECK_DEBOUNCE_S, self._check)

    def _published(self, path: Path) -> None:
        self._schedule("check", CHECK_DEBOUNCE_S, self._check)

    def _check(self) -> None:
        with self._lock:
            if not self._listeners:
                return
        digest = _digest(self.view())
        with self._lock:
            changed = digest != self._digest
            self._digest = digest
            listeners = list(self._listeners) if changed else []
        for listener in listeners:
            try:
                listener()
            except Exception:
                log.exception("a problems listener failed")

    def _schedule(self, name: str, delay: float, fn: Callable[[], None]) -> None:
        with self._lock:
            if self._closed:
                return
            old = self._timers.get(name)
            if old is not None:
                old.cancel()
            timer = self._timers[name] = threading.Timer(delay, fn)
            timer.daemon = True
            timer.start()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            timers, self._timers = list(self._timers.values()), {}
            run = self._current
        for timer in timers:
            timer.cancel()
        if run is not None:
            run.stop.set()
        if self._published in self._lsp.diagnostics_listeners:
            self._lsp.diagnostics_listeners.remove(self._published)


def summary(by_file: ByFile, **extra: Any) -> dict[str, Any]:
    """``{files: [{path, problems}], counts, bySource, ...extra}``, files by path, problems by position."""
    files = []
    counts: dict[str, int] = {}
    by_source: dict[str, int] = {}
    for rel in sorted(by_file):
        found = sorted(by_file[rel], key=sort_key)
        for p in found:
            counts[p["severity"]] = counts.get(p["severity"], 0) + 1
            by_source[p["source"]] = by_source.get(p["source"], 0) + 1
        files.append({"path": rel, "problems": found})
    return {"files": files, "counts": counts, "bySource": by_source, **{k: v for k, v in extra.items() if v}}


def _from_lsp(d: Any, server_name: str) -> Problem:
    return problem(
        d.source or server_name,
        LSP_SEVERITY.get(int(d.severity or 1), "error"),
        str(d.code) if d.code is not None else "",
        d.message,
        (d.range.start.line, d.range.start.character),
        (d.range.end.line, d.range.end.character),
    )


def _digest(view: dict[str, Any]) -> str:
    return hashlib.blake2b(json.dumps(view["files"], sort_keys=True).encode(), digest_size=16).hexdigest()


def store(ws: Workspace) -> ProblemStore:
    return ws.service(ProblemStore)

"""Problems of the whole project: each engine's project-wide check, cached on the tree's state,
merged with what language servers and other providers know, for ``get_project_problems`` and
the ``ide://workspace/problems`` resource.

- :mod:`.model`: a problem, a source's answer; :mod:`.tree`: the tree's state (cache keys).
- :mod:`.sources`: basedpyright, tsc, ruff and the project's eslint, run the fast way each offers.
- :mod:`.runs`: one project run (sources in parallel, cached ones answered at once).
- :mod:`.store`: the workspace service: last runs, single-file checks, live diagnostics, listeners.
- :mod:`.providers`: the seam where other diagnostics providers (the VS Code bridge) add theirs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ...workspace import Workspace
from ..failures import ToolFailure
from ..search.globs import matcher
from .model import RANK, SEVERITIES, Problem
from .providers import add_provider, changed, for_file, merged
from .runs import Run
from .sources import SOURCES, relative
from .store import ProblemStore, store, summary

__all__ = [
    "SEVERITIES",
    "SOURCES",
    "ProblemStore",
    "Run",
    "add_provider",
    "answer",
    "changed",
    "for_file",
    "record_file",
    "start",
    "touched",
    "watch",
    "workspace_problems",
]


def start(ws: Workspace, sources: Sequence[str] | None) -> Run:
    """Start (or join) a project run of ``sources`` (default: every source)."""
    names = tuple(dict.fromkeys(sources)) if sources else tuple(SOURCES)
    unknown = [n for n in names if n not in SOURCES]
    if unknown:
        raise ToolFailure(
            f"invalid sources: {', '.join(map(repr, unknown))} (rule: a source is one of {', '.join(SOURCES)})"
        )
    return store(ws).start(names)


def answer(
    run: Run,
    *,
    sources: Sequence[str] | None = None,
    paths: Sequence[str] = (),
    min_severity: str = "hint",
    offset: int = 0,
    max_results: int = 100,
    ws: Workspace | None = None,
) -> dict[str, Any]:
    """A finished run as ``{files: [{path, problems}], counts, bySource, ran, skipped, cached?, total,
    truncated?, nextOffset?}``: files whose path matches ``paths`` (globs), problems at least as
    severe as ``min_severity``, of ``sources`` (default: the run's, and with ``ws`` what other
    providers such as VS Code know, without duplicates; a joined run may hold more);
    ``max_results`` files from ``offset``, counts over all of them."""
    names = [n for n in run.names if not sources or n in sources]
    test: Callable[[str], bool] | None = matcher(tuple(paths))
    floor = RANK[min_severity]
    by_file: dict[str, list[Problem]] = {}
    for name in names:
        result = run.results.get(name)
        if result is None or result.skipped is not None:
            continue
        for rel, found in result.files.items():
            if test is not None and not test(rel):
                continue
            kept = [p for p in found if RANK.get(p["severity"], 4) <= floor]
            if kept:
                by_file.setdefault(rel, []).extend(kept)
    if ws is not None and not sources:
        by_file = {
            rel: kept
            for rel, found in merged(ws, by_file).items()
            if (test is None or test(rel))
            and (kept := [p for p in found if RANK.get(p["severity"], 4) <= floor])
        }
    failed = {n: why for n, why in run.failed.items() if n in names or n == "run"}
    skipped = {n: r.skipped for n, r in run.results.items() if r.skipped is not None and n in names}
    skipped.update({n: f"failed: {why}" for n, why in failed.items()})
    out = summary(
        by_file,
        ran=[n for n in names if n in run.results and run.results[n].skipped is None],
        skipped={n: skipped[n] for n in sorted(skipped)},
        cached=sorted(n for n in run.cached if n in names),
    )
    total = len(out["files"])
    out["files"] = out["files"][offset : offset + max_results]
    out["total"] = total
    end = offset + len(out["files"])
    if end < total:
        out["truncated"] = True
        out["nextOffset"] = end
    if failed:
        out["partial"] = True
        out["reason"] = "a source failed: " + "; ".join(f"{k}: {v}" for k, v in sorted(failed.items()))
    return out


def workspace_problems(ws: Workspace) -> dict[str, Any]:
    """The merged view: the last project run, single-file checks, live language-server diagnostics and
    other providers' problems (nothing is started for it but the store itself)."""
    return store(ws).view()


def record_file(ws: Workspace, path: Path, source: str, problems: list[Problem]) -> None:
    """A single-file check found ``problems`` of ``source`` in ``path`` (e.g. get_file_problems' ruff)."""
    rel = relative(ws, str(path))
    if rel is not None:
        store(ws).record_file(rel, source, problems)


def watch(ws: Workspace, listener: Callable[[], None]) -> Callable[[], None]:
    """Call ``listener()`` whenever the merged view changes; returns the function that stops it."""
    return store(ws).listen(listener)


def touched(ws: Workspace, path: Path) -> None:
    """A workspace file changed: the store (only if one exists) refreshes what it affects."""
    for service in ws.services():
        if isinstance(service, ProblemStore):
            service.touched(path)

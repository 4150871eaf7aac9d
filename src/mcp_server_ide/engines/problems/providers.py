"""The seam for other diagnostics providers: anything that knows problems of the workspace's files
(the VS Code bridge adds ``vscode.languages.getDiagnostics()`` here, :mod:`..editor.bridge_files`)
registers a function; the merged view (:meth:`.store.ProblemStore.view`), ``get_project_problems``
(:func:`merged`) and ``get_file_problems`` (:func:`for_file`) ask each one, leaving out a provider's
problem when the server's own sources have one at the same start with the same message.

A provider is ``fn(ws) -> list[(source, at, {rel: [problem, ...]})]``: ``at`` is the
``time.monotonic()`` of its observation, problems are the dicts of :func:`.model.problem` (their
``source`` says where they came from, e.g. ``vscode/json``). It must be quick and never start
anything; when its problems change it calls :func:`changed` so subscribers hear of it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from ...workspace import Workspace
from .model import ByFile, Problem

log = logging.getLogger(__name__)

Provided = list[tuple[str, float, ByFile]]
Provider = Callable[[Workspace], Provided]

PROVIDERS: list[Provider] = []


def add_provider(fn: Provider) -> Callable[[], None]:
    """Register ``fn``; returns the function that removes it."""
    PROVIDERS.append(fn)

    def remove() -> None:
        if fn in PROVIDERS:
            PROVIDERS.remove(fn)

    return remove


def provided(ws: Workspace) -> Provided:
    out: Provided = []
    for fn in list(PROVIDERS):
        try:
            out.extend(fn(ws))
        except Exception:  # one broken provider must not hide the rest
            log.exception("problems provider %r failed", fn)
    return out


def changed(ws: Workspace) -> None:
    """A provider's problems changed: subscribers of the workspace's problems are told (if any listen)."""
    from .store import ProblemStore

    for service in ws.services():
        if isinstance(service, ProblemStore):
            service.notify_soon()


def _same(p: Problem) -> tuple[object, ...]:
    return (p.get("line"), p.get("character"), " ".join(str(p.get("message", "")).split()).casefold())


def unique(own: list[Problem], extra: list[Problem]) -> list[Problem]:
    """``extra`` (a provider's problems of one file) without those ``own`` (the server's sources)
    already has: the same start and message."""
    seen = {_same(p) for p in own}
    out: list[Problem] = []
    for p in extra:
        key = _same(p)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def for_file(ws: Workspace, rel: str, own: list[Problem]) -> list[Problem]:
    """The providers' problems of ``rel`` that ``own`` (the server's, for get_file_problems) does not have."""
    found: list[Problem] = []
    for _source, _at, files in provided(ws):
        found.extend(files.get(rel, []))
    return unique(own, found)


def merged(ws: Workspace, by_file: ByFile) -> ByFile:
    """``by_file`` (the server's own problems) with the providers' problems added, duplicates left out."""
    extra: ByFile = {}
    for _source, _at, files in provided(ws):
        for rel, found in files.items():
            extra.setdefault(rel, []).extend(found)
    out = dict(by_file)
    for rel, found in extra.items():
        kept = unique(by_file.get(rel, []), found)
        if kept:
            out[rel] = [*by_file.get(rel, []), *kept]
    return out

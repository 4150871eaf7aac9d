"""The running work of a workspace, for ``get_progress_indicators``.

Any workspace service can show its long-running work by implementing :class:`ProgressSource`
(one method, ``progress_items``): language servers loading a project, run configurations,
actions. :func:`collect` asks every service the workspace has already created (it never starts
one just to ask), and shows the process engine's running jobs that no source claimed (by
``jobId``), so a job is listed once, by whoever knows most about it.
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, NotRequired, Protocol, TypeGuard, runtime_checkable

from typing_extensions import TypedDict

from ..workspace import Workspace

if TYPE_CHECKING:
    from .lsp.manager import LanguageServers
    from .processes import Jobs

log = logging.getLogger(__name__)


class ProgressItem(TypedDict):
    id: str
    """Stable while the work runs (e.g. ``job-3``, ``lsp:python``)."""
    title: str
    kind: str
    """What the work is: ``job``, ``run configuration``, ``action``, ``language server``..."""
    fraction: float | None
    """Done so far, 0..1, or None when the work cannot tell (then ``indeterminate`` is true)."""
    indeterminate: bool
    cancellable: bool
    message: NotRequired[str]
    jobId: NotRequired[str]
    """The process engine's job behind it: read its output or cancel it with the job tools."""
    elapsedMs: NotRequired[int]


@runtime_checkable
class ProgressSource(Protocol):
    def progress_items(self) -> list[ProgressItem]:
        """The work running now (none when idle). Must be quick and never start anything."""
        ...


def item(
    id: str,
    title: str,
    kind: str,
    *,
    fraction: float | None = None,
    cancellable: bool = False,
    message: str | None = None,
    job_id: str | None = None,
    elapsed_ms: int | None = None,
) -> ProgressItem:
    out = ProgressItem(
        id=id,
        title=title,
        kind=kind,
        fraction=None if fraction is None else max(0.0, min(1.0, float(fraction))),
        indeterminate=fraction is None,
        cancellable=cancellable,
    )
    if message:
        out["message"] = message
    if job_id:
        out["jobId"] = job_id
    if elapsed_ms is not None:
        out["elapsedMs"] = elapsed_ms
    return out


def collect(ws: Workspace) -> list[ProgressItem]:
    items: list[ProgressItem] = []
    jobs_service = None
    for service in ws.services():
        if _is_jobs(service):
            jobs_service = service
        if isinstance(service, ProgressSource):
            try:
                items.extend(service.progress_items())
            except Exception:  # one broken source must not hide the others
                log.exception("progress source %r failed", type(service).__name__)
        elif not isinstance(service, ProgressSource):
            items.extend(_language_server_items(service))
    if jobs_service is not None and not isinstance(jobs_service, ProgressSource):
        claimed = {i.get("jobId") for i in items}
        for job in jobs_service.list():
            if job.running and job.id not in claimed:
                items.append(
                    item(
                        job.id,
                        job.title,
                        "job",
                        cancellable=True,
                        message=job.command[:200],
                        job_id=job.id,
                        elapsed_ms=job.duration_ms,
                    )
                )
    return items


def _language_server_items(service: object) -> list[ProgressItem]:
    """Language servers starting or loading the project (the LSP engine's own ``$/progress`` view)."""
    if not _is_language_servers(service):
        return []
    found: list[ProgressItem] = []
    for server in list(service.servers.values()):
        name = server.adapter.server_name
        if server.state == "starting":
            found.append(item(f"lsp:{server.language}", f"Starting {name}", "language server"))
        elif server.running:
            busy = server.loading()
            if busy:
                found.append(
                    item(
                        f"lsp:{server.language}",
                        f"{name}: loading the project",
                        "language server",
                        message=", ".join(busy)[:200],
                    )
                )
    return found


def _is_jobs(service: object) -> TypeGuard[Jobs]:
    from .processes import Jobs

    return isinstance(service, Jobs)


def _is_language_servers(service: object) -> TypeGuard[LanguageServers]:
    manager = sys.modules.get(f"{__package__}.lsp.manager")  # never loaded here: only if in use
    return manager is not None and isinstance(service, manager.LanguageServers)

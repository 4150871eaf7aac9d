"""Which workspace a call acts on.

Local mode has one workspace: the ``--workspace`` folder, else (once a client announces them)
the client's roots, else the current folder. Hosted mode (``hosted/``) maps each caller's
project to its own workspace instead. Doors only ever ask :meth:`LocalWorkspaces.for_context`.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Protocol

from .workspace import Policy, Workspace

log = logging.getLogger(__name__)


class Workspaces(Protocol):
    """What the serving doors need of a set of workspaces (local: :class:`LocalWorkspaces`; hosted:
    ``hosted.projects.HostedProjects``)."""

    def for_context(self, ctx: object = None) -> Workspace: ...

    def close(self) -> None: ...


class LocalWorkspaces:
    def __init__(self, root: Path | None, policy: Policy, state_home: Path | None = None) -> None:
        self.explicit = root is not None
        self.workspace = Workspace.open(root or Path.cwd(), policy=policy, state_home=state_home)
        self._lock = threading.Lock()
        self._sweeping = False
        self._swept: set[Path] = set()

    def for_context(self, ctx: object = None) -> Workspace:
        """The workspace of a request (a ``Context``, an HTTP request...): the one workspace, whoever asks."""
        return self.workspace

    __call__ = for_context

    def adopt_roots(self, roots: list[Path]) -> bool:
        """Serve the client's roots when no ``--workspace`` was given. True when they changed."""
        if self.explicit or not roots:
            return False
        with self._lock:
            before = list(self.workspace.roots)
            self.workspace.set_roots(roots)
            after = list(self.workspace.roots)
        if self._sweeping:
            self._sweep(after)
        return before != after

    def sweep_leftovers(self) -> None:
        """At a serving door's start-up: remove, in the background, the temp files killed writes left
        in the workspace, now for a ``--workspace`` folder and later for each root the client adds.
        Never under ``--read-only`` (nothing may change the workspace), nor in the current folder a
        workspace falls back to (it may be a home folder)."""
        if self.workspace.policy.read_only:
            return
        self._sweeping = True
        if self.explicit:
            self._sweep(list(self.workspace.roots))

    def _sweep(self, roots: list[Path]) -> None:
        """Sweep, on a thread of its own, the roots not swept yet."""
        with self._lock:
            roots = [r for r in roots if r not in self._swept]
            self._swept.update(roots)

        def run() -> None:
            from .engines import textio

            for root in roots:
                try:
                    removed = textio.sweep_leftovers(root)
                except Exception:  # a sweep is housekeeping: it must never take the server down
                    log.info("sweeping temp leftovers in %s failed", root, exc_info=True)
                    continue
                if removed:
                    log.info("removed %d temp files left by killed writes in %s", removed, root)

        if roots:
            threading.Thread(target=run, name="mcp-ide-sweep-leftovers", daemon=True).start()

    def all(self) -> list[Workspace]:
        return [self.workspace]

    def close(self) -> None:
        for ws in self.all():
            ws.close()

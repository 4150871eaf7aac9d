"""Which workspace a call acts on.

Local mode has one workspace: the ``--workspace`` folder, else (once a client announces them)
the client's roots, else the current folder. Hosted mode (``hosted/``) maps each caller's
project to its own workspace instead. Doors only ever ask :meth:`LocalWorkspaces.for_context`.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from .workspace import Policy, Workspace


class LocalWorkspaces:
    def __init__(self, root: Path | None, policy: Policy, state_home: Path | None = None) -> None:
        self.explicit = root is not None
        kwargs: dict[str, Any] = {"policy": policy}
        if state_home is not None:
            kwargs["state_home"] = state_home
        self.workspace = Workspace.open(root or Path.cwd(), **kwargs)
        self._lock = threading.Lock()

    def for_context(self, ctx: Any = None) -> Workspace:
        return self.workspace

    __call__ = for_context

    def adopt_roots(self, roots: list[Path]) -> bool:
        """Serve the client's roots when no ``--workspace`` was given. True when they changed."""
        if self.explicit or not roots:
            return False
        with self._lock:
            before = list(self.workspace.roots)
            self.workspace.set_roots(roots)
            return before != self.workspace.roots

    def all(self) -> list[Workspace]:
        return [self.workspace]

    def close(self) -> None:
        for ws in self.all():
            ws.close()

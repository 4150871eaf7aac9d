"""Announcing file changes made by this server's tools.

Every write goes through :func:`publish`. The journal records it first (so it can be undone);
then every listener registered with :func:`subscribe` hears of it: the editor model moves
breakpoints, language servers get ``didChange``, resource subscribers get
``notifications/resources/updated``. A failing listener never fails the write.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..workspace import Workspace

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FileChange:
    rel: str
    path: Path
    before: bytes | None
    """None when the file was created."""
    after: bytes | None
    """None when the file was deleted."""
    made_folders: tuple[str, ...] = ()
    """Folders the write made for the file (root-relative, POSIX, parents first)."""
    unsaved: bool = False
    """The change went into an editor's unsaved buffer (VS Code); the file on disk did not change."""


Listener = Callable[[FileChange], None]
Guard = Callable[[Path, str], None]
"""Called with (absolute path, root-relative path) before a write or delete; raises ``ToolFailure`` to refuse it."""


class ChangeBus:
    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._listeners: list[Listener] = []
        self._guards: list[Guard] = []
        self._lock = threading.Lock()

    def guard(self, check: Guard) -> None:
        """Run ``check`` before every write of this server's tools (the VS Code bridge refuses writes
        under a person's unsaved text)."""
        with self._lock:
            self._guards.append(check)

    def check(self, path: Path, rel: str) -> None:
        with self._lock:
            guards = list(self._guards)
        for check in guards:
            check(path, rel)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def follow_roots(self, roots: list[Path]) -> bool:
        """Stays when the roots change: the services kept then still listen here."""
        return True

    def publish(self, change: FileChange) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(change)
            except Exception:
                log.exception("a change listener failed for %s", change.rel)


def subscribe(ws: Workspace, listener: Listener) -> Callable[[], None]:
    return ws.service(ChangeBus).subscribe(listener)


def publish(ws: Workspace, change: FileChange) -> None:
    from .journal import Journal

    ws.service(Journal).record(change)
    ws.service(ChangeBus).publish(change)


def attach_editor(ws: Workspace) -> None:
    """A server started by the VS Code extension makes its editor service now (its bridge guards
    writes and lends the editor's unsaved buffers); otherwise nothing."""
    from .editor.channel import address_from_env

    if address_from_env() is not None:
        from .editor.service import Editor

        ws.service(Editor)


def check_write(ws: Workspace, path: Path, rel: str) -> None:
    """Ask every guard whether ``path`` may be written now; a guard refuses with a ``ToolFailure``."""
    attach_editor(ws)
    ws.service(ChangeBus).check(path, rel)

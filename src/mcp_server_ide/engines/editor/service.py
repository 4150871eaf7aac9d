"""The workspace's editor service: the backend the tools act on, and the editor's status line.

The backend is the headless model (:class:`.headless.HeadlessEditor`) unless a live editor (a
VS Code bridge implementing :class:`.backend.EditorBackend`) is attached with :meth:`Editor.use`;
nothing above changes when it is. A server started by the companion extension finds the bridge's
address in its environment (:func:`.channel.address_from_env`) and attaches :class:`.bridge.BridgeEditor`
itself; that backend answers from the headless model whenever VS Code does not answer. The headless model belongs to the primary root (its state is
kept in that root's state folder); the service follows a change of roots (:meth:`Editor.follow_roots`).
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import TypedDict

from ...workspace import Workspace
from .backend import EditorBackend
from .bridge import BridgeEditor
from .channel import Channel, address_from_env
from .headless import HeadlessEditor

log = logging.getLogger(__name__)


class EditorStatus(TypedDict):
    """The editor's part of ``/mcp/status``."""

    activeFile: str
    openFiles: list[str]


class Editor:
    """The workspace's editor service: the backend the tools use (headless unless a bridge is attached)."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._headless: HeadlessEditor | None = None
        self._headless_root: Path | None = None
        """The primary root the headless model was made for (its state is that root's)."""
        self._bridge: EditorBackend | None = None
        self._lock = threading.Lock()
        address = address_from_env()
        if address is not None:
            self._bridge = BridgeEditor(ws, Channel(address), lambda: self.headless)

    @property
    def backend(self) -> EditorBackend:
        with self._lock:
            if self._bridge is not None:
                return self._bridge
            return self._model()

    @property
    def headless(self) -> HeadlessEditor:
        with self._lock:
            return self._model()

    def _model(self) -> HeadlessEditor:
        if self._headless is None:
            self._headless_root = self.ws.root
            self._headless = HeadlessEditor(self.ws)
        return self._headless

    def follow_roots(self, roots: list[Path]) -> bool:
        """Stays when the roots change: a linked live editor stays linked (it is the person's editor,
        whatever its folders). The headless model (open files, selections, breakpoints) stays while
        its primary root is still the first; otherwise it is put away (its state stays saved for that
        root) and the new primary root's own model is loaded on next use."""
        with self._lock:
            if self._headless is None or self._headless_root == roots[0]:
                return True
            old, self._headless, self._headless_root = self._headless, None, None
        old.shutdown()
        return True

    def use(self, bridge: EditorBackend | None) -> None:
        """Serve the tools from ``bridge`` (a live editor), or from the headless model again with None."""
        with self._lock:
            self._bridge = bridge

    def close(self) -> None:
        with self._lock:
            if isinstance(self._bridge, BridgeEditor):
                self._bridge.channel.close()
            if self._headless is not None:
                self._headless.shutdown()


def editor_for(ws: Workspace) -> EditorBackend:
    """The backend the editor tools of ``ws`` act on."""
    return ws.service(Editor).backend


def editor_status(ws: Workspace) -> EditorStatus:
    """``activeFile`` ("" when none) and ``openFiles`` (absolute paths), for ``/mcp/status``."""
    try:
        state = editor_for(ws).state()
    except Exception:  # the status page must answer even if the model cannot be read
        log.debug("editor state unavailable", exc_info=True)
        return EditorStatus(activeFile="", openFiles=[])
    return EditorStatus(
        activeFile=str(state.active) if state.active else "",
        openFiles=[str(p) for p in state.open],
    )

"""Files open in VS Code, through the bridge: unsaved buffers, editors reloaded, VS Code's diagnostics.

:func:`attach` (called by :class:`.bridge.BridgeEditor`) hooks three things onto the workspace:

- :class:`BridgeBuffers`, the :class:`..textio.buffers.BufferSource` of VS Code: reads of a file with
  unsaved changes there see the buffer; a write made from that text becomes one ``WorkspaceEdit`` of
  the changed region (Ctrl+Z in VS Code undoes it; nothing is saved).
- a change listener: after a tool changed files on disk, VS Code is told (``filesChanged``) so clean
  editors show the new text (the extension's ``autoReloadModifiedFiles``); editors with unsaved
  changes are never reverted (VS Code's conflict flow meets the person on save). Sent from a thread:
  the write never waits for it.
- a problems provider: VS Code's diagnostics (``vscode.languages.getDiagnostics()``) of the workspace's
  files, with ``source`` ``vscode/<its source>``, for ``get_file_problems`` / ``get_project_problems``.

When VS Code does not answer, each of them does nothing (the disk is what tools see, as headless).
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any

from ...workspace import Workspace
from .. import changes, sandbox
from ..failures import ToolFailure
from ..problems.model import ByFile, Problem, problem
from ..problems.providers import Provided, add_provider
from ..problems.sources import relative
from ..textio.buffers import Buffers, Unsaved
from .channel import BridgeDown, Channel
from .linemap import common_ends

log = logging.getLogger(__name__)
EDIT_TIMEOUT = 5.0
"""Seconds a buffer edit may take in VS Code before the call fails (saying it may have been applied)."""
VSCODE = "vscode"
"""The prefix of the ``source`` of a problem VS Code reported."""


class BridgeBuffers:
    """VS Code's unsaved buffers (a :class:`..textio.buffers.BufferSource`)."""

    def __init__(self, ws: Workspace, channel: Channel) -> None:
        self.ws = ws
        self.channel = channel

    def unsaved(self, path: Path) -> Unsaved | None:
        try:
            found = self.channel.call("buffer", {"path": str(path)})
        except (BridgeDown, ToolFailure):  # gone, or an extension without buffers: the write guard decides
            return None
        if not isinstance(found, dict) or not isinstance(found.get("text"), str):
            return None
        version = found.get("version")
        return Unsaved(
            text=found["text"].replace("\r\n", "\n"),
            crlf=bool(found.get("crlf")),
            version=version if isinstance(version, int) else None,
        )

    def edit(self, path: Path, old: Unsaved, new_text: str) -> None:
        start, end, text = changed_region(old.text, new_text)
        try:
            self.channel.call(
                "editBuffer",
                {"path": str(path), "version": old.version, "start": start, "end": end, "text": text},
                timeout=EDIT_TIMEOUT,
            )
        except BridgeDown as exc:
            rel = _rel(self.ws, path)
            if not exc.sent:
                raise ToolFailure(
                    f"unavailable: VS Code stopped answering before the edit of the unsaved buffer of {rel!r} "
                    "was sent; nothing changed. Retry",
                    kind="unavailable",
                ) from None
            raise ToolFailure(
                f"unavailable: VS Code did not confirm the edit of the unsaved buffer of {rel!r} within "
                f"{EDIT_TIMEOUT:g} s; it may have been applied there: read the file again before retrying",
                kind="unavailable",
            ) from None


def changed_region(old: str, new: str) -> tuple[dict[str, int], dict[str, int], str]:
    """The one region where ``new`` differs from ``old``: its start and end in ``old`` (0-based line and
    code-point character) and its new text, so the edit leaves the rest of the buffer (and its
    cursors, folds and markers) alone."""
    head, tail = common_ends(old, new)
    return _position(old, head), _position(old, len(old) - tail), new[head : len(new) - tail]


def _position(text: str, offset: int) -> dict[str, int]:
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    return {"line": line, "character": offset - start}


def _rel(ws: Workspace, path: Path) -> str:
    try:
        return sandbox.resolve(ws, str(path)).display_rel
    except ToolFailure:
        return str(path)


class Reloads:
    """Tells VS Code which files the tools changed on disk, one batch at a time, from a thread."""

    def __init__(self, channel: Channel) -> None:
        self.channel = channel
        self._pending: list[str] = []
        self._lock = threading.Lock()
        self._busy = False

    def heard(self, change: changes.FileChange) -> None:
        if change.unsaved or change.after is None:
            return  # a buffer edit: VS Code already shows it; a deletion: VS Code shows it as deleted
        with self._lock:
            if str(change.path) not in self._pending:
                self._pending.append(str(change.path))
            if self._busy:
                return
            self._busy = True
        threading.Thread(target=self._send, name="mcp-ide-reload", daemon=True).start()

    def _send(self) -> None:
        while True:
            with self._lock:
                paths, self._pending = self._pending, []
                if not paths:
                    self._busy = False
                    return
            try:
                self.channel.call("filesChanged", {"paths": paths})
            except (BridgeDown, ToolFailure) as exc:
                log.debug("VS Code was not told of changed files: %s", exc)


class Diagnostics:
    """VS Code's diagnostics of the workspace's files, as a problems provider."""

    def __init__(self, ws: Workspace, channel: Channel) -> None:
        self.ws = ws
        self.channel = channel

    def __call__(self, ws: Workspace) -> Provided:
        if ws is not self.ws:
            return []
        try:
            found = self.channel.call("diagnostics")
        except (BridgeDown, ToolFailure):
            return []
        at = time.monotonic()
        by_file: dict[str, ByFile] = {}
        for item in found if isinstance(found, list) else []:
            if not isinstance(item, dict):
                continue
            rel = relative(ws, str(item.get("path") or ""))
            if rel is None:
                continue
            for d in item.get("problems") or []:
                p = _problem(d)
                if p is not None:
                    by_file.setdefault(p["source"], {}).setdefault(rel, []).append(p)
        return [(source, at, files) for source, files in sorted(by_file.items())]


def _problem(d: Any) -> Problem | None:
    if not isinstance(d, dict):
        return None
    try:
        source = f"{VSCODE}/{d['source']}" if d.get("source") else VSCODE
        return problem(
            source,
            str(d.get("severity") or "error"),
            str(d.get("code") or ""),
            str(d.get("message") or ""),
            (int(d["line"]), int(d["character"])),
            (int(d["endLine"]), int(d["endCharacter"])),
        )
    except (KeyError, TypeError, ValueError):
        return None


def attach(ws: Workspace, channel: Channel) -> None:
    """Hook VS Code's buffers, reloads and diagnostics onto ``ws`` (see the module docstring)."""
    ws.service(Buffers).attach(BridgeBuffers(ws, channel))
    changes.subscribe(ws, Reloads(channel).heard)
    add_provider(Diagnostics(ws, channel))

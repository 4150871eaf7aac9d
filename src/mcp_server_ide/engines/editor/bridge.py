"""The live VS Code as the editor backend, through the companion extension (:mod:`.channel`).

:class:`BridgeEditor` implements :class:`.backend.EditorBackend` by asking the extension: the
active editor (its unsaved buffer included), the open tabs, selections, edits applied with
``WorkspaceEdit`` (so Ctrl+Z in VS Code undoes them) and VS Code's own breakpoints. When the
extension does not answer within the channel's deadline the same call is served by the headless
model, with no error; calls go back to VS Code once the extension answers again.

Only files inside the workspace count: an editor showing a file elsewhere (another folder's
server owns it, or it is outside every root) is not this workspace's active file. Characters
travel as code points (the extension converts from VS Code's UTF-16 columns).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ...workspace import Workspace
from .. import changes, sandbox, textio
from ..failures import ToolFailure
from .backend import ActiveDocument, EditorBackend, EditorState, no_active_editor
from .breakpoints import Breakpoint, check_line
from .channel import BridgeDown, Channel
from .positions import END_OF_LINE, Position, Selection, find_text

log = logging.getLogger(__name__)
T = TypeVar("T")
EDIT_TIMEOUT = 5.0
"""Seconds an edit (applying it and saving a clean file) may take in VS Code. An edit that was sent
but not confirmed is never made again by the headless model: the call fails and says so."""


class BridgeEditor:
    """VS Code's editor through the extension, falling back to ``fallback`` when it does not answer."""

    def __init__(self, ws: Workspace, channel: Channel, fallback: Callable[[], EditorBackend]) -> None:
        self.ws = ws
        self.channel = channel
        self._fallback = fallback
        ws.service(changes.ChangeBus).guard(self._refuse_under_unsaved_text)
        from .bridge_files import attach  # unsaved buffers, reloads, VS Code's diagnostics

        attach(ws, channel)

    def _refuse_under_unsaved_text(self, path: Path, rel: str) -> None:
        """Refuse a tool's write to a file with unsaved changes in VS Code: the person's text stays in
        their buffer and the file stays as it was (when VS Code does not answer, nothing is refused)."""
        try:
            found = self.channel.call("state")
        except BridgeDown:
            return
        for tab in (found or {}).get("open") or []:
            inside = self._inside(tab.get("path") if isinstance(tab, dict) else None)
            if inside is not None and inside.path == path and tab.get("dirty"):
                raise ToolFailure(
                    f"refused: {rel!r} has unsaved changes in VS Code, and this would go under them; "
                    "nothing was changed. Save or revert the file in VS Code first (an edit of its text "
                    "goes into the unsaved buffer instead: read the file again and redo it)",
                    kind="conflict",
                )

    @property
    def live(self) -> bool:
        """True while the extension answers (the last call reached it)."""
        return self.channel.connected

    def _either(self, live: Callable[[], T], headless: Callable[[EditorBackend], T]) -> T:
        try:
            return live()
        except BridgeDown as exc:
            log.info("editor bridge unavailable, answering from the headless model: %s", exc)
            return headless(self._fallback())

    def _inside(self, path: object) -> sandbox.Resolved | None:
        if not isinstance(path, str) or not path:
            return None
        try:
            return sandbox.resolve(self.ws, path)
        except ToolFailure:
            return None

    # -- the protocol ----------------------------------------------------------------

    def state(self) -> EditorState:
        return self._either(self._state, lambda h: h.state())

    def _state(self) -> EditorState:
        found = self.channel.call("state")
        found = found if isinstance(found, dict) else {}
        active = self._inside(found.get("active"))
        opened: list[Path] = []
        unsaved: list[Path] = []
        languages: dict[Path, str] = {}
        for tab in found.get("open") or []:
            if not isinstance(tab, dict):
                continue
            inside = self._inside(tab.get("path"))
            if inside is None or inside.path in opened:
                continue
            opened.append(inside.path)
            if tab.get("dirty"):
                unsaved.append(inside.path)
            if isinstance(tab.get("languageId"), str):
                languages[inside.path] = tab["languageId"]
        visible = [r.path for r in (self._inside(p) for p in found.get("visible") or []) if r is not None]
        return EditorState(
            active=active.path if active else None,
            open=opened,
            unsaved=unsaved,
            visible=list(dict.fromkeys(visible)),
            languages=languages,
        )

    def open(
        self, path: Path, selection: Selection | None = None, select_text: str | None = None
    ) -> Selection:
        return self._either(
            lambda: self._open(path, selection, select_text), lambda h: h.open(path, selection, select_text)
        )

    def _open(self, path: Path, selection: Selection | None, select_text: str | None) -> Selection:
        resolved = sandbox.resolve(self.ws, str(path))
        tf = textio.read_text(resolved)  # refuses folders, binaries, FIFOs as the headless model does
        if select_text is not None:
            selection = find_text(tf.text, textio.normalise_input(select_text, tf), resolved.display_rel)
        params: dict[str, Any] = {"path": str(resolved.path)}
        if selection is not None:
            params["selection"] = _selection_out(selection)
        found = self.channel.call("open", params)
        return _selection_in(found.get("selection") if isinstance(found, dict) else None)

    def close(self, path: Path | None = None) -> bool:
        return self._either(
            lambda: bool(
                (self.channel.call("close", {"path": str(path) if path else None}) or {}).get("closed")
            ),
            lambda h: h.close(path),
        )

    def active(self) -> ActiveDocument | None:
        return self._either(self._active, lambda h: h.active())

    def _active(self) -> ActiveDocument | None:
        found = self.channel.call("active")
        if not isinstance(found, dict):
            return None
        resolved = self._inside(found.get("path"))
        if resolved is None:
            return None
        text = str(found.get("text", "")).replace("\r\n", "\n")
        if found.get("dirty"):
            digest = textio.content_hash(text.encode("utf-8"))
        else:
            try:
                digest = textio.read_text(resolved).hash
            except ToolFailure:
                digest = textio.content_hash(text.encode("utf-8"))
        return ActiveDocument(
            path=resolved.path, text=text, selection=_selection_in(found.get("selection")), hash=digest
        )

    def replace_selection(self, text: str, expected_hash: str | None = None) -> Selection:
        return self._either(
            lambda: self._edit("replaceSelection", text, expected_hash),
            lambda h: h.replace_selection(text, expected_hash),
        )

    def replace_text(self, text: str, expected_hash: str | None = None) -> None:
        self._either(
            lambda: self._edit("replaceText", text, expected_hash),
            lambda h: h.replace_text(text, expected_hash),
        )

    def _edit(self, method: str, text: str, expected_hash: str | None) -> Selection:
        """Apply an edit in VS Code (a ``WorkspaceEdit``: undo works there). A clean document is saved
        after the edit and the change is journaled like any write; a dirty one keeps the person's
        unsaved text and the edit joins it, unsaved."""
        found = self.channel.call("active")
        if not isinstance(found, dict) or self._inside(found.get("path")) is None:
            raise no_active_editor()
        resolved = sandbox.resolve_for_write(self.ws, str(found["path"]))
        doc = self._active()
        assert doc is not None
        if expected_hash is not None and expected_hash != doc.hash:
            raise ToolFailure(
                f"conflict: {resolved.display_rel!r} changed since it was read (expectedHash {expected_hash[:12]}… "
                f"is stale, the editor's text is now {doc.hash[:12]}…); read it again and retry",
                kind="conflict",
            )
        dirty = bool(found.get("dirty"))
        before = _buffer_bytes(self.ws, resolved) if dirty else _read_bytes(resolved.path)
        try:
            result = self.channel.call(
                method,
                {
                    "path": str(resolved.path),
                    "version": found.get("version"),
                    "text": text,
                    "save": not dirty,
                },
                timeout=EDIT_TIMEOUT,
            )
        except BridgeDown as exc:
            if not exc.sent:
                raise  # never reached VS Code: the headless model makes the edit
            raise ToolFailure(
                f"unavailable: VS Code did not confirm the edit of {resolved.display_rel!r} within {EDIT_TIMEOUT:g} s; "
                "it may have been applied there: read the file again before retrying",
                kind="unavailable",
            ) from None
        if before is not None:  # journaled: a saved file's bytes, or the unsaved buffer's (``unsaved``)
            after = _buffer_bytes(self.ws, resolved) if dirty else _read_bytes(resolved.path)
            if after is not None and after != before:
                changes.publish(
                    self.ws, changes.FileChange(resolved.rel, resolved.path, before, after, unsaved=dirty)
                )
        return _selection_in(result.get("selection") if isinstance(result, dict) else None)

    def breakpoints(self) -> list[Breakpoint]:
        return self._either(self._breakpoints, lambda h: h.breakpoints())

    def _breakpoints(self) -> list[Breakpoint]:
        found = self.channel.call("breakpoints")
        out: list[Breakpoint] = []
        for item in found if isinstance(found, list) else []:
            inside = self._inside(item.get("path") if isinstance(item, dict) else None)
            line = item.get("line") if isinstance(item, dict) else None
            if inside is not None and isinstance(line, int) and line >= 0:
                out.append(Breakpoint(inside.path, line))
        return sorted(out, key=lambda b: (str(b.path), b.line))

    def toggle_breakpoint(self, path: Path, line: int) -> bool:
        def live() -> bool:
            resolved = sandbox.resolve(self.ws, str(path))
            check_line(textio.read_text(resolved), line, resolved.display_rel)
            found = self.channel.call("toggleBreakpoint", {"path": str(resolved.path), "line": line})
            return bool((found or {}).get("added"))

        return self._either(live, lambda h: h.toggle_breakpoint(path, line))

    def clear_breakpoints(self) -> int:
        def live() -> int:
            paths = [str(root) for root in self.ws.roots]
            found = self.channel.call("clearBreakpoints", {"under": paths})
            return int((found or {}).get("count") or 0)

        return self._either(live, lambda h: h.clear_breakpoints())


def _buffer_bytes(ws: Workspace, resolved: sandbox.Resolved) -> bytes | None:
    """What saving the file's unsaved buffer would write (its bytes on disk when it has none)."""
    try:
        return textio.current_bytes(ws, resolved)[0]
    except ToolFailure:
        return None


def _read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _position_in(value: object) -> Position:
    if isinstance(value, dict):
        line, character = value.get("line"), value.get("character")
        if isinstance(line, int) and isinstance(character, int):
            return Position(max(line, 0), max(character, 0))
    return Position(0, 0)


def _selection_in(value: object) -> Selection:
    if not isinstance(value, dict):
        return Selection.cursor(0)
    return Selection(_position_in(value.get("anchor")), _position_in(value.get("active")))


def _selection_out(sel: Selection) -> dict[str, dict[str, int]]:
    def pos(p: Position) -> dict[str, int]:
        return {"line": p.line, "character": p.character if p.character != END_OF_LINE else -1}

    return {"anchor": pos(sel.anchor), "active": pos(sel.active)}

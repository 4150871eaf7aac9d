"""Which files the assistant has seen in its session, so overwriting an unseen file can ask first.

A file counts as seen by a session once a tool of that session read it (whole or a slice), read
it as a resource, or wrote it (the assistant then knows what is in it). Sessions are keyed by
:func:`~mcp_server_ide.surface.lowlevel.session_key`: a Streamable HTTP session, a stdio
connection; calls without a session (stateless HTTP, the 2026-07-28 era, the REST door) share
one key, so a read through any of them counts for all of them.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path

from ..call import current_or_none
from ..workspace import Workspace
from .changes import FileChange, subscribe
from .sandbox import Resolved

NO_SESSION = "-"
MAX_SESSIONS = 256


class SessionReads:
    """Per-workspace service: session key -> set of root-relative paths seen."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.root = ws.root
        self._seen: OrderedDict[str, set[str]] = OrderedDict()
        self._lock = threading.Lock()
        self._unsubscribe = subscribe(ws, self._on_change)

    def note(self, rel: str, session: str | None = None) -> None:
        key = session if session is not None else current_session()
        with self._lock:
            seen = self._seen.setdefault(key, set())
            self._seen.move_to_end(key)
            seen.add(rel)
            while len(self._seen) > MAX_SESSIONS:
                self._seen.popitem(last=False)

    def seen(self, rel: str, session: str | None = None) -> bool:
        key = session if session is not None else current_session()
        with self._lock:
            return rel in self._seen.get(key, ())

    def forget_session(self, session: str) -> None:
        with self._lock:
            self._seen.pop(session, None)

    def follow_roots(self, roots: list[Path]) -> bool:
        """Stays while the primary root is the same: the paths seen are relative to it (a new primary
        root would give them other files, so then the workspace starts a fresh record)."""
        return roots[0] == self.root

    def _on_change(self, change: FileChange) -> None:
        if change.after is not None and current_or_none() is not None:
            self.note(change.rel)

    def close(self) -> None:
        self._unsubscribe()


def current_session() -> str:
    call = current_or_none()
    if call is None or not call.session_id:
        return NO_SESSION
    return call.session_id


def note_read(ws: Workspace, rel: str) -> None:
    """Record that the current call's session has read ``rel`` (call from every read tool)."""
    ws.service(SessionReads).note(rel)


def was_read(ws: Workspace, rel: str) -> bool:
    return ws.service(SessionReads).seen(rel)


def confirm_overwrite(ws: Workspace, resolved: Resolved) -> None:
    """Before replacing a whole existing file: ask the person when this MCP session never read it.

    Only MCP calls from clients that can ask the person (elicitation) are asked; the seed's REST
    door, the CLI and clients without elicitation overwrite as the seed says. A caller that passes
    ``expectedHash`` has shown it knows the content and is not asked.
    """
    call = current_or_none()
    if call is None or call.door != "mcp" or was_read(ws, resolved.rel):
        return
    from . import peer

    ctx = peer.mcp_context()
    if ctx is None or not peer.can_elicit(ctx):
        # Without elicitation the seed's contract holds (rewrite replaces the file): refusing by
        # default would break every seed client that rewrites without reading first.
        return
    from .confirm import confirm_sync

    confirm_sync(
        f"Overwrite {resolved.display_rel!r}? The assistant has not read this file in this session.",
        rule="overwriting a file not read in this session needs the person's confirmation; "
        "read it first with get_file_text_by_path, or pass expectedHash",
    )

"""Debug sessions run by VS Code itself, through the companion extension (``extension/src/debug.ts``).

With the extension connected, a launch configuration whose type a VS Code extension debugs (``node``/
``pwa-node`` with the built-in JavaScript debugger; ``debugpy``/``python`` only when a Python debugger
extension is installed there) starts in VS Code (``debug.startDebugging``), so the person sees it in
VS Code's debug views, with VS Code's breakpoints (the editor backend's, which the breakpoint tools
already change there). :class:`VsSession` is a :class:`~.session.Session` whose DAP requests go through
``session.customRequest`` (:class:`BridgeDap`) and whose events come from a tracker in VS Code, read
by a long poll on a connection of its own: the state machine, the stop summary and the variables'
rendering are the headless session's, not a second copy. The person's own sessions are listed and
driven the same way (:func:`adopt`).

A session belongs to VS Code: when the extension stops answering, its requests fail saying so, and
after :data:`GIVE_UP_S` the session counts as lost (the program is VS Code's to stop, not this server's).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import threading
import time
from typing import TYPE_CHECKING, Any

from ..editor import editor_for
from ..editor.bridge import BridgeEditor
from ..editor.channel import Address, BridgeDown, Channel
from ..failures import ToolFailure
from .adapters import Adapter, adapter_for
from .client import REQUEST_TIMEOUT_S
from .protocol import check_request
from .session import Session

if TYPE_CHECKING:
    from ...workspace import Workspace
    from ..processes import Jobs
    from ..runconfigs import DebugTarget

log = logging.getLogger(__name__)

POLL_MS = 2000
"""How long one ``debug.events`` call waits in VS Code for an event."""
GIVE_UP_S = 10.0
"""How long VS Code may not answer before its sessions count as lost."""
START_TIMEOUT_S = 60.0
THREADS_WAIT_S = 20.0
CALL_TIMEOUT_S = 10.0
"""Connecting to the extension and its short answers: more than the editor's 1 s, since falling back
to the headless adapter would run the session where the person does not see it."""
CONSENT_S = 60.0
VSCODE_TYPES = {"node": ("pwa-node", "node"), "pwa-node": ("pwa-node", "node"), "python": ("debugpy", "python"),
                "debugpy": ("debugpy", "python")}  # fmt: skip
"""A launch type -> the VS Code debug types (``contributes.debuggers``) that run it."""


_channels: dict[Address, Channel] = {}
_channels_lock = threading.Lock()


def channel_of(ws: Workspace) -> Channel | None:
    """The debugger's own connection to the extension when the workspace's editor is VS Code's: apart from
    the editor's (whose 1 s deadline and retry pause would send a session to the headless adapter on
    a loaded machine), with :data:`CALL_TIMEOUT_S` and a short retry."""
    backend = editor_for(ws)
    if not isinstance(backend, BridgeEditor):
        return None
    address = backend.channel.address
    with _channels_lock:
        found = _channels.get(address)
        if found is None:
            found = _channels[address] = Channel(address, timeout=CALL_TIMEOUT_S, retry=0.5)
        return found


def backing(ws: Workspace, kind: str) -> Channel | None:
    """The bridge channel when VS Code answers and one of its extensions debugs ``kind``, else None."""
    channel = channel_of(ws)
    wanted = VSCODE_TYPES.get(kind)
    if channel is None or wanted is None:
        return None
    try:
        found = channel.call("debug.types", timeout=CALL_TIMEOUT_S)
    except (BridgeDown, ToolFailure) as exc:  # not connected, or an extension without these handlers
        log.info("debugging %s headless: VS Code's debug types not known (%s)", kind, exc)
        return None
    types = (found or {}).get("types") if isinstance(found, dict) else None
    return channel if isinstance(types, list) and any(t in types for t in wanted) else None


def gone(sid: str, why: object) -> ToolFailure:
    return ToolFailure(
        f"unavailable: debug session {sid} runs in VS Code and VS Code does not answer ({why}); the program "
        "is VS Code's (its debug views show it once the extension is back); start_debug_session without "
        "VS Code runs a new one under the headless adapter",
        kind="unavailable",
    )


class BridgeDap:
    """A session's DAP requests, sent by VS Code (``customRequest`` to the session running the program)."""

    def __init__(self, session: VsSession) -> None:
        self.session = session

    def request(
        self, command: str, arguments: dict[str, Any] | None = None, timeout_s: float = REQUEST_TIMEOUT_S
    ) -> dict[str, Any]:
        check_request(command, arguments or {})
        s = self.session
        if s.lost:
            raise gone(s.id, s.lost)
        params = {"id": s.vs_id, "command": command, "arguments": arguments or {}}
        try:
            found = s.channel.call("debug.request", params, timeout=max(timeout_s, CALL_TIMEOUT_S))
        except BridgeDown as exc:
            raise gone(s.id, exc) from None
        return found if isinstance(found, dict) else {}


class VsSession(Session):
    """A debug session VS Code runs (started by this server: ``ours``; or by the person)."""

    def __init__(
        self, ws: Workspace, sid: str, found: dict[str, Any], jobs: Jobs, channel: Channel, *, ours: bool
    ) -> None:
        kind, name = str(found.get("type") or "?"), str(found.get("name") or "?")
        try:
            adapter = dataclasses.replace(adapter_for(kind, name), mirrors_output=False)
        except ToolFailure:  # a type only VS Code debugs (a browser...): no exception filters known here
            adapter = Adapter(name=kind, adapter_id=kind, types=(kind,))
        self._init_state(ws, sid, name, adapter, jobs, "launch")
        self.backed_by = "VS Code"
        self.vs_id = str(found["id"])
        self.ours = ours
        """Started by this server (else by the person in VS Code, or another client of the extension)."""
        self.channel = channel
        self.lost: str | None = None
        self._bridge = BridgeDap(self)
        self._cancel = threading.Event()
        self.initialized.set()
        self.state = "ended" if found.get("state") == "ended" else "running"
        if self.ours:
            job = jobs.track(
                f"Debug: {name}",
                f"{name} under VS Code's debugger (shown in its debug views)",
                started_at=time.time(),
                stop=self._cancel,
            )
            self.job_id = job.id
        self._poller = threading.Thread(target=self._poll, name=f"mcp-ide-{sid}-vscode", daemon=True)
        self._poller.start()

    @property
    def dap(self) -> BridgeDap:
        return self._bridge

    @property
    def holds_processes(self) -> bool:
        """Only this server's own live sessions are stopped when it exits; the person's stay."""
        return self.ours and self.live and not self.lost

    def set_breakpoints(self, path: str, bps: list[dict[str, Any]]) -> None:
        """Nothing to send: VS Code sends its breakpoints (the ones the tools set there) itself."""

    def first_thread(self) -> int:
        """As headless; a program just started may have no thread yet (js-debug in VS Code attaches its
        child session to the node process a moment later): asked again until it has one."""
        deadline = time.monotonic() + THREADS_WAIT_S
        while True:
            threads = self.dap.request("threads").get("threads", [])
            if threads or not self.live or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        if not threads:
            raise ToolFailure("conflict: the program has no threads (it is ending)", kind="conflict")
        return int(threads[0]["id"])

    def _need_stopped(self, what: str) -> dict[str, Any]:
        if self.lost:
            raise gone(self.id, self.lost)
        return super()._need_stopped(what)

    # -- events --------------------------------------------------------------------------

    def _poll(self) -> None:
        """Read the session's events from VS Code until it ends (or VS Code is gone)."""
        # a long poll of its own (the editor's calls stay free), patient with a loaded machine
        channel = Channel(self.channel.address, timeout=CALL_TIMEOUT_S)
        cursor, down_since = 0, None
        try:
            while self.live:
                if self._cancel.is_set():
                    self._cancel.clear()
                    threading.Thread(target=self.stop, daemon=True).start()
                try:
                    answer = channel.call(
                        "debug.events", {"id": self.vs_id, "since": cursor, "ms": POLL_MS},
                        timeout=POLL_MS / 1000 + 10,
                    )  # fmt: skip
                    down_since = None
                except BridgeDown as exc:
                    now = time.monotonic()
                    down_since = down_since or now
                    if now - down_since > GIVE_UP_S:
                        self._lose(str(exc))
                        return
                    time.sleep(0.5)
                    continue
                except ToolFailure as exc:  # the extension no longer knows it (its host restarted)
                    self._lose(str(exc))
                    return
                answer = answer if isinstance(answer, dict) else {}
                cursor = max(cursor, int(answer.get("next") or 0))
                if isinstance(answer.get("exitCode"), int):
                    self.exit_code = answer["exitCode"]
                for item in answer.get("events") or []:
                    self._take(item)
                if answer.get("state") == "ended":
                    self._on_event("terminated", {})
        finally:
            channel.close()
            self._finish_job()

    def _take(self, item: object) -> None:
        if not isinstance(item, dict):
            return
        event, body = str(item.get("event") or ""), item.get("body")
        body = body if isinstance(body, dict) else {}
        if event == "_breakpoints" and isinstance(body.get("path"), str):
            asked, got = body.get("asked"), body.get("got")
            if isinstance(asked, list) and isinstance(got, list):
                self.verification.answered(body["path"], [a for a in asked if isinstance(a, dict)], got)
        elif event == "exited" and isinstance(body.get("exitCode"), int):
            self._on_event("exited", body)
        elif event != "exited":
            self._on_event(event, body)

    def _lose(self, why: str) -> None:
        with self.cond:
            self.lost = why
            self.ended_note = (
                f"VS Code stopped answering ({why[:200]}): the session was VS Code's and how it ended is "
                "not known here (its debug views show it once the extension is back)"
            )
            self._note(f"{self.id} VS Code stopped answering: the session is VS Code's, its end unknown here")
            self.state = "ended"
            self.cond.notify_all()

    def _finish_job(self) -> None:
        if self.job_id is None:
            return
        try:
            job = self.jobs.get(self.job_id)
        except ToolFailure:
            return
        if not job.running:
            return
        if self.lost:
            self.jobs.finish(
                job, f"VS Code stopped answering ({self.lost}); how the session ended is not known"
            )
        else:
            self.jobs.finish(job, exit_code=self.exit_code)

    def _ended(self) -> None:
        """The session ended in VS Code: nothing of it runs here."""

    # -- ending ------------------------------------------------------------------------

    def final_exit_code(self) -> int | None:
        return self.exit_code

    def stop(self) -> None:
        """Stop the session in VS Code (``debug.stopDebugging``) and wait for its end; quiet when VS Code
        is gone (the server's exit stops its sessions this way): :meth:`stop_or_fail` says so."""
        with contextlib.suppress(ToolFailure):
            self.stop_or_fail()

    def stop_or_fail(self) -> None:
        if not self.live or self.lost:
            return
        try:
            self.channel.call("debug.stop", {"id": self.vs_id}, timeout=10)
        except BridgeDown as exc:
            raise gone(self.id, exc) from None
        with self.cond:
            self.cond.wait_for(lambda: not self.live, 15)


def start(ws: Workspace, target: DebugTarget, sid: str, jobs: Jobs, channel: Channel) -> VsSession:
    """Start ``target``'s configuration (as launch.json has it: VS Code resolves it) in VS Code."""
    from ..runconfigs import load

    raw = next((c for c in load(ws).launch if c.get("name") == target.name), target.item)
    params = {
        "configuration": raw,
        "folder": str(ws.root),
        "confirm": False,  # start_debug_session asked already; VS Code asks again in its Restricted Mode
        "consentMs": int(CONSENT_S * 1000),
    }
    call = Channel(
        channel.address, timeout=CALL_TIMEOUT_S
    )  # a consent modal or a preLaunchTask may take long
    try:
        found = call.call("debug.start", params, timeout=START_TIMEOUT_S + CONSENT_S)
    except BridgeDown as exc:
        if exc.sent:
            raise ToolFailure(
                f"unavailable: VS Code did not confirm the start of {target.name!r}; it may be running there "
                "(look at its debug views) before retrying",
                kind="unavailable",
            ) from None
        raise
    finally:
        call.close()
    if not isinstance(found, dict) or not found.get("id"):
        raise ToolFailure(f"unavailable: VS Code did not start {target.name!r}", kind="unavailable")
    return VsSession(ws, sid, found, jobs, channel, ours=True)


def listed(ws: Workspace) -> list[dict[str, Any]]:
    """VS Code's debug sessions (``id``, ``name``, ``type``, ``state``, ``ours``), [] when not connected."""
    channel = channel_of(ws)
    if channel is None:
        return []
    try:
        found = channel.call("debug.list", timeout=CALL_TIMEOUT_S)
    except (BridgeDown, ToolFailure):
        return []
    return [f for f in found if isinstance(f, dict) and f.get("id")] if isinstance(found, list) else []


def sync_options(ws: Workspace, path: str, line: int, options: dict[str, str]) -> None:
    """Give VS Code's breakpoint at ``path``:``line`` (0-based) the condition, hit count or log message
    of ``options`` (a no-op without VS Code)."""
    channel = channel_of(ws)
    if channel is None:
        return
    try:
        channel.call(
            "debug.breakpointOptions", {"path": path, "line": line, **options}, timeout=CALL_TIMEOUT_S
        )
    except (BridgeDown, ToolFailure) as exc:
        log.info("breakpoint options not given to VS Code: %s", exc)

"""A workspace's debug sessions: started from launch configurations, found by id, all stopped on close.

:class:`Debugging` is the per-workspace service. It turns a :class:`~..runconfigs.DebugTarget` into a
running :class:`~.session.Session` (``preLaunchTask`` first, as a job), feeds it the editor model's
breakpoints with their options, and sends a file's breakpoints again to every live session when
they change (:meth:`Debugging.breakpoints_changed`). It registers with the process engine's shutdown,
so a server exit (SIGTERM, client gone on stdio) stops every session and kills its trees. With VS Code
connected and debugging the configuration's type, the session runs in VS Code instead (:mod:`.vscode`),
and the sessions the person starts there are taken in (:meth:`Debugging.adopt`).
"""

from __future__ import annotations

import itertools
import threading
import time
from typing import TYPE_CHECKING, Any

from ..failures import ToolFailure
from ..processes.shutdown import register_service
from .adapters import adapter_for, launch_arguments
from .attach import attach_arguments
from .breakpoints import BreakpointOptions, source_breakpoints
from .session import Session

if TYPE_CHECKING:
    from ...workspace import Workspace
    from ..runconfigs import DebugTarget

MAX_LIVE_SESSIONS = 4
PRE_LAUNCH_TIMEOUT_S = 600.0
_ids = itertools.count(1)


class Debugging:
    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.sessions: dict[str, Session] = {}
        self.lock = threading.Lock()
        self.options = BreakpointOptions(ws.state_dir / "debug")
        self.closed = False
        self._vs_starting = 0
        self.filters: list[str] | None = None
        """Exception filters set by ``set_exception_breakpoints`` (None: each adapter's default)."""
        register_service(self)

    def _jobs(self) -> Any:
        from ..processes import Jobs

        return self.ws.service(Jobs)

    def breakpoints(self) -> dict[str, list[dict[str, Any]]]:
        """Every file's DAP breakpoints, from the editor model and the kept options."""
        from .. import editor

        by_file: dict[str, list[int]] = {}
        for bp in editor.editor_for(self.ws).breakpoints():
            by_file.setdefault(str(bp.path), []).append(bp.line)
        return {
            path: source_breakpoints(lines, {n: self.options.get(path, n) for n in lines})
            for path, lines in by_file.items()
        }

    def breakpoints_changed(self, path: str) -> None:
        """Send ``path``'s breakpoints again to every live session (a toggle while sessions run)."""
        bps = self.breakpoints().get(path, [])
        for session in self.list():
            if session.live and session.initialized.is_set():
                session.set_breakpoints(path, bps)

    def set_exception_filters(self, filters: list[str], session_id: str | None) -> None:
        """Which exceptions stop programs: the session ``session_id`` (or every live one) and the next ones."""
        from .adapters import ADAPTERS

        offered = {f for a in ADAPTERS for f in a.exception_filters}
        bad = [f for f in filters if f not in offered]
        if bad:
            raise ToolFailure(
                f"invalid filters: {', '.join(map(repr, bad))} (the adapters here offer {', '.join(sorted(offered))})",
                kind="invalid",
            )
        self.filters = list(filters)
        targets = [self.get(session_id)] if session_id else self.list()
        for session in targets:
            if session.live and session.initialized.is_set():
                session.set_exception_filters(filters)

    def start(self, target: DebugTarget) -> Session:
        """Start ``target`` under its adapter; returns once the program runs (or failed to start)."""
        if self.closed:
            raise ToolFailure("unavailable: the workspace is closing", kind="unavailable")
        if self.ws.policy.hosted:  # the adapter and the program would be in separate sandboxes (networks)
            raise ToolFailure(
                "unavailable: the debugger does not run in hosted workspaces yet (run the configuration "
                "without it: run_configuration)",
                kind="unavailable",
            )
        if sum(s.live for s in self.list()) >= MAX_LIVE_SESSIONS:
            raise ToolFailure(
                f"refused: {MAX_LIVE_SESSIONS} debug sessions are running (rule: a workspace runs at most that "
                "many; end one with stop_debug_session)",
                kind="refused",
            )
        jobs = self._jobs()
        live = self._start_in_vscode(target, jobs)
        if live is not None:
            return live
        adapter = adapter_for(target.kind, target.name)
        if target.request == "attach":
            arguments = attach_arguments(target.item, jobs)
            if adapter.server and "connect" in arguments:  # js-debug attaches to node's inspector port
                where = arguments.pop("connect")
                arguments |= {"type": "pwa-node", "port": where["port"], "address": where["host"]}
            elif adapter.server:
                arguments["type"] = "pwa-node"
        elif target.request == "launch" and target.launch is not None:
            arguments = launch_arguments(target.item, target.launch, adapter)
        else:
            raise ToolFailure(
                f"invalid configuration: request {target.request!r} is not launch or attach", kind="invalid"
            )
        if target.pre_launch is not None:
            self._pre_launch(target)
        connect = arguments.pop("connect", None)  # a listening adapter: talk to it directly
        where = (str(connect["host"]), int(connect["port"])) if connect else None
        session = Session(self.ws, f"dbg-{next(_ids)}", target.name, adapter, jobs, target.request, where)
        with self.lock:
            self.sessions[session.id] = session
            self._forget_old()
        filters = self.filters if self.filters is not None else list(adapter.default_filters)
        session.start(arguments, self.breakpoints(), filters)
        return session

    def _start_in_vscode(self, target: DebugTarget, jobs: Any) -> Session | None:
        """With VS Code connected and debugging ``target``'s type, the session VS Code runs (None: run it here)."""
        from ..editor.channel import BridgeDown
        from . import vscode

        if target.request != "launch":  # attach stays here: only to the workspace's own processes (.attach)
            return None
        channel = vscode.backing(self.ws, target.kind)
        if channel is None:
            return None
        with self.lock:
            self._vs_starting += 1  # not taken in as the person's meanwhile (adopt)
        try:
            session = vscode.start(self.ws, target, f"dbg-{next(_ids)}", jobs, channel)
        except BridgeDown:  # never reached VS Code: the headless adapter runs it
            return None
        else:
            with self.lock:
                self.sessions[session.id] = session
                self._forget_old()
            return session
        finally:
            with self.lock:
                self._vs_starting -= 1

    def adopt(self) -> None:
        """Take in the debug sessions VS Code runs that this service does not know (the person's own)."""
        from . import vscode

        if self._vs_starting:
            return
        found = vscode.listed(self.ws)
        if not found:
            return
        channel = vscode.channel_of(self.ws)
        assert channel is not None
        with self.lock:
            known = {getattr(s, "vs_id", None) for s in self.sessions.values()}
        for item in found:
            if item["id"] in known or item.get("state") == "ended":
                continue
            session = vscode.VsSession(self.ws, f"dbg-{next(_ids)}", item, self._jobs(), channel, ours=False)
            with self.lock:
                self.sessions[session.id] = session
                self._forget_old()

    def _pre_launch(self, target: DebugTarget) -> None:
        from ..runconfigs import Runs

        assert target.pre_launch is not None
        runs = self.ws.service(Runs)
        title = f"Task: {target.pre_launch.label}"
        job = runs.start_plan(target.pre_launch, name=target.pre_launch.label, kind="task", title=title)
        deadline = time.monotonic() + PRE_LAUNCH_TIMEOUT_S
        while job.running and time.monotonic() < deadline:
            time.sleep(0.05)
        if job.running or job.exit_code != 0:
            raise ToolFailure(
                f"conflict: the preLaunchTask of {target.name!r} ended {job.state} with exit code {job.exit_code} "
                f"(its output: get_job_output jobId={job.id}); the program was not started",
                kind="conflict",
            )

    def _forget_old(self) -> None:
        ended = [k for k, s in self.sessions.items() if not s.live]
        for key in ended[: max(0, len(ended) - 16)]:
            self.sessions.pop(key, None)

    def list(self) -> list[Session]:
        with self.lock:
            return list(self.sessions.values())

    def get(self, session_id: str | None) -> Session:
        """The session ``session_id``; without one, the newest live session (else the newest)."""
        self.adopt()
        sessions = self.list()
        if session_id:
            found = next((s for s in sessions if s.id == session_id), None)
        else:
            found = next((s for s in reversed(sessions) if s.live), sessions[-1] if sessions else None)
        if found is None:
            known = ", ".join(s.id for s in sessions) or "none (start one with start_debug_session)"
            raise ToolFailure(
                f"not found: no debug session {session_id or ''!r} (sessions: {known})", kind="not_found"
            )
        return found

    def close(self) -> None:
        """Stop every session (workspace close, server exit)."""
        self.closed = True
        threads = [threading.Thread(target=s.stop, daemon=True) for s in self.list() if s.holds_processes]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)

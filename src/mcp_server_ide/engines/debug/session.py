"""One debug session: its adapter connection and state machine, starting → running ⇄ stopped → ended.

Events move the state (``stopped``, ``continued``, ``exited``, ``terminated``, the connection
closing); waiters block on :attr:`Session.cond` until the program stops or ends. The program itself
is started through the adapter's ``runInTerminal`` request as a job of the process engine (see
:mod:`.adapters`): its output is that job's log, its tree is killed with the session.

A DAP server adapter (js-debug) runs the program in a child session it asks for (``startDebugging``):
the session opens it as a second connection (:attr:`Session.child`), and every request about the
program goes there (:attr:`Session.dap`); the first connection only launched it.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..failures import ToolFailure
from ..processes.command import prepare
from .adapters import Adapter
from .breakpoints import Verification
from .client import DapClient
from .render import compact_locals

if TYPE_CHECKING:
    from ...workspace import Workspace
    from ..processes import Jobs

State = Literal["starting", "running", "stopped", "ended"]


class Requester(Protocol):
    """What sends a session's DAP requests: a :class:`.client.DapClient`, or VS Code (:mod:`.vscode`)."""

    def request(
        self, command: str, arguments: dict[str, Any] | None = None, timeout_s: float = ...
    ) -> dict[str, Any]: ...


START_TIMEOUT_S = 20.0
MAX_NOTES = 200
PAGED_OVER = 100
"""A value with more indexed children than this is read a page at a time."""
END_GRACE_S = 5.0
"""After the adapter says the program ended, how long its job may take to exit before it is killed."""


class Session:
    """A started debug session (``launch`` or ``attach``) of one launch configuration."""

    def __init__(
        self,
        ws: Workspace,
        sid: str,
        name: str,
        adapter: Adapter,
        jobs: Jobs,
        request: str,
        connect: tuple[str, int] | None = None,
    ) -> None:
        self._init_state(ws, sid, name, adapter, jobs, request)
        argv, listen = adapter.argv, None
        if adapter.server and not connect:
            from . import jsdebug

            argv, self.install_note = jsdebug.ensure()
            self._socket_dir = tempfile.mkdtemp(prefix="mcp-ide-dap-")  # 0700: only this user connects
            listen = f"{self._socket_dir}/dap.sock"
            argv = [*argv, listen]
        self.listen = listen
        self.client = DapClient(
            None if connect else prepare(argv, ws=ws, cwd=str(ws.root)),
            self._on_event,
            self._on_reverse,
            connect,
            listen,
        )

    def _init_state(
        self, ws: Workspace, sid: str, name: str, adapter: Adapter, jobs: Jobs, request: str
    ) -> None:
        """The state every session has, whoever runs its adapter (this server, or VS Code: :mod:`.vscode`)."""
        self.ws = ws
        self.id = sid
        self.name = name
        self.adapter = adapter
        self.jobs = jobs
        self.request = request
        self.backed_by = f"headless {adapter.name}"
        """Who runs the adapter: ``headless debugpy``/``headless js-debug`` (this server), or ``VS Code``."""
        self.listen: str | None = None
        self.ended_note: str | None = None
        """Why the session ended when it was not the program's end (VS Code stopped answering)."""
        self.state: State = "starting"
        self.cond = threading.Condition()
        self.stop_info: dict[str, Any] | None = None
        self.exit_code: int | None = None
        self.job_id: str | None = None
        self.started_at = time.time()
        self.initialized = threading.Event()
        self._stop_lock = threading.Lock()
        self.verification = Verification()
        self.notes: list[str] = []
        self.notes_seen = 0
        """How many notes were dropped from the front of :attr:`notes` (kept short)."""
        self.install_note: str | None = None
        self.child: DapClient | None = None
        self.child_initialized = threading.Event()
        self.child_ready = threading.Event()
        """The child session is configured (or failed to be): requests about the program may go to it."""
        self._breakpoints: dict[str, list[dict[str, Any]]] = {}
        self._filters: list[str] = []
        self._socket_dir: str | None = None
        self._indexed: dict[int, int] = {}
        """``variablesReference -> indexedVariables`` of the values seen (which to ask for by pages)."""

    @property
    def dap(self) -> Requester:
        """The connection that drives the program: the child session's once there is one."""
        return self.child or self.client

    # -- events ------------------------------------------------------------------------

    def _note(self, text: str) -> None:
        self.notes.append(text)
        if len(self.notes) > MAX_NOTES:
            del self.notes[:50]
            self.notes_seen += 50

    def notes_after(self, index: int) -> tuple[list[str], int]:
        """Notes since absolute index ``index``, and the next index."""
        with self.cond:
            start = max(0, index - self.notes_seen)
            return self.notes[start:], self.notes_seen + len(self.notes)

    def _on_child_event(self, event: str, body: dict[str, Any]) -> None:
        if event == "initialized":
            self.child_initialized.set()
        else:
            self._on_event(event, body)

    def _on_event(self, event: str, body: dict[str, Any]) -> None:
        with self.cond:
            if event == "initialized":
                self.initialized.set()
            elif event == "stopped":
                self.state, self.stop_info = "stopped", body
                self._note(f"{self.id} stopped ({body.get('reason', '?')})")
            elif event == "continued":
                if self.state == "stopped":
                    self.state, self.stop_info = "running", None
            elif event == "exited":
                self.exit_code = body.get("exitCode")
                self._note(f"{self.id} program exited with code {self.exit_code}")
            elif event in ("terminated", "_closed"):
                if self.state != "ended":
                    self._note(f"{self.id} ended")
                    if self.state != "starting":  # start() cleans up a failed start itself
                        threading.Thread(
                            target=self._ended, name=f"mcp-ide-{self.id}-end", daemon=True
                        ).start()
                self.state = "ended"
            elif event == "breakpoint" and isinstance(body.get("breakpoint"), dict):
                self.verification.changed(body["breakpoint"])
            elif event == "output" and body.get("category") in ("console", "stdout", "stderr", "important"):
                mirrored = self.adapter.mirrors_output and body.get("category") in ("stdout", "stderr")
                self._output(str(body.get("output", "")), to_log=not mirrored)
            self.cond.notify_all()

    def _output(self, text: str, to_log: bool = True) -> None:
        """Adapter messages and logpoints: into the program's job log (paged by get_job_output)."""
        if self.job_id is not None and to_log:
            with contextlib.suppress(ToolFailure):
                self.jobs.get(self.job_id).log.append(text.encode(errors="replace"))
        if text.strip():
            self._note(f"{self.id} output: {text.strip()[:200]}")

    def _on_reverse(self, command: str, args: dict[str, Any]) -> dict[str, Any]:
        if command == "startDebugging" and self.listen is not None:
            if self.child is None:  # the program's session; a later one (a forked node) runs undebugged
                threading.Thread(
                    target=self._start_child, args=(args,), name=f"mcp-ide-{self.id}-child", daemon=True
                ).start()
            return {}
        if command != "runInTerminal":
            raise ValueError(f"this client does not support the {command!r} request")
        argv = [str(a) for a in args.get("args", [])]
        env = {str(k): (None if v is None else str(v)) for k, v in (args.get("env") or {}).items()}
        job = self.jobs.start(argv, cwd=args.get("cwd") or None, env=env, title=f"Debug: {self.name}")
        self.job_id = job.id
        return {"processId": job.pid}

    # -- starting ----------------------------------------------------------------------

    def _initialize(self, client: DapClient) -> None:
        client.request(
            "initialize",
            {
                "clientID": "mcp-server-ide",
                "clientName": "mcp-server-ide",
                "adapterID": self.adapter.adapter_id,
                "pathFormat": "path",
                "linesStartAt1": True,
                "columnsStartAt1": True,
                "supportsVariableType": True,
                "supportsRunInTerminalRequest": True,
                "supportsStartDebuggingRequest": self.listen is not None,
            },
        )

    def _configure(
        self, client: DapClient, request: str, arguments: dict[str, Any], ready: threading.Event
    ) -> None:
        """``launch``/``attach`` on ``client``, then (once it is ``initialized``) breakpoints and ``configurationDone``."""
        waiter = client.send_request(request, arguments)
        deadline = time.monotonic() + START_TIMEOUT_S
        while not ready.wait(0.05):
            if waiter.done.is_set():
                client.answer(request, waiter)  # a refusal names its reason
            if time.monotonic() > deadline or client.closed.is_set():
                raise ToolFailure(
                    f"unavailable: the debug adapter did not get ready within {START_TIMEOUT_S:g} s",
                    kind="unavailable",
                )
        for path, bps in list(self._breakpoints.items()):
            self.set_breakpoints(path, bps)
        self.set_exception_filters(self._filters)
        client.request("configurationDone")
        client.answer(request, waiter, START_TIMEOUT_S)

    def start(
        self, arguments: dict[str, Any], breakpoints: dict[str, list[dict[str, Any]]], filters: list[str]
    ) -> None:
        """Spawn the adapter, ``initialize``, ``launch``/``attach``, send the breakpoints, ``configurationDone``."""
        self._breakpoints, self._filters = dict(breakpoints), list(filters)
        try:
            self.client.start()
            self._initialize(self.client)
            self._configure(self.client, self.request, arguments, self.initialized)
        except BaseException:
            self.stop()
            raise
        with self.cond:
            if self.state == "starting":
                self.state = "running"
            self.cond.notify_all()

    def _start_child(self, args: dict[str, Any]) -> None:
        """Open the child session js-debug asked for (``startDebugging``) and configure it."""
        assert self.listen is not None
        child = DapClient(None, self._on_child_event, self._on_reverse, self.listen)
        try:
            child.start()
            self._initialize(child)
            self.child = child  # from here on breakpoints and requests go to the program's session
            request = "attach" if args.get("request") == "attach" else "launch"
            self._configure(child, request, dict(args.get("configuration") or {}), self.child_initialized)
        except ToolFailure as exc:
            with self.cond:
                self._note(f"{self.id} the program's debug session did not start: {exc}")
                self.cond.notify_all()
        finally:
            self.child_ready.set()

    def set_breakpoints(self, path: str, bps: list[dict[str, Any]]) -> None:
        self._breakpoints[path] = bps
        body = self.dap.request("setBreakpoints", {"source": {"path": path}, "breakpoints": bps})
        self.verification.answered(path, bps, body.get("breakpoints", []))

    def set_exception_filters(self, filters: list[str]) -> None:
        offered = self.adapter.exception_filters
        bad = [f for f in filters if f not in offered]
        if bad:
            raise ToolFailure(
                f"invalid filters: {', '.join(map(repr, bad))} (this adapter offers {', '.join(offered)})",
                kind="invalid",
            )
        self._filters = list(filters)
        self.dap.request("setExceptionBreakpoints", {"filters": list(filters)})

    # -- control -----------------------------------------------------------------------

    @property
    def live(self) -> bool:
        return self.state != "ended"

    @property
    def holds_processes(self) -> bool:
        """Whether its adapter is still up (an ended session's is stopped shortly after)."""
        return not self.client.closed.is_set() or (self.client.tree is not None and not self.client.tree.done)

    def _need_stopped(self, what: str) -> dict[str, Any]:
        with self.cond:
            if self.state == "stopped" and self.stop_info is not None:
                return self.stop_info
            state = self.state
        raise ToolFailure(
            f"conflict: {what} needs the program stopped; session {self.id} is {state} "
            "(debug_pause stops it; start_debug_session starts a new one)",
            kind="conflict",
        )

    def resume(self, how: Literal["continue", "next", "stepIn", "stepOut"]) -> None:
        stop = self._need_stopped(how)
        thread = stop.get("threadId")
        thread = self.first_thread() if thread is None else thread  # js-debug's thread is 0
        with self.cond:
            self.state, self.stop_info = "running", None
        self.dap.request(how, {"threadId": thread})

    def pause(self) -> None:
        with self.cond:
            if self.state != "running":
                return
        thread = self.first_thread()  # first: with js-debug it waits for the program's session
        self.dap.request("pause", {"threadId": thread})

    def first_thread(self) -> int:
        if self.listen is not None:  # js-debug: the program's threads are the child session's
            deadline = time.monotonic() + START_TIMEOUT_S
            while not self.child_ready.wait(0.05) and self.live and time.monotonic() < deadline:
                pass
        threads = self.dap.request("threads").get("threads", [])
        if not threads:
            raise ToolFailure("conflict: the program has no threads (it is ending)", kind="conflict")
        return int(threads[0]["id"])

    def wait(self, timeout_s: float, on_note: Callable[[str], None] | None = None) -> State:
        """Block until the program stops or ends, or ``timeout_s`` passes; returns the state."""
        with self.cond:
            self.cond.wait_for(lambda: self.state in ("stopped", "ended"), max(0.0, timeout_s))
            return self.state

    # -- reading -----------------------------------------------------------------------

    def where(self, path: str | None, line: int | None) -> str:
        """``rel/path.py:12`` inside the workspace; a file outside shows only its name."""
        if not path:
            return f"?:{line}"
        p = Path(path)
        for root in self.ws.roots:
            with contextlib.suppress(ValueError, OSError):
                return f"{p.resolve().relative_to(root.resolve()).as_posix()}:{line}"
        return f"(outside)/{p.name}:{line}"

    def frames(self, thread: int | None = None, levels: int = 20) -> tuple[int, list[dict[str, Any]], int]:
        """``(threadId, frames, totalFrames)``."""
        stop = self._need_stopped("reading the stack")
        if thread is None:
            thread = stop.get("threadId")
        thread = int(self.first_thread() if thread is None else thread)
        body = self.dap.request("stackTrace", {"threadId": thread, "startFrame": 0, "levels": levels})
        frames: list[dict[str, Any]] = list(body.get("stackFrames", []))
        return thread, frames, int(body.get("totalFrames") or len(frames))

    def threads(self) -> list[dict[str, Any]]:
        self._need_stopped("listing threads")
        return list(self.dap.request("threads").get("threads", []))

    def scopes(self, frame_id: int) -> list[dict[str, Any]]:
        self._need_stopped("reading variables")
        return list(self.dap.request("scopes", {"frameId": frame_id}).get("scopes", []))

    def variables(self, ref: int) -> list[dict[str, Any]]:
        """All of ``ref``'s children (an adapter that pages, js-debug, is asked for the first page only)."""
        return self.variables_page(ref, 0, PAGED_OVER)[0]

    def variables_page(self, ref: int, offset: int, limit: int) -> tuple[list[dict[str, Any]], int | None]:
        """``ref``'s children from ``offset``: a value with many indexed children (as the adapter counted
        them, ``indexedVariables``) is asked for one page; returns the page and that count, else every
        child and None."""
        self._need_stopped("reading variables")
        indexed = self._indexed.get(ref, 0)
        args: dict[str, Any] = {"variablesReference": ref}
        if indexed > PAGED_OVER:
            offset = max(0, min(offset, indexed))
            args |= {"filter": "indexed", "start": offset, "count": max(0, min(limit, indexed - offset))}
        found = list(self.dap.request("variables", args).get("variables", []))
        if len(self._indexed) > 10_000:
            self._indexed.clear()
        for var in found:
            if var.get("variablesReference") and var.get("indexedVariables"):
                self._indexed[int(var["variablesReference"])] = int(var["indexedVariables"])
        return found, (indexed if indexed > PAGED_OVER else None)

    def evaluate(self, expression: str, frame_id: int | None) -> dict[str, Any]:
        self._need_stopped("evaluating")
        if frame_id is None:  # the top frame of the stopped thread, as a person's debug console has it
            _, frames, _ = self.frames(levels=1)
            frame_id = frames[0]["id"] if frames else None
        args: dict[str, Any] = {"expression": expression, "context": "repl"}
        if frame_id is not None:
            args["frameId"] = frame_id
        return self.dap.request("evaluate", args)

    def top(self) -> dict[str, Any]:
        """The stop in brief: reason, location, function, frame id and the frame's locals."""
        stop = self._need_stopped("reading the stop")
        out: dict[str, Any] = {"reason": stop.get("reason", "?")}
        if stop.get("text") or stop.get("description"):
            out["detail"] = str(stop.get("text") or stop.get("description"))[:300]
        _, frames, _ = self.frames(levels=1)
        if frames:
            frame = frames[0]
            out["at"] = self.where((frame.get("source") or {}).get("path"), frame.get("line"))
            out["function"] = frame.get("name")
            out["frameId"] = frame["id"]
            scopes = self.scopes(frame["id"])
            if scopes:
                local = compact_locals(self.variables(scopes[0]["variablesReference"]))
                if local:
                    out["locals"] = local
        return out

    # -- ending ------------------------------------------------------------------------

    def final_exit_code(self) -> int | None:
        """The program's exit code: the adapter's ``exited`` event, else (js-debug sends none) its job's,
        waiting up to :data:`END_GRACE_S` for the job to end."""
        if self.exit_code is not None or self.job_id is None:
            return self.exit_code
        deadline = time.monotonic() + END_GRACE_S
        while True:
            try:
                job = self.jobs.get(self.job_id)
            except ToolFailure:
                return None
            if not job.running:
                self.exit_code = job.exit_code
                return self.exit_code
            if time.monotonic() > deadline:
                return None
            time.sleep(0.05)

    def stop(self) -> None:
        """End the session: ``disconnect`` (ending a launched program), then kill the adapter's tree
        and the program's job, whatever answered. Safe to call again, from any thread."""
        with self._stop_lock:
            self._stop()

    def _ended(self) -> None:
        """The program ended on its own: let its job finish (flush, exit) before the cleanup kills leftovers."""
        deadline = time.monotonic() + END_GRACE_S
        while self.job_id is not None and time.monotonic() < deadline:
            try:
                if not self.jobs.get(self.job_id).running:
                    break
            except ToolFailure:
                break
            time.sleep(0.05)
        self.stop()

    def _stop(self) -> None:
        for client in (self.child, self.client):
            if client is not None and not client.closed.is_set() and (client.proc or client.sock) is not None:
                with contextlib.suppress(ToolFailure, ValueError):
                    client.request("disconnect", {"terminateDebuggee": self.request == "launch"}, 3.0)
        if self.job_id is not None and self.request == "launch":
            with contextlib.suppress(ToolFailure):
                if self.jobs.get(self.job_id).running:
                    self.jobs.cancel(self.job_id)
        if self.child is not None:
            self.child.close()
        self.client.close()
        if self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)
        with self.cond:
            self.state = "ended"
            self.cond.notify_all()

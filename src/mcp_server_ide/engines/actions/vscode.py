"""VS Code's own tasks, launch configurations, commands, running work and extensions, through the
companion extension's bridge (:mod:`..editor.channel`, handlers in ``extension/src/actions.ts``).

:class:`VsCode` is a workspace service used only while the editor backend is the bridge
(:func:`channel_of`); every method raises :class:`~..editor.channel.BridgeDown` (or returns None)
when VS Code does not answer, so the tools keep their headless answers then.

A task or launch configuration started in VS Code runs in VS Code's terminal or debugger; here it
is a job of the process engine with no process (``list_jobs``, ``get_job_output``, ``cancel_job``
stops it in VS Code), ended by a watcher thread with the task's exit code (``onDidEndTaskProcess``;
a debug session has none). VS Code gives extensions no access to a task's terminal output.

In a workspace VS Code does not trust (or a server started untrusted) the extension asks the person
in a modal before a task, launch configuration or code-running command (tasks, debug, tests, the
terminal) runs; no answer within :data:`CONSENT_S` is a refusal.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...workspace import Workspace
from ..editor import editor_for
from ..editor.bridge import BridgeEditor
from ..editor.channel import BridgeDown, Channel
from ..failures import ToolFailure
from ..progress import ProgressItem, item
from .catalogue import Action

if TYPE_CHECKING:
    from ..processes import Job

log = logging.getLogger(__name__)

CONSENT_S = 60.0
"""How long the person has to answer VS Code's modal before the run counts as refused."""
LIST_TIMEOUT = 10.0
"""Seconds VS Code may take to list tasks (its task providers scan the workspace) or commands."""
START_TIMEOUT = 30.0
PROGRESS_TIMEOUT = 2.0
COMMAND_WAIT_S = 10.0
"""How long a command is waited on; one still running then (a dialog open) is reported as running."""
WATCH_POLL_S = 2.0
GIVE_UP_S = 60.0
"""How long the watcher keeps trying to reach a VS Code that stopped answering before it ends the jobs."""


def channel_of(ws: Workspace) -> Channel | None:
    """The bridge channel when the workspace's editor is VS Code's (None: the headless model)."""
    backend = editor_for(ws)
    return backend.channel if isinstance(backend, BridgeEditor) else None


@dataclass(frozen=True)
class Listed:
    name: str
    kind: str
    """``task`` or ``launch``."""
    folder: str | None


@dataclass(frozen=True)
class CommandResult:
    """What a VS Code command returned: JSON ``result``, or a ``note`` why not, or still ``running``."""

    result: object = None
    note: str | None = None
    running: bool = False

    def text(self) -> str:
        if self.running:
            return f"started; the command still runs in VS Code after {COMMAND_WAIT_S:g} s (a dialog may be open)"
        if self.result is not None:
            return json.dumps(self.result, ensure_ascii=False, separators=(",", ":"))
        return f"ok ({self.note})" if self.note else "ok"


@dataclass
class _Run:
    job: Job
    stop: threading.Event
    stopping: bool = False


class VsCode:
    """VS Code's run configurations, commands and running work for one workspace (see the module)."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._lock = threading.Lock()
        self._runs: dict[str, _Run] = {}
        self._watcher: threading.Thread | None = None
        self._closed = threading.Event()

    # -- calls ------------------------------------------------------------------------

    def _channel(self) -> Channel:
        channel = channel_of(self.ws)
        if channel is None:
            raise BridgeDown("VS Code is not connected")
        return channel

    def _call(self, method: str, params: dict[str, Any] | None = None, *, timeout: float) -> Any:
        return self._channel().call(method, params, timeout=timeout)

    def _call_apart(self, method: str, params: dict[str, Any], *, timeout: float) -> Any:
        """A long call (a modal, a slow command) on a connection of its own: the editor's stays free."""
        channel = Channel(self._channel().address)
        try:
            return channel.call(method, params, timeout=timeout)
        finally:
            channel.close()

    def _inside(self, folder: object) -> bool:
        if not isinstance(folder, str) or not folder:
            return True  # a workspace-wide task or configuration
        real = Path(os.path.realpath(folder))
        return any(real == root or real.is_relative_to(root) for root in self.ws.roots)

    # -- run configurations -------------------------------------------------------------

    def run_configurations(self) -> list[Listed]:
        """What VS Code's launch and task providers offer for this workspace's folders."""
        found = self._call("runs.list", timeout=LIST_TIMEOUT)
        out: list[Listed] = []
        for entry in found if isinstance(found, list) else []:
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                continue
            if self._inside(entry.get("folder")):
                folder = entry.get("folder") if isinstance(entry.get("folder"), str) else None
                out.append(Listed(entry["name"], str(entry.get("kind") or "task"), folder))
        return out

    def start(self, listed: Listed, *, debug: bool, detail: str = "") -> Job:
        """Start ``listed`` in VS Code (asking the person first in an untrusted workspace); its job."""
        from ..processes import Jobs

        confirm = not self.ws.policy.trusted
        params: dict[str, Any] = {
            "name": listed.name,
            "folder": listed.folder,
            "noDebug": not debug,
            "confirm": confirm,
            "consentMs": int(CONSENT_S * 1000),
            "detail": detail[:400],
        }
        try:
            found = self._call_apart("runs.start", params, timeout=START_TIMEOUT + CONSENT_S)
        except BridgeDown as exc:
            if not exc.sent:
                raise
            raise ToolFailure(
                f"unavailable: VS Code did not confirm the start of {listed.name!r}; it may be running there "
                "(look at its terminal and debug views) before retrying",
                kind="unavailable",
            ) from None
        found = found if isinstance(found, dict) else {}
        run_id = str(found.get("id") or "")
        if listed.kind == "task":
            title = f"Task: {listed.name}"
            where = f"VS Code's terminal {found.get('terminal') or 'Task - ' + listed.name!r}"
        else:
            title = f"{'Debug' if debug else 'Run'}: {listed.name}"
            where = "VS Code's debug views"
        stop = threading.Event()
        jobs = self.ws.service(Jobs)
        job = jobs.track(
            title, f"{title} in VS Code (its output is in {where})", started_at=time.time(), stop=stop
        )
        job.log.append(
            f"started in VS Code; its output is in {where} (VS Code gives extensions no access to it)\n".encode()
        )
        job.log.version += 1
        if not run_id:
            jobs.finish(job, exit_code=None)  # VS Code started it but cannot report its end
        else:
            with self._lock:
                self._runs[run_id] = _Run(job, stop)
                if self._watcher is None:
                    self._watcher = threading.Thread(
                        target=self._watch, name="mcp-ide-vscode-runs", daemon=True
                    )
                    self._watcher.start()
        return job

    def _watch(self) -> None:
        """End each run's job when VS Code reports its end (the task's exit code)."""
        from ..processes import Jobs

        jobs = self.ws.service(Jobs)
        channel: Channel | None = None
        down_since: float | None = None
        while not self._closed.is_set():
            with self._lock:
                runs = dict(self._runs)
                if not runs:
                    self._watcher = None
                    break
            try:
                if channel is None:
                    channel = Channel(self._channel().address)
                for run_id, run in runs.items():
                    if run.stop.is_set() and not run.stopping:
                        run.stopping = True
                        channel.call("runs.stop", {"id": run_id}, timeout=START_TIMEOUT)
                answer = channel.call(
                    "runs.wait", {"ids": list(runs), "timeoutMs": int(WATCH_POLL_S * 1000)},
                    timeout=WATCH_POLL_S + 10,
                )  # fmt: skip
                down_since = None
            except (BridgeDown, ToolFailure) as exc:
                now = time.monotonic()
                down_since = down_since or now
                if now - down_since > GIVE_UP_S:
                    self._end_all(jobs, f"VS Code stopped answering ({exc}); how the run ended is not known")
                    break
                self._closed.wait(1.0)
                continue
            ended = (answer or {}).get("ended") if isinstance(answer, dict) else None
            done: list[str] = []
            for run_id, info in (ended or {}).items():
                with self._lock:
                    run = self._runs.pop(run_id, None)
                if run is None:
                    continue
                done.append(run_id)
                info = info if isinstance(info, dict) else {}
                if info.get("gone"):
                    jobs.finish(run.job, "VS Code lost track of this run (its extension host restarted)")
                elif run.stop.is_set():
                    jobs.finish(run.job, "cancelled: stopped in VS Code")
                else:
                    code = info.get("exitCode")
                    jobs.finish(run.job, exit_code=code if isinstance(code, int) else None)
            if done:
                with contextlib.suppress(BridgeDown, ToolFailure):
                    channel.call("runs.forget", {"ids": done}, timeout=START_TIMEOUT)
        if channel is not None:
            channel.close()

    def _end_all(self, jobs: Any, error: str) -> None:
        with self._lock:
            runs, self._runs, self._watcher = list(self._runs.values()), {}, None
        for run in runs:
            jobs.finish(run.job, error)

    # -- commands -----------------------------------------------------------------------

    def commands(self) -> list[tuple[str, str]]:
        """VS Code's commands as ``(id, title)``, by id (the title "" when the API gives none)."""
        found = self._call("commands.list", timeout=LIST_TIMEOUT)
        out: list[tuple[str, str]] = []
        for entry in found if isinstance(found, list) else []:
            if isinstance(entry, dict) and isinstance(entry.get("id"), str):
                out.append((entry["id"], str(entry.get("title") or "")))
        return out

    def run_command(self, command: str) -> CommandResult:
        try:
            found = self._call_apart(
                "commands.run",
                {
                    "id": command,
                    "waitMs": int(COMMAND_WAIT_S * 1000),
                    "confirm": not self.ws.policy.trusted,
                    "consentMs": int(CONSENT_S * 1000),
                },
                timeout=COMMAND_WAIT_S + CONSENT_S + 10,
            )
        except BridgeDown as exc:
            if not exc.sent:
                raise
            raise ToolFailure(
                f"unavailable: VS Code did not answer whether {command!r} ran; it may have",
                kind="unavailable",
            ) from None
        found = found if isinstance(found, dict) else {}
        note = found.get("note")
        return CommandResult(
            found.get("result"), note if isinstance(note, str) else None, bool(found.get("running"))
        )

    def available_actions(self) -> list[Action]:
        """:class:`..catalogue.ActionSource`: every VS Code command (none when VS Code does not answer)."""
        try:
            listed = self.commands()
        except (BridgeDown, ToolFailure):
            return []
        return [Action(cid, title, lambda cid=cid: self.run_command(cid)) for cid, title in listed]

    # -- progress and extensions ----------------------------------------------------------

    def progress_items(self) -> list[ProgressItem]:
        """:class:`..progress.ProgressSource`: VS Code's running tasks and debug sessions."""
        try:
            found = self._call("runs.progress", timeout=PROGRESS_TIMEOUT)
        except (BridgeDown, ToolFailure):
            return []
        with self._lock:
            jobs = {run_id: run.job.id for run_id, run in self._runs.items()}
        out: list[ProgressItem] = []
        for n, entry in enumerate(found if isinstance(found, list) else []):
            if not isinstance(entry, dict) or not isinstance(entry.get("title"), str):
                continue
            kind = str(entry.get("kind") or "task")
            job_id = jobs.get(str(entry.get("run")))
            message = f"VS Code {kind}" + (
                f" ({entry['type']})" if isinstance(entry.get("type"), str) else ""
            )
            out.append(
                item(
                    job_id or f"vscode:{kind}:{n}",
                    entry["title"],
                    kind,
                    cancellable=job_id is not None,
                    message=message,
                    job_id=job_id,
                )
            )
        return out

    def extensions(self) -> dict[str, list[str]]:
        """The installed extensions: ``installed`` as ``id@version`` (``(inactive)`` when not active yet)
        and ``builtin`` ids."""
        found = self._call("extensions", timeout=LIST_TIMEOUT)
        found = found if isinstance(found, dict) else {}
        return {
            key: [str(x) for x in found.get(key) or [] if isinstance(x, str)]
            for key in ("installed", "builtin")
        }

    def follow_roots(self, roots: list[Path]) -> bool:
        return True

    def close(self) -> None:
        self._closed.set()


def _live(ws: Workspace) -> list[Listed] | None:
    """VS Code's run configurations, or None when VS Code is not connected or does not answer."""
    if channel_of(ws) is None:
        return None
    try:
        return ws.service(VsCode).run_configurations()
    except (BridgeDown, ToolFailure) as exc:
        log.info("VS Code's run configurations are unavailable: %s", exc)
        return None


def run_names(ws: Workspace) -> list[str]:
    """The server's own names (launch.json, tasks.json), then those only VS Code's providers offer."""
    from .. import runconfigs

    try:
        own, problem = runconfigs.names(ws), None
    except ToolFailure as exc:
        own, problem = [], exc
    live = _live(ws)
    if live is None:
        if problem is not None:
            raise problem
        return own
    return list(dict.fromkeys([*own, *(entry.name for entry in live)]))


def find_run(ws: Workspace, name: str) -> Listed | None:
    """VS Code's launch configuration (first) or task named ``name``; None when VS Code is not there
    or offers none by that name."""
    live = _live(ws) or []
    return next((e for e in live if e.name == name and e.kind == "launch"), None) or next(
        (e for e in live if e.name == name), None
    )


def installed_extensions(ws: Workspace) -> dict[str, list[str]] | None:
    """VS Code's installed extensions (see :meth:`VsCode.extensions`), None when VS Code is not there."""
    if channel_of(ws) is None:
        return None
    try:
        return ws.service(VsCode).extensions()
    except (BridgeDown, ToolFailure) as exc:
        log.info("VS Code's extensions are unavailable: %s", exc)
        return None

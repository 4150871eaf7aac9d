"""The catalogue: what this server can really do on a workspace right now, under VS Code's command ids.

Nothing here is a fixed list: :func:`available` looks at the workspace (its editor model,
``.vscode/tasks.json`` and ``launch.json``, test runners, git remotes, running jobs, the tools
installed) and offers only actions that change something when run. Commands of VS Code that
would do nothing here are left out (``workbench.action.files.save``: every write of this
server is already on disk).

Running an action (:func:`execute`) starts the work without waiting for it to finish (seed 000:
"doesn't wait"): tests, tasks and run configurations are jobs of the process engine, whose exit
code is their result; in-process work is waited on for :data:`~.work.QUICK_S` (see :mod:`.work`).

A workspace service that implements :class:`ActionSource` (a connected VS Code bridge, later)
adds its own actions, replacing headless ones of the same id: the tools above never change.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ...workspace import Workspace
from .. import runconfigs
from ..editor import editor_for
from ..failures import ToolFailure
from ..runconfigs.configs import JsonObject
from .formatting import document_formatter, ruff_bin, ruff_rewrite
from .testrunners import test_runners
from .work import QUICK_S, ActionWork, Work

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Action:
    id: str
    text: str
    start: Callable[[], object]
    """Starts the work and returns quickly: a job, a :class:`Work` (see :func:`execute`), or None when done."""
    runs_workspace_code: bool = False
    """Runs programs or scripts the workspace defines: asks first in an untrusted workspace."""
    detail: str = ""


def _git_remotes(ws: Workspace) -> list[str]:
    """The repository's remotes (a contained read: no hooks, fsmonitor or pager)."""
    from ..git import query as gitquery

    if not (ws.root / ".git").exists() or shutil.which("git") is None:
        return []
    out = gitquery.run(ws, "remote")
    return [line.strip() for line in out.text.splitlines() if line.strip()] if out.ok else []


def available(ws: Workspace) -> list[Action]:
    """Every action that does something real on ``ws`` now (none in a read-only workspace: all act)."""
    actions: list[Action] = []
    if ws.policy.read_only:
        return actions
    backend = editor_for(ws)
    state = backend.state()
    runs = ws.service(runconfigs.Runs)
    work = ws.service(ActionWork)
    active = state.active

    if active is not None:
        formatter = document_formatter(ws, active)
        if formatter is not None:
            actions.append(
                Action(
                    "editor.action.formatDocument",
                    "Format Document",
                    lambda: work.spawn("Format Document", formatter, f"format {active.name}"),
                    detail=f"format {active.name}",
                )
            )
        if active.suffix in (".py", ".pyi") and ruff_bin() is not None:
            actions.append(
                Action(
                    "editor.action.organizeImports",
                    "Organize Imports",
                    lambda: work.spawn(
                        "Organize Imports",
                        lambda: ruff_rewrite(
                            ws, active, ["check", "--fix-only", "--select", "I", "--exit-zero"]
                        ),
                        f"ruff check --select I --fix {active.name}",
                    ),
                    detail=f"ruff check --select I --fix {active.name}",
                )
            )
            actions.append(
                Action(
                    "editor.action.fixAll",
                    "Fix All",
                    lambda: work.spawn(
                        "Fix All",
                        lambda: ruff_rewrite(ws, active, ["check", "--fix-only", "--exit-zero"]),
                        f"ruff check --fix {active.name}",
                    ),
                    detail=f"ruff check --fix {active.name}",
                )
            )
        actions.append(
            Action(
                "editor.debug.action.toggleBreakpoint",
                "Debug: Toggle Breakpoint",
                lambda: _toggle_at_cursor(ws),
                detail="at the cursor line of the active file",
            )
        )
        actions.append(
            Action("workbench.action.closeActiveEditor", "View: Close Editor", lambda: backend.close(None))
        )
    if state.open:
        actions.append(
            Action("workbench.action.closeAllEditors", "View: Close All Editors", lambda: _close_all(ws))
        )
    if backend.breakpoints():
        actions.append(
            Action(
                "workbench.debug.viewlet.action.removeAllBreakpoints",
                "Debug: Remove All Breakpoints",
                backend.clear_breakpoints,
            )
        )

    try:
        configs = runconfigs.load(ws)
    except ToolFailure:
        configs = None
    if configs is not None:
        runnable_tasks = [t for t in configs.tasks if _plans_cleanly(ws, configs, t["label"])]
        for kind, command, text in (("build", "build", "Run Build Task"), ("test", "test", "Run Test Task")):
            label = _default_in_group(runnable_tasks, kind)
            if label is not None:
                actions.append(
                    Action(
                        f"workbench.action.tasks.{command}",
                        f"Tasks: {text} ({label})",
                        lambda label=label: runs.start(label),
                        runs_workspace_code=True,
                    )
                )
        for task in runnable_tasks:
            if task.get("hide"):
                continue
            label = task["label"]
            actions.append(
                Action(
                    f"workbench.action.tasks.runTask:{label}",
                    f"Tasks: Run Task: {label}",
                    lambda label=label: runs.start(label),
                    runs_workspace_code=True,
                )
            )
        first = next(
            (c["name"] for c in configs.launch if not (c.get("presentation") or {}).get("hidden")), None
        )
        if first is not None and _plans_cleanly(ws, configs, first):
            actions.append(
                Action(
                    "workbench.action.debug.run",
                    f"Debug: Run Without Debugging ({first})",
                    lambda: runs.start(first),
                    runs_workspace_code=True,
                )
            )
    if runs.running():
        actions.append(
            Action("workbench.action.tasks.terminate", "Tasks: Terminate Task", lambda: _terminate_runs(ws))
        )

    tests = test_runners(ws)
    if tests:
        plan: runconfigs.Plan = (
            tests[0] if len(tests) == 1 else runconfigs.Group("Run All Tests", "sequence", list(tests))
        )
        names = ", ".join(s.label for s in tests)
        actions.append(
            Action(
                "testing.runAll",
                f"Test: Run All Tests ({names})",
                lambda: runs.start_plan(
                    plan, name="Run All Tests", kind="tests", title="Test: Run All Tests"
                ),
                runs_workspace_code=True,
            )
        )

    if _git_remotes(ws):
        actions.append(
            Action(
                "git.fetch",
                "Git: Fetch",
                lambda: work.spawn("Git: Fetch", lambda: _git_fetch(ws), "git fetch --prune"),
                detail="git fetch --prune",
            )
        )
    return _merged(ws, actions)


@runtime_checkable
class ActionSource(Protocol):
    """A workspace service that contributes actions (a connected VS Code bridge offers its commands).

    Its actions join :func:`available`; on the same id, the source's action replaces the headless one.
    """

    def available_actions(self) -> list[Action]: ...


def _merged(ws: Workspace, actions: list[Action]) -> list[Action]:
    extra: list[Action] = []
    for service in ws.services():
        if isinstance(service, ActionSource):
            try:
                extra.extend(service.available_actions())
            except Exception:
                log.exception("action source %r failed", type(service).__name__)
    if not extra:
        return actions
    ids = {a.id for a in extra}
    return [a for a in actions if a.id not in ids] + extra


def find(ws: Workspace, action_id: str) -> Action | None:
    return next((a for a in available(ws) if a.id == action_id), None)


def execute(ws: Workspace, action: Action) -> object:
    """Start ``action``; returns what its start returned. In-process work is waited on for :data:`QUICK_S`:
    its failure by then is raised (a ``ToolFailure`` with the action's error text); work still running
    then becomes a job. Process work (tasks, tests, run configurations) is a job from the start: its
    exit code is its result."""
    started = action.start()
    if isinstance(started, Work):
        ws.service(ActionWork).wait(started, QUICK_S)
    return started


def _plans_cleanly(ws: Workspace, configs: runconfigs.Configs, name: str) -> bool:
    """Whether the configuration or task plans cleanly (its types run headless, its variables resolve)."""
    try:
        runconfigs.Planner(ws, configs).plan(name)
    except ToolFailure:
        return False
    return True


def _default_in_group(tasks: list[JsonObject], kind: str) -> str | None:
    members: list[tuple[bool, str]] = []
    for task in tasks:
        group = task.get("group")
        if group == kind:
            members.append((False, task["label"]))
        elif isinstance(group, dict) and group.get("kind") == kind:
            members.append((bool(group.get("isDefault")), task["label"]))
    defaults = [label for is_default, label in members if is_default]
    if defaults:
        return defaults[0]
    return members[0][1] if len(members) == 1 else None


def _toggle_at_cursor(ws: Workspace) -> None:
    backend = editor_for(ws)
    doc = backend.active()
    if doc is None:
        raise ToolFailure("no active editor", kind="not_found")
    backend.toggle_breakpoint(doc.path, doc.selection.active.line)


def _close_all(ws: Workspace) -> None:
    backend = editor_for(ws)
    for path in backend.state().open:
        backend.close(path)


def _terminate_runs(ws: Workspace) -> None:
    from ..processes import Jobs

    jobs = ws.service(Jobs)
    for run, _job in ws.service(runconfigs.Runs).running():
        jobs.cancel(run.job_id, wait_s=0)


def _git_fetch(ws: Workspace) -> None:
    """``git fetch --prune`` of the current branch's remote, through the git engine (its containment rules).

    In an untrusted workspace it refuses, as ``git_pull`` does, when the repository's own configuration
    would make git run a program during the fetch (``core.sshCommand``, ``remote.*.uploadpack``...)."""
    from .. import git

    repo = git.repo(ws)
    if not repo.trusted:
        risky = repo.local_config(git.NETWORK_DANGER)
        if risky:
            raise ToolFailure(
                "refused: this untrusted workspace's repository configuration sets "
                + ", ".join(risky)
                + ", which would make git run a program or touch files outside the workspace during a fetch "
                "(rule: repository configuration is untrusted input). Review .git/config and remove them, "
                "or open the workspace as trusted.",
                kind="refused",
            )
    repo.git("fetch", "--prune", mode="network", what="fetch")

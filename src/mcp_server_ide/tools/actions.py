"""Action tools (seed 000, "Action"): the IDE actions this server can really perform, and running them.

The list is computed for the workspace as it is now (:mod:`..engines.actions`): formatting and
import sorting of the active Python file (ruff), its tasks and launch configurations, the detected
test runners, ``git fetch`` when there is a remote, editor and breakpoint commands. Ids are VS
Code's command ids; per-task ids are ``workbench.action.tasks.runTask:<label>``.
"""

from __future__ import annotations

from typing import Annotated

import anyio
from pydantic import Field
from typing_extensions import TypedDict

from ..call import current
from ..engines.confirm import confirm
from ..engines.progress import ProgressItem
from ..lazy import LazyModule
from ..registry import ToolFailure, tool

actions = LazyModule("mcp_server_ide.engines.actions")
progress = LazyModule("mcp_server_ide.engines.progress")


class ActionInfo(TypedDict):
    id: str
    text: str


@tool("action", title="List actions", read_only=True, example={})
def list_available_actions() -> list[ActionInfo]:
    """The actions this server can perform on the workspace now, as `[{id, text}]`, with VS Code's command
    ids: `editor.action.formatDocument` / `editor.action.organizeImports` / `editor.action.fixAll` for the
    active Python file (ruff), `workbench.action.tasks.runTask:<label>` per task of `.vscode/tasks.json`
    (and `workbench.action.tasks.build` / `.test` for the default build and test tasks),
    `workbench.action.debug.run` for the first launch configuration, `testing.runAll` for the detected test
    runners (pytest, npm test, go test, cargo test), `git.fetch` when the repository has a remote, and editor
    and breakpoint commands. Only actions that change something are listed; the list depends on the active
    file (open one with `open_file_in_editor`). Run one with `execute_action_by_id`."""
    ws = current().workspace
    return [ActionInfo(id=a.id, text=a.text) for a in actions.available(ws)]


@tool(
    "action",
    title="Run action",
    structured=False,
    open_world=True,
    example={"actionId": "editor.action.formatDocument"},
    errors=("action not found", "the action failed", "declined in an untrusted workspace"),
)
async def execute_action_by_id(
    actionId: Annotated[str, Field(description="The id of an action from list_available_actions.")],
) -> str:
    """Start an action from `list_available_actions`; "ok" when it started (or is done). An unknown id is an
    error. Tasks, tests and run configurations run as jobs and "ok" comes at once: read their output and exit
    code with `get_job_output`/`list_jobs`. Other actions (formatting, git fetch) get up to a second: if they
    fail by then the call fails with their error; if still running they continue as a job (see
    `get_progress_indicators` for its `jobId`) whose state ends "failed" with the error as its output.
    Actions that run the workspace's own programs ask the person first in an untrusted workspace."""
    ws = current().workspace
    action = await anyio.to_thread.run_sync(actions.find, ws, actionId)
    if action is None:
        raise ToolFailure(
            f"action not found: no available action has the id {actionId!r} (list_available_actions shows "
            "the actions available now; the list depends on the workspace and the active file)",
            kind="not_found",
        )
    if action.runs_workspace_code and not ws.policy.trusted:
        await confirm(
            f"Run the action {action.text!r}? It runs programs defined by this workspace.",
            rule="actions that run the workspace's own tasks and tests need confirmation in an untrusted workspace",
        )
    await anyio.to_thread.run_sync(actions.execute, ws, action)
    return "ok"


@tool("action", title="Progress", inline=True, read_only=True, example={})
def get_progress_indicators() -> list[ProgressItem]:
    """The work this server is doing for the workspace right now: running jobs, run configurations and tasks,
    actions still running, language servers loading the project. Each is `{id, title, kind, fraction, indeterminate,
    cancellable}` (`fraction` 0..1, or null with `indeterminate: true`), plus `message`, `elapsedMs` and the
    `jobId` to read or cancel it with the job tools. Empty when nothing runs."""
    return progress.collect(current().workspace)

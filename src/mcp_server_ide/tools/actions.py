"""Action tools (seed 000, "Action"): the IDE actions this server can really perform, and running them.

The list is computed for the workspace as it is now (:mod:`..engines.actions`): formatting and
import sorting of the active Python file (ruff), its tasks and launch configurations, the detected
test runners, ``git fetch`` when there is a remote, editor and breakpoint commands. Ids are VS
Code's command ids; per-task ids are ``workbench.action.tasks.runTask:<label>``. When the companion
extension is connected, VS Code's own commands join the list and run there (:mod:`..engines.actions.vscode`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import anyio
from pydantic import Field
from typing_extensions import TypedDict

from ..call import current
from ..engines.confirm import confirm
from ..engines.progress import ProgressItem
from ..lazy import LazyModule
from ..registry import ToolFailure, tool

if TYPE_CHECKING:
    from ..workspace import Workspace

actions = LazyModule("mcp_server_ide.engines.actions")
vscode = LazyModule("mcp_server_ide.engines.actions.vscode")
progress = LazyModule("mcp_server_ide.engines.progress")


class ActionInfo(TypedDict):
    id: str
    text: str


@tool("action", title="List actions", read_only=True, example={})
def list_available_actions(
    query: Annotated[str, Field(description="Substring of id or text.")] = "",
    offset: Annotated[int, Field(ge=0)] = 0,
    limit: Annotated[int, Field(ge=1, le=1000)] = 200,
) -> list[ActionInfo]:
    """Actions runnable now, as `[{id, text}]` with VS Code command ids (format, tasks, tests, run, git
    fetch...; all of VS Code's when connected); they depend on the active file. Run one with
    `execute_action_by_id`."""
    ws = current().workspace
    _attach_vscode(ws)
    wanted = query.casefold()
    found = [
        ActionInfo(id=a.id, text=a.text)
        for a in actions.available(ws)
        if not wanted or wanted in a.id.casefold() or wanted in a.text.casefold()
    ]
    return found[offset : offset + limit]


def _attach_vscode(ws: Workspace) -> None:
    """Make VS Code's commands, tasks and sessions part of the answer while the extension is connected."""
    if vscode.channel_of(ws) is not None:
        ws.service(vscode.VsCode)


@tool(
    "action",
    title="Run action",
    structured=False,
    open_world=True,
    example={"actionId": "editor.action.formatDocument"},
    errors=("action not found", "the action failed", "declined in an untrusted workspace"),
)
async def execute_action_by_id(
    actionId: str,
) -> str:
    """Start an action from `list_available_actions`; tasks, tests and runs continue as jobs
    (`get_job_output`). VS Code commands answer their JSON result; window, extension and settings ones
    need VS Code's `mcpServerIde.actions.allow`."""
    ws = current().workspace
    _attach_vscode(ws)
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
    started = await anyio.to_thread.run_sync(actions.execute, ws, action)
    return started.text() if isinstance(started, vscode.CommandResult) else "ok"


def _progress_inline(_arguments: object) -> bool:
    """On the event loop unless VS Code is to be asked (a socket round trip)."""
    return vscode.channel_of(current().workspace) is None


@tool("action", title="Progress", inline=_progress_inline, read_only=True, example={})
def get_progress_indicators() -> list[ProgressItem]:
    """Work in progress: jobs, tasks, actions, language servers loading, VS Code's tasks and debug sessions
    (VS Code has no API for other extensions' progress); a `jobId` can be read or cancelled."""
    ws = current().workspace
    _attach_vscode(ws)
    return progress.collect(ws)

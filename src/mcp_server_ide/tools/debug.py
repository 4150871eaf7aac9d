"""Debug and run tools (seed 000, "Debug"): breakpoints, and run configurations started as jobs.

Breakpoints live in the editor model (:mod:`..engines.editor`); run configurations are read from
``.vscode/launch.json`` and ``.vscode/tasks.json`` and started through the process engine
(:mod:`..engines.runconfigs`). The breakpoint tools run on a worker thread, not inline: the editor
model's state file is shared by every server process under a file lock (see ``tools/editor.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, NotRequired

import anyio
from pydantic import Field
from typing_extensions import TypedDict

from ..call import current, shaped
from ..engines import editor, sandbox
from ..engines.confirm import confirm
from ..lazy import LazyModule
from ..registry import tool
from ..resultform import compact_json
from .params import PathInProject

runconfigs = LazyModule("mcp_server_ide.engines.runconfigs")
vscode = LazyModule("mcp_server_ide.engines.actions.vscode")
debug = LazyModule("mcp_server_ide.engines.debug")
debug_vscode = LazyModule("mcp_server_ide.engines.debug.vscode")
if TYPE_CHECKING:
    from ..engines.actions.vscode import Listed
    from ..engines.debug import Debugging
    from ..engines.processes import Job
    from ..workspace import Workspace

JOB_TOOLS = "get_job_output / list_jobs / cancel_job"


class BreakpointInfo(TypedDict):
    path: str
    line: int
    condition: NotRequired[str]
    hitCondition: NotRequired[str]
    logMessage: NotRequired[str]
    verified: NotRequired[bool]
    """MCP, with a live debug session: the adapter's verdict."""
    actualLine: NotRequired[int]
    """Where the adapter moved it (when not ``line``)."""
    message: NotRequired[str]


def _live_debugging(ws: Workspace) -> Debugging | None:
    """The workspace's debug service if it was ever started (never starts it)."""
    from ..engines.debug import Debugging

    return next((s for s in ws.services() if isinstance(s, Debugging)), None)


@tool(
    "debug",
    title="Toggle breakpoint",
    structured=False,
    example={"pathInProject": "src/utils/helper.js", "line": 5},
    errors=("not found", "line past the end of the file", "outside the workspace"),
)
def toggle_debugger_breakpoint(
    pathInProject: PathInProject,
    line: Annotated[int, Field(description="1-based.")],
    condition: str | None = None,
    hitCondition: str | None = None,
    logMessage: str | None = None,
) -> str:
    """Add a line breakpoint (1-based) to a file, or remove the one there; with `condition`, `hitCondition`
    or `logMessage` (a logpoint) it is added or updated. Kept across restarts; live debug sessions get it."""
    ws = current().workspace
    resolved = sandbox.resolve(ws, pathInProject)
    model = editor.editor_for(ws)
    key, line0 = str(resolved.path), line - 1
    options = {
        k: v
        for k, v in (("condition", condition), ("hitCondition", hitCondition), ("logMessage", logMessage))
        if v
    }
    exists = any(str(b.path) == key and b.line == line0 for b in model.breakpoints())
    if options and exists:
        text = "Breakpoint updated"
    else:
        text = "Breakpoint added" if model.toggle_breakpoint(resolved.path, line0) else "Breakpoint removed"
    dbg = ws.service(debug.Debugging) if options else _live_debugging(ws)
    if dbg is not None:
        dbg.options.set(key, line0, options if text != "Breakpoint removed" else None)
        dbg.breakpoints_changed(key)
        if options and text != "Breakpoint removed":
            debug_vscode.sync_options(ws, key, line0, options)  # VS Code's own breakpoint, when connected
    return text


@tool("debug", title="List breakpoints", read_only=True, example={})
def get_debugger_breakpoints() -> list[BreakpointInfo]:
    """Every line breakpoint of the workspace, as `[{path, line}]` (1-based), with its options and, while a
    debug session runs, whether the debugger verified it (`actualLine`: where it moved it)."""
    ws = current().workspace
    plain = [BreakpointInfo(path=str(b.path), line=b.line + 1) for b in editor.editor_for(ws).breakpoints()]
    return shaped(plain, lambda items: _with_verdicts(ws, items))


def _with_verdicts(ws: Workspace, items: list[BreakpointInfo]) -> list[BreakpointInfo]:
    dbg = _live_debugging(ws)
    if dbg is None:
        return items
    sessions = [s for s in dbg.list() if s.live]
    out: list[BreakpointInfo] = []
    for item in items:
        full = BreakpointInfo(path=item["path"], line=item["line"])
        for key, value in dbg.options.get(item["path"], item["line"] - 1).items():
            full[key] = value
        verdict = sessions[-1].verification.get(item["path"], item["line"]) if sessions else None
        if verdict is not None:
            full["verified"] = verdict.verified
            if verdict.line is not None and verdict.line != item["line"]:
                full["actualLine"] = verdict.line
            if verdict.message:
                full["message"] = verdict.message[:200]
        out.append(full)
    return out


@tool(
    "debug",
    title="List run configurations",
    read_only=True,
    example={},
    errors=("launch.json or tasks.json is not valid JSON with comments",),
)
def get_run_configurations() -> list[str]:
    """Names of the launch configurations and tasks of .vscode/launch.json and tasks.json (and VS Code's
    task providers when connected)."""
    return vscode.run_names(current().workspace)


@tool(
    "debug",
    title="Run configuration",
    structured=False,
    open_world=True,
    example={"configName": "Run Tests"},
    errors=(
        "no configuration has that name",
        "a type that cannot run headless",
        "a variable that cannot be resolved",
        "declined in an untrusted workspace",
    ),
)
async def run_configuration(
    configName: str,
    debug: Annotated[bool, Field(description="Under the debugger (start_debug_session).")] = False,
) -> str:
    """Start a launch configuration or task (from `get_run_configurations`) as a background job; read it
    with `get_job_output` (in VS Code: its terminal). An untrusted workspace asks first. `debug`: answers
    as `start_debug_session` (at the first stop, the end, or after 10 s)."""
    call = current()
    ws = call.workspace
    if debug:
        from .debugger import start_debug_session

        target = await anyio.to_thread.run_sync(
            lambda: runconfigs.Planner(ws, runconfigs.load(ws)).debug_target(configName)
        )
        if not target.item.get("noDebug"):
            out = await start_debug_session(configName)  # waits for the first stop (as debug_continue would
            # not: called on a session already stopped, it resumes past that stop)
            where = " in VS Code" if out.get("backedBy") == "VS Code" else ""
            return f"Debug session started{where}: {compact_json(out)}"
    live = await anyio.to_thread.run_sync(vscode.find_run, ws, configName)
    if live is not None:
        try:
            job = await anyio.to_thread.run_sync(lambda: _start_in_vscode(ws, live, debug))
            return (
                f"Run configuration started in VS Code (jobId: {job.id}; its output is in VS Code's terminal)"
            )
        except vscode.BridgeDown:
            pass  # never reached VS Code: run it here
    runs = ws.service(runconfigs.Runs)
    prepared = await anyio.to_thread.run_sync(runs.prepare, configName)
    if not ws.policy.trusted:
        commands = "; ".join(s.command_line() for s in runconfigs.flatten(prepared[0]))
        if len(commands) > 400:
            commands = commands[:400] + "…"
        await confirm(
            f"Run the {prepared[1]} {configName!r} from this workspace's .vscode folder? It runs: {commands}",
            rule="run configurations come from workspace files and this workspace is not trusted",
        )
    job = await anyio.to_thread.run_sync(lambda: runs.start(configName, prepared))
    return f"Run configuration started (jobId: {job.id}; read its output with get_job_output)"


def _start_in_vscode(ws: Workspace, live: Listed, debug: bool) -> Job:
    """Start VS Code's ``live`` configuration or task; VS Code asks the person when untrusted (the
    commands the server would run are shown there when it can plan them)."""
    detail = ""
    try:
        plan, _kind = ws.service(runconfigs.Runs).prepare(live.name)
        detail = "; ".join(s.command_line() for s in runconfigs.flatten(plan))
    except Exception:  # a provider's task the server cannot plan: VS Code shows its name only
        pass
    return ws.service(vscode.VsCode).start(live, debug=debug, detail=detail)

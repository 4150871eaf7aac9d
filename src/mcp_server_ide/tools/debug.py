"""Debug and run tools (seed 000, "Debug"): breakpoints, and run configurations started as jobs.

Breakpoints live in the editor model (:mod:`..engines.editor`); run configurations are read from
``.vscode/launch.json`` and ``.vscode/tasks.json`` and started through the process engine
(:mod:`..engines.runconfigs`). The breakpoint tools run on a worker thread, not inline: the editor
model's state file is shared by every server process under a file lock (see ``tools/editor.py``).
"""

from __future__ import annotations

from typing import Annotated

import anyio
from pydantic import Field
from typing_extensions import TypedDict

from ..call import current
from ..engines import editor, sandbox
from ..engines.confirm import confirm
from ..lazy import LazyModule
from ..registry import tool

runconfigs = LazyModule("mcp_server_ide.engines.runconfigs")

JOB_TOOLS = "get_job_output / list_jobs / cancel_job"


class BreakpointInfo(TypedDict):
    path: str
    line: int


@tool(
    "debug",
    title="Toggle breakpoint",
    structured=False,
    example={"pathInProject": "src/utils/helper.js", "line": 5},
    errors=("not found", "line past the end of the file", "outside the workspace"),
)
def toggle_debugger_breakpoint(
    pathInProject: Annotated[str, Field(description="Relative to the workspace root.")],
    line: Annotated[int, Field(description="1-based.")],
) -> str:
    """Add a line breakpoint (1-based) to a file, or remove the one there. Breakpoints are kept across
    restarts."""
    ws = current().workspace
    resolved = sandbox.resolve(ws, pathInProject)
    added = editor.editor_for(ws).toggle_breakpoint(resolved.path, line - 1)
    return "Breakpoint added" if added else "Breakpoint removed"


@tool("debug", title="List breakpoints", read_only=True, example={})
def get_debugger_breakpoints() -> list[BreakpointInfo]:
    """Every line breakpoint of the workspace, as `[{path, line}]` (1-based)."""
    ws = current().workspace
    return [BreakpointInfo(path=str(b.path), line=b.line + 1) for b in editor.editor_for(ws).breakpoints()]


@tool(
    "debug",
    title="List run configurations",
    read_only=True,
    example={},
    errors=("launch.json or tasks.json is not valid JSON with comments",),
)
def get_run_configurations() -> list[str]:
    """Names of the launch configurations and tasks of .vscode/launch.json and tasks.json."""
    return runconfigs.names(current().workspace)


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
) -> str:
    """Start a launch configuration or task (from `get_run_configurations`) as a background job, without a
    debugger; read it with `get_job_output`. An untrusted workspace asks first."""
    call = current()
    ws = call.workspace
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

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
    pathInProject: Annotated[str, Field(description="The file, relative to the workspace root.")],
    line: Annotated[int, Field(description="The line, 1-based.")],
) -> str:
    """Add a line breakpoint at `line` (1-based) of a file, or remove the one that is there. Returns
    "Breakpoint added" or "Breakpoint removed". Lines past the end of the file are refused. Breakpoints
    are kept across restarts and follow their line when this server's tools insert or delete lines
    above them."""
    ws = current().workspace
    resolved = sandbox.resolve(ws, pathInProject)
    added = editor.editor_for(ws).toggle_breakpoint(resolved.path, line - 1)
    return "Breakpoint added" if added else "Breakpoint removed"


@tool("debug", title="List breakpoints", read_only=True, example={})
def get_debugger_breakpoints() -> list[BreakpointInfo]:
    """Every line breakpoint in the workspace as `[{path, line}]`: the file's absolute path and the 1-based
    line, sorted by path then line. Empty when there are none."""
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
    """The names of the run configurations of the workspace: the launch configurations and compounds of
    `.vscode/launch.json`, then the tasks of `.vscode/tasks.json` (by label), as VS Code lists them. Run one
    with `run_configuration`. Empty when the workspace has neither file."""
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
    configName: Annotated[str, Field(description="The name of a launch configuration, compound or task.")],
) -> str:
    """Start a run configuration (a launch configuration, compound or task named by
    `get_run_configurations`) in the background and answer at once: "Run configuration started" with the
    job's id. Read its output, state and exit code with the job tools (get_job_output / list_jobs) and stop it
    with cancel_job. Tasks run their `dependsOn` first (in parallel, or in sequence with
    `"dependsOrder": "sequence"`, stopping at the first failure); launch configurations run their
    `preLaunchTask` first. Runs without a debugger: `debugpy`/`python` (`program` or `module`), `node`
    (`program`) and `node-terminal` (`command`) launch configurations, and `shell`, `process` and `npm`
    tasks; other types fail naming the type. Variables such as `${workspaceFolder}`, `${file}` (the editor's
    active file) and `${env:NAME}` are resolved. In an untrusted workspace the person is asked first."""
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

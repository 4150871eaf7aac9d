"""Debugger tools (category "debug"): sessions of a real debug adapter (debugpy, js-debug) over the Debug Adapter
Protocol, started from ``.vscode/launch.json``, with the editor model's breakpoints.

The engine is :mod:`..engines.debug`. Tools that let the program run (start, continue, step, pause)
wait for it to stop or end, up to ``waitMs``, and answer with the same compact status: ``state``
(``stopped``, ``ended`` or ``running`` when ``waitMs`` passed), and when stopped the reason, location,
``frameId`` and the top frame's locals. Events seen meanwhile go to the client as log notifications.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated, Any, Literal

import anyio
from pydantic import Field

from ..call import current
from ..engines.confirm import confirm
from ..lazy import LazyModule
from ..registry import ToolFailure, tool

if TYPE_CHECKING:
    from ..engines import debug, runconfigs
else:
    debug = LazyModule("mcp_server_ide.engines.debug")
    runconfigs = LazyModule("mcp_server_ide.engines.runconfigs")

MAX_WAIT_S = 600.0
EVAL_CHARS = 2000

SessionId = Annotated[str | None, Field(description="Default: the newest live session.")]
Wait = Annotated[float, Field(ge=0, description="How long to wait for a stop or the end.")]
FrameId = Annotated[int | None, Field(description="From get_stack_trace; default: the top frame.")]


def _debugging() -> debug.Debugging:
    return current().workspace.service(debug.Debugging)


def _session(session_id: str | None) -> debug.Session:
    return _debugging().get(session_id)


async def _run(fn: Any, *args: Any) -> Any:
    return await anyio.to_thread.run_sync(fn, *args)


def status(session: debug.Session) -> dict[str, Any]:
    """The compact status every waiting tool answers with (blocking: reads the stop from the adapter)."""
    out: dict[str, Any] = {"sessionId": session.id, "state": session.state}
    if session.state == "stopped":
        try:
            out |= session.top()
        except ToolFailure:  # it moved on meanwhile
            out["state"] = session.state
    elif session.state == "ended":
        code = session.final_exit_code()
        if code is not None:
            out["exitCode"] = code
        if session.job_id:
            out["jobId"] = session.job_id
        if session.ended_note:
            out["note"] = session.ended_note
    return out


async def wait_status(session: debug.Session, wait_ms: float, since: int) -> dict[str, Any]:
    """Wait until ``session`` stops or ends or ``wait_ms`` passes; log the events seen after note ``since``."""
    call = current()
    deadline = time.monotonic() + min(max(0.0, wait_ms / 1000), MAX_WAIT_S)
    while True:
        left = deadline - time.monotonic()
        state = await _run(session.wait, min(max(0.0, left), 1.0))
        notes, since = session.notes_after(since)
        for note in notes:  # debug events: a log message each, and progress for a client that shows it
            await call.reporter.log("info", note)
            await call.reporter.progress(since, None, note)
        if state in ("stopped", "ended") or left <= 0:
            break
    return await _run(status, session)


@tool(
    "debug",
    title="Start debug session",
    destructive=True,
    open_world=True,
    example={"configName": "Python: tests", "waitMs": 10000},
    errors=("no such configuration", "a type no adapter here debugs", "declined in an untrusted workspace"),
)
async def start_debug_session(configName: str, waitMs: Wait = 10000) -> dict[str, Any]:
    """Start a launch configuration under a real debugger with the workspace's breakpoints; waits for the
    first stop or the end. With VS Code connected and debugging its type (node) it runs in VS Code's debug
    views (`backedBy`), else headless (debugpy; js-debug, installed on first use). Output: job `jobId`."""
    ws = current().workspace
    target = await _run(lambda: runconfigs.Planner(ws, runconfigs.load(ws)).debug_target(configName))
    if not ws.policy.trusted:
        what = target.launch or {}
        head = what.get("python") or [target.item.get("runtimeExecutable") or "node"]
        if target.request == "attach":
            head = [
                "attach to",
                target.item.get("processId") or target.item.get("connect") or target.item.get("port"),
            ]
        program = what.get("program") or what.get("module") or target.item.get("program") or ""
        shown = " ".join(str(x) for x in [*head, program, *what.get("args", [])])
        await confirm(
            f"Debug {configName!r} from this workspace's .vscode/launch.json? It runs: {shown[:400]}",
            rule="run configurations come from workspace files and this workspace is not trusted",
        )
    dbg = _debugging()
    session = await _run(dbg.start, target)
    out = await wait_status(session, waitMs, 0)
    out["backedBy"] = session.backed_by
    if session.install_note:
        out["note"] = session.install_note
    if session.job_id:
        out["jobId"] = session.job_id
    return out


@tool(
    "debug",
    title="Stop debug session",
    destructive=True,
    idempotent=True,
    example={"sessionId": "dbg-1"},
    errors=("unknown session",),
)
async def stop_debug_session(sessionId: SessionId = None) -> dict[str, Any]:
    """End a debug session: the program, the adapter and everything they started are killed."""
    session = _session(sessionId)
    await _run(getattr(session, "stop_or_fail", session.stop))  # VS Code's session: a VS Code gone says so
    return status(session)


@tool("debug", title="List debug sessions", read_only=True, idempotent=True, example={})
def list_debug_sessions() -> list[dict[str, Any]]:
    """The workspace's debug sessions (VS Code's too, the person's own included) with their state, who runs
    them (`backedBy`), program job and exit code."""
    dbg = _debugging()
    dbg.adopt()
    out = []
    for s in dbg.list():
        item: dict[str, Any] = {"sessionId": s.id, "name": s.name, "state": s.state, "backedBy": s.backed_by}
        if not getattr(s, "ours", True):
            item["startedIn"] = "VS Code"
        if s.job_id:
            item["jobId"] = s.job_id
        if s.exit_code is not None:
            item["exitCode"] = s.exit_code
        out.append(item)
    return out


@tool(
    "debug",
    title="Continue",
    example={"waitMs": 10000},
    errors=("unknown session", "session ended"),
)
async def debug_continue(sessionId: SessionId = None, waitMs: Wait = 10000) -> dict[str, Any]:
    """Resume a stopped program (a running one is only waited on) until the next stop or the end."""
    session = _session(sessionId)
    since = session.notes_after(0)[1]
    if session.state == "stopped":
        await _run(session.resume, "continue")
    return await wait_status(session, waitMs, since)


STEPS = {"over": "next", "into": "stepIn", "out": "stepOut"}


@tool(
    "debug",
    title="Step",
    example={"kind": "over"},
    errors=("unknown session", "program not stopped"),
)
async def debug_step(
    kind: Literal["over", "into", "out"] = "over", sessionId: SessionId = None, waitMs: Wait = 5000
) -> dict[str, Any]:
    """Step the stopped thread over, into or out of the current line."""
    session = _session(sessionId)
    since = session.notes_after(0)[1]
    await _run(session.resume, STEPS[kind])
    return await wait_status(session, waitMs, since)


@tool("debug", title="Pause", example={}, errors=("unknown session",))
async def debug_pause(sessionId: SessionId = None, waitMs: Wait = 3000) -> dict[str, Any]:
    """Pause the running program; answers where it stopped, as debug_step does."""
    session = _session(sessionId)
    since = session.notes_after(0)[1]
    await _run(session.pause)
    return await wait_status(session, waitMs, since)


@tool(
    "debug",
    title="Stack trace",
    read_only=True,
    example={},
    errors=("unknown session", "program not stopped"),
)
def get_stack_trace(
    sessionId: SessionId = None, threadId: int | None = None, levels: int = 20
) -> dict[str, Any]:
    """Threads and the frames (`frameId`, function, file:line) of the stopped program."""
    session = _session(sessionId)
    thread, frames, total = session.frames(threadId, max(1, min(levels, 200)))
    out: dict[str, Any] = {
        "threadId": thread,
        "frames": [
            {
                "frameId": f["id"],
                "function": debug.cut(str(f.get("name", "")), 100),
                "at": session.where((f.get("source") or {}).get("path"), f.get("line")),
            }
            for f in frames
        ],
    }
    if total > len(frames):
        out["more"] = total - len(frames)
    threads = session.threads()
    if len(threads) > 1:
        out["threads"] = [
            {"id": t["id"], "name": debug.cut(str(t.get("name", "")), 60)} for t in threads[:50]
        ]
    return out


@tool(
    "debug",
    title="Variables",
    read_only=True,
    example={"frameId": 2, "depth": 2},
    errors=("unknown session", "program not stopped"),
)
def get_variables(
    sessionId: SessionId = None,
    frameId: FrameId = None,
    ref: Annotated[int | None, Field(description="A `ref` of an earlier answer: its children.")] = None,
    depth: int = 1,
    offset: int = 0,
    limit: int = 50,
) -> dict[str, Any]:
    """A frame's scopes (the first expanded) or a value's children; paged, `depth` levels (max 4), long
    values cut with `…(+N chars)`."""
    session = _session(sessionId)
    renderer = debug.Renderer(session.variables_page, depth=depth, limit=limit)
    if ref is not None:
        items, total = renderer.children(ref, offset)
        return _page({"variables": items}, offset, len(items), total)
    if frameId is None:
        _, frames, _ = session.frames(levels=1)
        if not frames:
            raise ToolFailure("conflict: the stopped thread has no frames", kind="conflict")
        frameId = int(frames[0]["id"])
    scopes = session.scopes(frameId)
    out: list[dict[str, Any]] = []
    for i, scope in enumerate(scopes):
        item: dict[str, Any] = {"name": scope.get("name"), "ref": scope.get("variablesReference")}
        if i == 0:
            items, total = renderer.children(int(scope["variablesReference"]), offset)
            item = _page({**item, "variables": items}, offset, len(items), total)
        out.append(item)
    return {"frameId": frameId, "scopes": out}


def _page(item: dict[str, Any], offset: int, shown: int, total: int) -> dict[str, Any]:
    if offset + shown < total:
        item["total"] = total
        item["nextOffset"] = offset + shown
    return item


@tool(
    "debug",
    title="Evaluate expression",
    destructive=True,
    example={"expression": "total / len(xs)"},
    errors=("unknown session", "program not stopped", "declined in an untrusted workspace"),
)
async def evaluate_expression(
    expression: str, sessionId: SessionId = None, frameId: FrameId = None
) -> dict[str, Any]:
    """Evaluate (run) an expression or statement in a frame of the stopped program."""
    ws = current().workspace
    session = _session(sessionId)
    if not ws.policy.trusted:
        await confirm(
            f"Run this in the debugged program? {expression[:400]}",
            rule="evaluating runs code in the program and this workspace is not trusted",
        )
    body = await _run(session.evaluate, expression, frameId)
    out: dict[str, Any] = {"result": debug.cut(str(body.get("result", "")), EVAL_CHARS)}
    if body.get("type"):
        out["type"] = body["type"]
    if body.get("variablesReference"):
        out["ref"] = body["variablesReference"]
    return out


@tool(
    "debug",
    title="Exception breakpoints",
    structured=False,
    example={"filters": ["raised"]},
    errors=("unknown filter",),
)
async def set_exception_breakpoints(
    filters: Annotated[
        list[str],
        Field(description="debugpy: raised, uncaught, userUnhandled; node: all, uncaught; [] for none."),
    ],
    sessionId: SessionId = None,
) -> str:
    """Which exceptions stop the program, for live sessions and the next ones."""
    dbg = _debugging()
    await _run(dbg.set_exception_filters, filters, sessionId)
    return f"Exception breakpoints: {', '.join(filters) or 'none'}"

"""Background jobs: start a long command (a server, a build, a watcher), read its output from an
offset, feed it input, list and cancel them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, NotRequired

import anyio
from pydantic import Field
from typing_extensions import TypedDict

from ...call import current, shaped
from ...lazy import LazyModule
from ...registry import ToolFailure, tool
from ..lean import without
from .output import InputSent, OutputChunk, iso, lean_chunk, wait_until
from .params import Command, Cwd, Env, MaxBytes, Offset, UntilPattern, WaitMs, until_pattern, wait_s
from .trust import confirm_command

if TYPE_CHECKING:
    from ...engines import processes
else:
    processes = LazyModule("mcp_server_ide.engines.processes")


# A job. On MCP: `title` only when it is not the command, `exitCode` once it has one, `acceptsInput`
# only when true, no `durationMs` (`startedAt`/`endedAt` say it).
class JobInfo(TypedDict):
    jobId: str
    title: NotRequired[str]
    command: str
    cwd: str
    state: str
    """running, exited, killed, timed_out or failed."""
    exitCode: NotRequired[int | None]
    startedAt: str
    durationMs: NotRequired[int]
    outputOffset: int
    """The end of its output so far."""
    acceptsInput: NotRequired[bool]
    endedAt: NotRequired[str]
    limitHit: NotRequired[str]
    """The resource limit the job hit (pids, memory, file size, CPU time), once it ended."""


class JobOutput(OutputChunk):
    jobId: NotRequired[str]
    """The REST door only (the caller named it)."""
    state: str
    exitCode: NotRequired[int | None]
    """Once the job has ended with one."""
    durationMs: NotRequired[int]
    patternMatched: NotRequired[bool]
    limitHit: NotRequired[str]


def _job_info(job: processes.Job) -> JobInfo:
    out = JobInfo(
        jobId=job.id,
        title=job.title,
        command=job.command[:2000],
        cwd=job.cwd,
        state=job.state,
        exitCode=job.exit_code,
        startedAt=iso(job.started_at),
        durationMs=job.duration_ms,
        outputOffset=job.log.end,
        acceptsInput=job.has_stdin,
    )
    if job.ended_at is not None:
        out["endedAt"] = iso(job.ended_at)
    if job.limit_hit:
        out["limitHit"] = job.limit_hit
    return shaped(out, _lean_job)


def _lean_job(info: JobInfo) -> JobInfo:
    return without(info, "durationMs", title=info["command"], exitCode=None, acceptsInput=False)


def _jobs() -> processes.Jobs:
    return current().workspace.service(processes.Jobs)


@tool(
    "terminal",
    title="Start background job",
    destructive=True,
    open_world=True,
    example={"command": "npm run dev", "title": "dev server"},
    errors=("too many running jobs", "cwd outside the workspace", "declined in an untrusted workspace"),
)
async def start_job(
    command: Command,
    cwd: Cwd = None,
    env: Env = None,
    title: str | None = None,
    timeout: Annotated[
        float | None,
        Field(description="Milliseconds (default: none)."),
    ] = None,
    stdin: Annotated[
        bool,
        Field(description="Keep stdin open for send_job_input."),
    ] = False,
) -> JobInfo:
    """Start a long-running command (a server, build or watcher) as a background job; returns its `jobId` at
    once. Killed with its process tree by `cancel_job`, `timeout`, server exit, or a while after its session ends."""
    await confirm_command("Start this background job", command)
    timeout_s = None
    if timeout is not None:
        if timeout <= 0:
            raise ToolFailure("invalid timeout: give milliseconds, more than 0, or leave it out for no limit")
        timeout_s = timeout / 1000
    jobs = _jobs()
    job = await anyio.to_thread.run_sync(
        lambda: jobs.start(command, cwd=cwd, env=env, title=title, stdin=stdin, timeout_s=timeout_s)
    )
    call = current()
    if call.on_session_end is not None:  # nothing outlives its session for long (Policy.job_grace_s)
        grace = call.workspace.policy.job_grace_s
        call.on_session_end(lambda: jobs.release_later(job.id, grace))
    return _job_info(job)


@tool(
    "terminal",
    title="Read job output",
    read_only=True,
    example={"jobId": "job-1", "offset": 0, "waitMs": 10000},
    errors=("unknown job", "invalid untilPattern"),
)
async def get_job_output(
    jobId: str,
    offset: Offset = 0,
    maxBytes: MaxBytes = 100_000,
    waitMs: WaitMs = 0,
    untilPattern: UntilPattern = None,
) -> JobOutput:
    """A job's output from byte `offset`, with its state (running, exited, killed, timed_out or failed) and
    exit code. `waitMs` waits for the end or `untilPattern`."""
    job = _jobs().get(jobId)
    pattern = until_pattern(untilPattern)
    matched = await wait_until(lambda: not job.running, job.log, offset, wait_s(waitMs), pattern)
    text, start, nxt, skipped, more = job.read(offset, maxBytes)
    out = JobOutput(
        jobId=job.id,
        state=job.state,
        exitCode=job.exit_code,
        durationMs=job.duration_ms,
        output=text,
        offset=start,
        nextOffset=nxt,
        skippedBytes=skipped,
        hasMore=more,
    )
    if matched is not None:
        out["patternMatched"] = matched
    if job.limit_hit:
        out["limitHit"] = job.limit_hit
    return shaped(out, lean_chunk(offset, "jobId"))


@tool(
    "terminal",
    title="Send input to job",
    destructive=True,
    example={"jobId": "job-1", "text": "yes\n"},
    errors=("unknown job", "job started without stdin", "job ended"),
)
def send_job_input(
    jobId: str,
    text: Annotated[str, Field(description="Add '\\n' to end a line.")] = "",
    closeInput: bool = False,
) -> InputSent:
    """Write text to the stdin of a job started with `stdin: true`; `closeInput` sends end of file."""
    jobs = _jobs()
    job = jobs.get(jobId)
    offset = job.log.end
    processes.check_sendable(text, "input")
    sent = jobs.send(jobId, text.encode(), close=closeInput)
    return InputSent(jobId=job.id, bytesSent=sent, outputOffset=offset)


@tool("terminal", title="List jobs", read_only=True, idempotent=True, example={})
def list_jobs() -> list[JobInfo]:
    """The workspace's background jobs, running and recently ended, with state and exit code."""
    return [_job_info(j) for j in _jobs().list()]


@tool(
    "terminal",
    title="Cancel job",
    destructive=True,
    idempotent=True,
    example={"jobId": "job-1"},
    errors=("unknown job",),
)
def cancel_job(jobId: str) -> JobInfo:
    """Stop a job and everything it started (TERM, then KILL); its output stays readable."""
    jobs = _jobs()
    job = jobs.get(jobId)
    if job.running:
        job = jobs.cancel(jobId)
    return _job_info(job)

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


class JobOutput(OutputChunk):
    jobId: NotRequired[str]
    """The REST door only (the caller named it)."""
    state: str
    exitCode: NotRequired[int | None]
    """Once the job has ended with one."""
    durationMs: NotRequired[int]
    patternMatched: NotRequired[bool]


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
    title: Annotated[str | None, Field(description="A short name shown by list_jobs.")] = None,
    timeout: Annotated[
        float | None,
        Field(
            description="Kill the job after this many milliseconds (default: no limit; it ends with the server)."
        ),
    ] = None,
    stdin: Annotated[
        bool,
        Field(description="Keep the job's input open so send_job_input can write to it (default: closed)."),
    ] = False,
) -> JobInfo:
    """Start a long-running command as a background job (a dev server, a build, a test watcher) and return at
    once with its `jobId`. Its stdout and stderr go, interleaved, to an output log: read it with
    `get_job_output(jobId, offset, waitMs)`, stop it with `cancel_job`. The job runs contained like
    `run_command_on_background` (own process group, no server secrets, `cwd` in the workspace) and is killed,
    with everything it started, when cancelled, on `timeout`, or when the server stops."""
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
    return _job_info(job)


@tool(
    "terminal",
    title="Read job output",
    read_only=True,
    example={"jobId": "job-1", "offset": 0, "waitMs": 10000},
    errors=("unknown job", "invalid untilPattern"),
)
async def get_job_output(
    jobId: Annotated[str, Field(description="The job (from start_job or list_jobs).")],
    offset: Offset = 0,
    maxBytes: MaxBytes = 100_000,
    waitMs: WaitMs = 0,
    untilPattern: UntilPattern = None,
) -> JobOutput:
    """Read a job's output (stdout and stderr interleaved) from a byte `offset`, with its state and exit
    code. The state is running, exited, killed, timed_out, or failed (work the server ran itself, such as an
    action, failed: the output says why, and there is no exit code). Pass the previous `nextOffset` to get
    only what is new.
    With `waitMs`, waits until the job ends or `untilPattern` appears in the new output (e.g. a server's
    'listening on'). Only the last 4 MB of output is kept (`skippedBytes` counts what was dropped)."""
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
    return shaped(out, lean_chunk(offset, "jobId"))


@tool(
    "terminal",
    title="Send input to job",
    destructive=True,
    example={"jobId": "job-1", "text": "yes\n"},
    errors=("unknown job", "job started without stdin", "job ended"),
)
def send_job_input(
    jobId: Annotated[str, Field(description="The job to write to (started with stdin=true).")],
    text: Annotated[str, Field(description="Text to write to its input (add '\\n' to end a line).")] = "",
    closeInput: Annotated[bool, Field(description="Close its input after the text (end of file).")] = False,
) -> InputSent:
    """Write text to the standard input of a job started with `stdin=true`; `closeInput` sends end of file.
    Returns the bytes sent and the output offset before them."""
    jobs = _jobs()
    job = jobs.get(jobId)
    offset = job.log.end
    sent = jobs.send(jobId, text.encode(), close=closeInput)
    return InputSent(jobId=job.id, bytesSent=sent, outputOffset=offset)


@tool("terminal", title="List jobs", read_only=True, idempotent=True, example={})
def list_jobs() -> list[JobInfo]:
    """The workspace's background jobs, running and recently ended: id, title, command, state, exit code,
    start time and the end of their output (`outputOffset`)."""
    return [_job_info(j) for j in _jobs().list()]


@tool(
    "terminal",
    title="Cancel job",
    destructive=True,
    idempotent=True,
    example={"jobId": "job-1"},
    errors=("unknown job",),
)
def cancel_job(jobId: Annotated[str, Field(description="The job to stop.")]) -> JobInfo:
    """Stop a job and everything it started (SIGTERM, then SIGKILL after 2 seconds). Its output stays readable
    with `get_job_output`. Cancelling an ended job changes nothing and returns its final state."""
    jobs = _jobs()
    job = jobs.get(jobId)
    if job.running:
        job = jobs.cancel(jobId)
    return _job_info(job)

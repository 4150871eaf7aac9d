"""Running commands (seed 000, "Terminal" and "Terminal Info"): type one into a terminal session, run
one to completion, run the variant for this OS; wait; describe the OS and shell.

Every process goes through the process engine (:mod:`...engines.processes`): own process group,
timeout that kills the whole tree, head + tail output caps, scrubbed environment, stdin closed,
``cwd`` inside the workspace.
"""

from __future__ import annotations

import os
import platform
import time
from typing import TYPE_CHECKING, Annotated, Any, NotRequired

import anyio
from pydantic import Field
from typing_extensions import TypedDict

from ...call import current, seed_shapes, shaped
from ...lazy import LazyModule
from ...registry import ToolFailure, tool
from ..lean import without
from .output import wait_until
from .params import (
    DEFAULT_MAX_OUTPUT,
    MAX_READ_BYTES,
    MAX_WAIT_MS,
    Command,
    Cwd,
    Env,
    MaxOutput,
    TimeoutMs,
    timeout_s,
    wait_s,
)
from .trust import confirm_command

if TYPE_CHECKING:
    from ...engines import processes
else:
    processes = LazyModule("mcp_server_ide.engines.processes")


# On MCP `stdout`/`stderr` only when not empty, `timedOut`/`truncated` only when true, no `durationMs`;
# the REST door gives every field.
class CommandResult(TypedDict):
    stdout: NotRequired[str]
    stderr: NotRequired[str]
    exitCode: int | None
    """The exit status; negative when a signal ended the process (-9 killed, -15 terminated)."""
    timedOut: NotRequired[bool]
    truncated: NotRequired[bool]
    durationMs: NotRequired[int]
    limitHit: NotRequired[str]
    """The resource limit the command hit (pids, memory, file size, CPU time), when it hit one."""


class OsCommandResult(TypedDict):
    osType: str
    command: str
    executed: bool
    stdout: NotRequired[str]
    stderr: NotRequired[str]
    exitCode: int | None
    timedOut: NotRequired[bool]
    truncated: NotRequired[bool]
    durationMs: NotRequired[int]
    limitHit: NotRequired[str]
    commandSource: str
    """Which parameter was run: windowsCommand, macCommand, unixCommand or command."""


def _lean_run(result: Any) -> Any:
    return without(result, "durationMs", stdout="", stderr="", timedOut=False, truncated=False)


PLAIN_RUN = "exit code {}\n"
"""The first line of a plain run's MCP answer; the program's stdout follows it verbatim."""


def _plain_run(result: Any) -> Any:
    """A run with nothing to say but its exit code and stdout, as text: ``exit code N`` and a newline,
    then stdout as the program wrote it (no JSON escaping of every newline and quote). Anything more
    (stderr, a timeout, a cut) keeps the JSON object, as does ``--structured-content``."""
    lean = _lean_run(result)
    if (
        set(lean) <= {"stdout", "exitCode"}
        and isinstance(lean.get("exitCode"), int)
        and not current().structured
    ):
        return PLAIN_RUN.format(lean["exitCode"]) + lean.get("stdout", "")
    return lean


class TerminalExecuted(TypedDict):
    status: str
    terminalId: str
    outputOffset: int
    """Where this command's output starts: pass it as offset to read_terminal_output."""
    finished: NotRequired[bool]
    exitCode: NotRequired[int | None]
    output: NotRequired[str]
    nextOffset: NotRequired[int]


class WaitResult(TypedDict):
    status: str
    message: str


class TerminalInfo(TypedDict):
    osType: str
    osVersion: str
    terminalType: str
    isIntegratedTerminal: bool
    isDefault: bool
    shell: NotRequired[str]
    arch: NotRequired[str]
    kernel: NotRequired[str]


def _command_result(done: processes.Completed) -> CommandResult:
    full = CommandResult(
        stdout=done.stdout,
        stderr=done.stderr,
        exitCode=done.exit_code,
        timedOut=done.timed_out,
        truncated=done.truncated,
        durationMs=done.duration_ms,
    )
    if done.limit:
        full["limitHit"] = done.limit
    return shaped(full, _plain_run)  # the text form is for MCP without --structured-content only


async def _run(
    command: str,
    cwd: str | None,
    env: dict[str, str] | None,
    timeout_ms: float | None,
    max_output: int | None,
) -> processes.Completed:
    call = current()
    timeout = timeout_s(timeout_ms)

    async def progress(elapsed: float, output_bytes: int) -> None:
        await call.reporter.progress(
            round(elapsed, 1), timeout, f"running for {elapsed:.0f}s, {output_bytes} bytes of output"
        )

    return await processes.run_async(
        command,
        ws=call.workspace,
        cwd=cwd,
        env=env,
        timeout_s=timeout,
        max_output=DEFAULT_MAX_OUTPUT if max_output is None else max_output,
        on_progress=progress,
    )


@tool(
    "terminal",
    title="Run command in terminal",
    destructive=True,
    open_world=True,
    example={"command": "npm list --depth=0"},
    errors=("terminal busy", "declined in an untrusted workspace", "line over 4000 bytes"),
)
async def execute_terminal_command(
    command: str,
    terminalId: Annotated[
        str | None,
        Field(description="Default: an idle terminal."),
    ] = None,
    waitMs: Annotated[
        float,
        Field(
            ge=0,
            description="Wait up to this long for it to finish.",
        ),
    ] = 0,
) -> TerminalExecuted:
    """Type a command into a persistent bash terminal (a real pty; its folder and variables persist). Answers
    at once with `terminalId` and `outputOffset`, or waits `waitMs` for the output."""
    await confirm_command("Run this command in a terminal", command)
    terminals = current().workspace.service(processes.Terminals)
    if terminalId:
        term = terminals.get(terminalId)
        if not term.alive:
            raise ToolFailure(
                f"conflict: terminal {terminalId!r} has ended ({term.state}); open another with create_terminal",
                kind="conflict",
            )
        if term.busy:
            last = term.last
            raise ToolFailure(
                f"conflict: terminal {terminalId!r} is still running {last.command[:100] if last else 'a command'!r} "
                "(read it with read_terminal_output, answer it with send_terminal_input, stop it with "
                "send_terminal_input key='ctrl+c', or leave terminalId out to use another terminal)",
                kind="conflict",
            )
    else:
        term = await anyio.to_thread.run_sync(terminals.idle_or_new)
    record = terminals.execute(term, command)
    result = TerminalExecuted(status="executed", terminalId=term.id, outputOffset=record.offset)
    wait = wait_s(waitMs)
    if wait > 0:
        await wait_until(lambda: record.finished or not term.alive, term.log, record.offset, wait, None)
        end = record.end_offset if record.end_offset is not None else term.log.end
        text, _, nxt, _, _ = term.read(record.offset, max(0, min(end - record.offset, MAX_READ_BYTES)))
        result["finished"] = record.finished
        result["exitCode"] = record.exit_code
        output = _drop_echo(text, command)
        if output or seed_shapes():
            result["output"] = output
        result["nextOffset"] = nxt
    return result


def _drop_echo(text: str, command: str) -> str:
    """The terminal echoes the typed command first; leave that line out of `output`."""
    echo = command.rstrip("\n").split("\n")[0]
    if text.startswith(echo):
        return text[len(echo) :].lstrip("\n")
    return text


@tool(
    "terminal",
    title="Run command",
    destructive=True,
    open_world=True,
    example={"command": "node -v"},
    errors=("cwd outside the workspace", "declined in an untrusted workspace", "program not found"),
)
async def run_command_on_background(
    command: Command,
    cwd: Cwd = None,
    env: Env = None,
    timeout: TimeoutMs = None,
    maxOutputBytes: MaxOutput = None,
) -> CommandResult:
    """Run a shell command to completion (no terminal, stdin closed, no server secrets; on timeout its process
    tree is killed): `exit code N` then stdout, as text; JSON `{stdout?, stderr, exitCode, timedOut?,
    truncated?}` when there is stderr, a timeout or a cut. Long runs: `start_job`."""
    await confirm_command("Run this command", command)
    done = await _run(command, cwd, env, timeout, maxOutputBytes)
    return _command_result(done)


@tool(
    "terminal",
    title="Wait",
    read_only=True,
    idempotent=True,
    example={"milliseconds": 3000},
    errors=("negative duration",),
)
async def wait(
    milliseconds: Annotated[float, Field(description=f"At most {MAX_WAIT_MS}.")],
) -> WaitResult:
    """Wait this many milliseconds (at most 10 minutes). To wait for a command, use `waitMs` of
    `read_terminal_output` or `get_job_output`."""
    if milliseconds < 0:
        raise ToolFailure("invalid milliseconds: it must be 0 or more")
    ms = min(float(milliseconds), MAX_WAIT_MS)
    shown = int(ms) if ms == int(ms) else ms
    call = current()
    start = time.monotonic()
    deadline = start + ms / 1000
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        await anyio.sleep(min(left, 1.0))
        if ms >= 2000 and time.monotonic() < deadline:
            await call.reporter.progress(round((time.monotonic() - start) * 1000), ms, "waiting")
    message = f"Waited for {shown} milliseconds"
    if milliseconds > MAX_WAIT_MS:
        message += f" (capped from {milliseconds:g}: one wait lasts at most {MAX_WAIT_MS} ms)"
    return WaitResult(status="completed", message=message)


def _os_type() -> str:
    system = platform.system()
    return {"Darwin": "macOS", "Windows": "Windows", "Linux": "Linux"}.get(system, system or "Unknown")


def _os_release() -> dict[str, str]:
    try:
        return platform.freedesktop_os_release()
    except (OSError, AttributeError):
        return {}


def _os_version() -> str:
    system = platform.system()
    if system == "Linux":
        release = _os_release()
        name = release.get("PRETTY_NAME") or release.get("NAME") or "Linux"
        return f"{name} (kernel {platform.release()})"
    if system == "Darwin":
        return f"macOS {platform.mac_ver()[0]}".strip()
    if system == "Windows":
        return f"Microsoft Windows [Version {platform.version()}]"
    return f"{system} {platform.release()}".strip()


@tool("terminal", title="Terminal and OS info", read_only=True, idempotent=True, example={})
def get_terminal_info() -> TerminalInfo:
    """The operating system, shell and architecture commands run on (the server's machine)."""
    shell = processes.default_shell()
    return TerminalInfo(
        osType=_os_type(),
        osVersion=_os_version(),
        terminalType=os.path.basename(shell),
        isIntegratedTerminal=False,
        isDefault=True,
        shell=shell,
        arch=platform.machine(),
        kernel=f"{platform.system()} {platform.release()}",
    )


@tool(
    "terminal",
    title="Run OS-specific command",
    destructive=True,
    open_world=True,
    example={"windowsCommand": "dir", "unixCommand": "ls -la", "macCommand": "ls -la"},
    errors=("no command for this OS", "declined in an untrusted workspace"),
)
async def execute_os_specific_command(
    windowsCommand: str | None = None,
    unixCommand: str | None = None,
    macCommand: Annotated[str | None, Field(description="Default: unixCommand.")] = None,
    command: Annotated[str | None, Field(description="For any other OS.")] = None,
    cwd: Cwd = None,
    timeout: TimeoutMs = None,
) -> OsCommandResult:
    """Run the variant for the server's OS (`windowsCommand`, `macCommand`, `unixCommand`, else `command`), as
    `run_command_on_background` runs a command."""
    os_type = _os_type()
    order = {
        "Windows": ["windowsCommand"],
        "macOS": ["macCommand", "unixCommand"],
    }.get(os_type, ["unixCommand"])
    given = {
        "windowsCommand": windowsCommand,
        "unixCommand": unixCommand,
        "macCommand": macCommand,
        "command": command,
    }
    source = next((name for name in [*order, "command"] if (given[name] or "").strip()), None)
    if source is None:
        raise ToolFailure(
            f"invalid parameters: no command for {os_type} (give {' or '.join(order)}, or `command` for every OS)"
        )
    chosen = given[source]
    assert chosen is not None
    await confirm_command("Run this command", chosen)
    done = await _run(chosen, cwd, None, timeout, None)
    full = OsCommandResult(
        osType=os_type,
        command=chosen,
        executed=True,
        stdout=done.stdout,
        stderr=done.stderr,
        exitCode=done.exit_code,
        timedOut=done.timed_out,
        truncated=done.truncated,
        durationMs=done.duration_ms,
        commandSource=source,
    )
    if done.limit:
        full["limitHit"] = done.limit
    return shaped(full, _lean_run)

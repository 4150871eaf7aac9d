"""Terminal tools (seed 000, "Terminal" and "Terminal Info"): commands, terminals and jobs.

Every process goes through the process engine (:mod:`..engines.processes`): own process group,
timeout that kills the whole tree, head + tail output caps, scrubbed environment, stdin closed,
``cwd`` inside the workspace. Three ways to run something:

- ``run_command_on_background``: run to completion and return the output (seed).
- ``execute_terminal_command``: type the command into a persistent pty terminal session (seed);
  read what it printed with ``read_terminal_output``.
- ``start_job``: a long command in the background (a server, a build, a watch); read its output
  with ``get_job_output`` from an offset, feed it input, cancel it.
"""

from __future__ import annotations

import os
import platform
import re
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Literal, NotRequired

import anyio
from pydantic import Field
from typing_extensions import TypedDict

from ..call import current
from ..engines.confirm import confirm
from ..lazy import LazyModule
from ..registry import ToolFailure, tool

processes = LazyModule("mcp_server_ide.engines.processes")

MAX_WAIT_MS = 600_000
DEFAULT_RUN_TIMEOUT_MS = 60_000
MAX_RUN_TIMEOUT_MS = int(processes.MAX_TIMEOUT_S * 1000)
DEFAULT_MAX_OUTPUT = 200_000
MAX_READ_BYTES = 1_000_000

Command = Annotated[
    str, Field(description="The shell command to run (bash syntax; /bin/sh where bash is missing).")
]
Cwd = Annotated[
    str | None,
    Field(
        description="Working directory, relative to the workspace root (default: the root). Must stay inside it."
    ),
]
Env = Annotated[
    dict[str, str] | None,
    Field(
        description="Extra environment variables for the command. The command does not see the server's own "
        "secrets; it gets PATH, HOME, LANG and similar, plus these."
    ),
]
TimeoutMs = Annotated[
    float | None,
    Field(
        description=f"Stop the command after this many milliseconds (default {DEFAULT_RUN_TIMEOUT_MS}, at most "
        f"{MAX_RUN_TIMEOUT_MS}). On timeout the whole process tree is killed and timedOut is true."
    ),
]
MaxOutput = Annotated[
    int | None,
    Field(
        ge=0,
        description=f"Bytes of stdout and of stderr to return, each (default {DEFAULT_MAX_OUTPUT}). Longer output "
        "keeps its beginning and end around a '…[N bytes truncated]…' marker, with truncated true.",
    ),
]
Offset = Annotated[
    int,
    Field(
        ge=0,
        description="Byte offset to read from: 0 for everything kept, or the nextOffset of your previous read "
        "(or the outputOffset a command returned) to get only what is new.",
    ),
]
MaxBytes = Annotated[
    int,
    Field(
        ge=1,
        le=MAX_READ_BYTES,
        description="Read at most this many bytes (default 100000); hasMore tells if more is there.",
    ),
]
WaitMs = Annotated[
    float,
    Field(
        ge=0,
        description=f"Wait up to this many milliseconds (at most {MAX_WAIT_MS}) for it to finish, or for "
        "untilPattern to appear, before answering. 0 answers at once.",
    ),
]
UntilPattern = Annotated[
    str | None,
    Field(
        description="With waitMs: stop waiting as soon as the output after offset matches this regular expression "
        "(e.g. 'listening on|error')."
    ),
]

UNTRUSTED_RULE = "commands in an untrusted workspace need the person's confirmation"


# ---------------------------------------------------------------------------------------------
# Result shapes


class CommandResult(TypedDict):
    stdout: str
    stderr: str
    exitCode: int | None
    """The exit status; negative when a signal ended the process (-9 killed, -15 terminated)."""
    timedOut: bool
    truncated: bool
    durationMs: int


class OsCommandResult(TypedDict):
    osType: str
    command: str
    executed: bool
    stdout: str
    stderr: str
    exitCode: int | None
    timedOut: bool
    truncated: bool
    durationMs: int
    commandSource: str
    """Which parameter was run: windowsCommand, macCommand, unixCommand or command."""


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


class TerminalSession(TypedDict):
    terminalId: str
    name: str
    state: str
    """starting, running, exited or killed."""
    busy: bool
    """A command is still running (the shell has not shown its next prompt)."""
    cwd: str
    """The folder the terminal started in, relative to the root (a `cd` inside it is not tracked)."""
    shell: str
    createdAt: str
    outputOffset: int
    """The end of its output so far."""
    lastCommand: NotRequired[str]
    lastExitCode: NotRequired[int | None]


class OutputChunk(TypedDict):
    output: str
    offset: int
    """Where `output` starts (later than the offset asked for when older output was dropped)."""
    nextOffset: int
    """Pass this as offset next time to read only what is new."""
    skippedBytes: int
    """Bytes between the offset asked for and `offset` that are no longer kept."""
    hasMore: bool
    """More output is already there past nextOffset (maxBytes was reached)."""


class TerminalOutput(OutputChunk):
    terminalId: str
    state: str
    busy: bool
    lastExitCode: NotRequired[int | None]
    patternMatched: NotRequired[bool]


class InputSent(TypedDict):
    bytesSent: int
    outputOffset: int
    terminalId: NotRequired[str]
    jobId: NotRequired[str]


class JobInfo(TypedDict):
    jobId: str
    title: str
    command: str
    cwd: str
    state: str
    """running, exited, killed, timed_out or failed."""
    exitCode: int | None
    startedAt: str
    durationMs: int
    outputOffset: int
    """The end of its output so far."""
    acceptsInput: bool
    endedAt: NotRequired[str]


class JobOutput(OutputChunk):
    jobId: str
    state: str
    exitCode: int | None
    durationMs: int
    patternMatched: NotRequired[bool]


# ---------------------------------------------------------------------------------------------
# Helpers


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _timeout_s(timeout_ms: float | None) -> float:
    if timeout_ms is None:
        return DEFAULT_RUN_TIMEOUT_MS / 1000
    if timeout_ms <= 0:
        raise ToolFailure("invalid timeout: give the limit in milliseconds, more than 0 (e.g. 30000)")
    return min(float(timeout_ms), MAX_RUN_TIMEOUT_MS) / 1000


def _wait_s(wait_ms: float) -> float:
    return min(max(0.0, float(wait_ms)), MAX_WAIT_MS) / 1000


def _pattern(text: str | None) -> re.Pattern[str] | None:
    if not text:
        return None
    try:
        return re.compile(text)
    except re.error as exc:
        raise ToolFailure(f"invalid untilPattern: {exc} (give a Python regular expression)") from None


async def _confirm_command(what: str, command: str) -> None:
    ws = current().workspace
    if not ws.policy.trusted:
        shown = command if len(command) <= 2000 else command[:2000] + "…"
        await confirm(f"{what} in the untrusted workspace {ws.name!r}?\n\n{shown}", rule=UNTRUSTED_RULE)


def _command_result(done: processes.Completed) -> CommandResult:
    return CommandResult(
        stdout=done.stdout,
        stderr=done.stderr,
        exitCode=done.exit_code,
        timedOut=done.timed_out,
        truncated=done.truncated,
        durationMs=done.duration_ms,
    )


async def _run(
    command: str,
    cwd: str | None,
    env: dict[str, str] | None,
    timeout_ms: float | None,
    max_output: int | None,
) -> processes.Completed:
    call = current()
    timeout = _timeout_s(timeout_ms)

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


async def _wait_until(
    done: Callable[[], bool],
    log: processes.OutputLog,
    offset: int,
    wait_s: float,
    pattern: re.Pattern[str] | None,
) -> bool | None:
    """Wait until ``done()`` or ``pattern`` matches the output after ``offset``; True when it matched."""
    if wait_s <= 0:
        return None if pattern is None else _matches(log, offset, pattern)
    call = current()
    start = time.monotonic()
    deadline = start + wait_s
    next_report = start + 1.0
    seen = -1
    pause = 0.001
    while True:
        if pattern is not None and log.version != seen:
            seen = log.version
            if _matches(log, offset, pattern):
                return True
        if done():
            return None if pattern is None else _matches(log, offset, pattern)
        now = time.monotonic()
        if now >= deadline:
            return None if pattern is None else False
        if now >= next_report:
            next_report = now + 1.0
            await call.reporter.progress(round(now - start, 1), wait_s, "waiting for output")
        # Short commands answer within milliseconds; long ones are polled 20 times a second.
        await anyio.sleep(min(pause, deadline - now))
        pause = min(pause * 1.5, 0.05)


def _matches(log: processes.OutputLog, offset: int, pattern: re.Pattern[str]) -> bool:
    data, _, _, _ = log.read(max(offset, log.end - 256_000), 256_000, final=True)
    return pattern.search(processes.decode(data)) is not None


def _session(term: processes.Terminal) -> TerminalSession:
    out = TerminalSession(
        terminalId=term.id,
        name=term.name,
        state=term.state,
        busy=term.busy,
        cwd=term.cwd,
        shell=os.path.basename(term.shell),
        createdAt=_iso(term.created_at),
        outputOffset=term.log.end,
    )
    last = term.last
    if last is not None:
        out["lastCommand"] = last.command[:500]
        out["lastExitCode"] = last.exit_code
    return out


def _job_info(job: processes.Job) -> JobInfo:
    out = JobInfo(
        jobId=job.id,
        title=job.title,
        command=job.command[:2000],
        cwd=job.cwd,
        state=job.state,
        exitCode=job.exit_code,
        startedAt=_iso(job.started_at),
        durationMs=job.duration_ms,
        outputOffset=job.log.end,
        acceptsInput=job.has_stdin,
    )
    if job.ended_at is not None:
        out["endedAt"] = _iso(job.ended_at)
    return out


def _terminals() -> processes.Terminals:
    return current().workspace.service(processes.Terminals)


def _jobs() -> processes.Jobs:
    return current().workspace.service(processes.Jobs)


# ---------------------------------------------------------------------------------------------
# Seed tools


@tool(
    "terminal",
    title="Run command in terminal",
    destructive=True,
    open_world=True,
    example={"command": "npm list --depth=0"},
    errors=("terminal busy", "declined in an untrusted workspace", "line over 4000 bytes"),
)
async def execute_terminal_command(
    command: Annotated[str, Field(description="The shell command to type into the terminal.")],
    terminalId: Annotated[
        str | None,
        Field(
            description="The terminal to use (from create_terminal or list_terminals). Default: an idle terminal of "
            "this workspace, opened on first use."
        ),
    ] = None,
    waitMs: Annotated[
        float,
        Field(
            ge=0,
            description=f"Wait up to this many milliseconds (at most {MAX_WAIT_MS}) for the command to finish and "
            "return its output too. 0 (the default) returns at once.",
        ),
    ] = 0,
) -> TerminalExecuted:
    """Type a shell command into a persistent terminal session of the workspace (a real pty running bash, so
    interactive programs behave; the session keeps its current folder, variables and background programs between
    commands). Returns `{"status": "executed", terminalId, outputOffset}` at once; read what the command prints
    with `read_terminal_output(terminalId, offset=outputOffset, waitMs=...)`, answer its prompts with
    `send_terminal_input`. With `waitMs`, waits for the command to finish and adds `finished`, `exitCode`,
    `output` and `nextOffset`. Without `terminalId` an idle terminal is used (a new one when all are busy); a busy
    terminal named by `terminalId` is refused. For output you need in full, prefer `run_command_on_background`;
    for servers and watchers, `start_job`."""
    await _confirm_command("Run this command in a terminal", command)
    terminals = _terminals()
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
    wait = _wait_s(waitMs)
    if wait > 0:
        await _wait_until(lambda: record.finished or not term.alive, term.log, record.offset, wait, None)
        end = record.end_offset if record.end_offset is not None else term.log.end
        text, _, nxt, _, _ = term.read(record.offset, max(0, min(end - record.offset, MAX_READ_BYTES)))
        result["finished"] = record.finished
        result["exitCode"] = record.exit_code
        result["output"] = _drop_echo(text, command)
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
    """Run a shell command to completion, without a terminal, and return `{stdout, stderr, exitCode}` plus
    `timedOut`, `truncated` and `durationMs`. The command runs in its own process group in `cwd` (inside the
    workspace), with stdin closed (it cannot wait for input), without the server's secrets in its environment,
    and with a timeout (default 60 s) after which its whole process tree is killed (TERM, then KILL). Background
    processes it leaves running are stopped when it exits. Long output keeps its head and tail around a
    '…[N bytes truncated]…' marker. Sends progress notifications while it runs; cancelling the call kills it.
    For commands that run longer than your client waits for a tool (often 60 s), use `start_job`."""
    await _confirm_command("Run this command", command)
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
    milliseconds: Annotated[
        float, Field(description=f"How long to wait, in milliseconds (at most {MAX_WAIT_MS}, 10 minutes).")
    ],
) -> WaitResult:
    """Wait for a number of milliseconds (at most 10 minutes), then answer
    `{"status": "completed", "message": "Waited for N milliseconds"}`. Cancelling the call stops the wait.
    To wait for a command or job, prefer `read_terminal_output` / `get_job_output` with `waitMs`, which return
    as soon as it finishes."""
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
    """Describe the operating system and the shell commands run in: `{osType, osVersion, terminalType,
    isIntegratedTerminal, isDefault}` (osType is Linux, macOS or Windows; terminalType the shell, e.g. bash)
    plus the shell's path, the machine architecture and the kernel. Commands from `run_command_on_background`,
    `execute_terminal_command` and `start_job` run in this shell on the server's machine."""
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
    windowsCommand: Annotated[str | None, Field(description="The command to run on Windows.")] = None,
    unixCommand: Annotated[
        str | None, Field(description="The command to run on Linux and other Unix systems.")
    ] = None,
    macCommand: Annotated[
        str | None, Field(description="The command to run on macOS (falls back to unixCommand).")
    ] = None,
    command: Annotated[
        str | None, Field(description="The command to run when none of the above fits this OS.")
    ] = None,
    cwd: Cwd = None,
    timeout: TimeoutMs = None,
) -> OsCommandResult:
    """Run the variant of a command that fits the server's operating system: `windowsCommand` on Windows,
    `macCommand` (else `unixCommand`) on macOS, `unixCommand` on Linux, falling back to `command`. Returns
    `{osType, command, executed}` (the command that ran) plus its `stdout`, `stderr`, `exitCode`, `timedOut`,
    `truncated`, `durationMs` and `commandSource` (which parameter was used). Runs like
    `run_command_on_background` (timeout, tree kill, no stdin, no server secrets)."""
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
    source = next((name for name in [*order, "command"] if given[name] and given[name].strip()), None)  # type: ignore[union-attr]
    if source is None:
        raise ToolFailure(
            f"invalid parameters: no command for {os_type} (give {' or '.join(order)}, or `command` for every OS)"
        )
    chosen = given[source]
    assert chosen is not None
    await _confirm_command("Run this command", chosen)
    done = await _run(chosen, cwd, None, timeout, None)
    return OsCommandResult(
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


# ---------------------------------------------------------------------------------------------
# Terminal sessions


@tool(
    "terminal",
    title="Open terminal",
    example={"name": "dev server", "cwd": "web"},
    errors=("too many terminals", "cwd outside the workspace"),
)
async def create_terminal(
    name: Annotated[str | None, Field(description="A name to recognise it by in list_terminals.")] = None,
    cwd: Cwd = None,
) -> TerminalSession:
    """Open a new persistent terminal session (bash on a pty) in `cwd`, for running commands with
    `execute_terminal_command(terminalId=...)`. Returns its `terminalId` and state. At most 8 terminals per
    workspace stay open; close one with `kill_terminal`."""
    term = await anyio.to_thread.run_sync(lambda: _terminals().create(name=name, cwd=cwd))
    return _session(term)


@tool(
    "terminal",
    title="Read terminal output",
    read_only=True,
    example={"terminalId": "terminal-1", "offset": 0, "waitMs": 5000},
    errors=("unknown terminal", "invalid untilPattern"),
)
async def read_terminal_output(
    terminalId: Annotated[
        str, Field(description="The terminal (from execute_terminal_command or list_terminals).")
    ],
    offset: Offset = 0,
    maxBytes: MaxBytes = 100_000,
    waitMs: WaitMs = 0,
    untilPattern: UntilPattern = None,
) -> TerminalOutput:
    """Read a terminal's output from a byte `offset`: plain text (colours and cursor escapes removed, CRLF as
    LF), as a person would see it, including the typed commands and the `$ ` prompts. Pass the previous
    `nextOffset` to get only what is new. With `waitMs`, waits until the running command finishes (the next
    prompt) or `untilPattern` appears. `busy` tells whether a command is still running; `lastExitCode` is the
    exit status of the last finished one. Only the last 1 MB of a terminal's output is kept (`skippedBytes`)."""
    term = _terminals().get(terminalId)
    pattern = _pattern(untilPattern)
    matched = await _wait_until(lambda: not term.busy, term.log, offset, _wait_s(waitMs), pattern)
    text, start, nxt, skipped, more = term.read(offset, maxBytes)
    out = TerminalOutput(
        terminalId=term.id,
        state=term.state,
        busy=term.busy,
        output=text,
        offset=start,
        nextOffset=nxt,
        skippedBytes=skipped,
        hasMore=more,
    )
    finished = [c for c in term.commands if c.finished]
    if finished:
        out["lastExitCode"] = finished[-1].exit_code
    if matched is not None:
        out["patternMatched"] = matched
    return out


KEYS: dict[str, bytes] = {
    "enter": b"\r",
    "tab": b"\t",
    "escape": b"\x1b",
    "backspace": b"\x7f",
    "ctrl+c": b"\x03",
    "ctrl+d": b"\x04",
    "ctrl+z": b"\x1a",
    "ctrl+l": b"\x0c",
    "ctrl+u": b"\x15",
    "up": b"\x1b[A",
    "down": b"\x1b[B",
    "right": b"\x1b[C",
    "left": b"\x1b[D",
    "y": b"y",
    "n": b"n",
    "q": b"q",
}

Key = Literal[
    "enter",
    "tab",
    "escape",
    "backspace",
    "ctrl+c",
    "ctrl+d",
    "ctrl+z",
    "ctrl+l",
    "ctrl+u",
    "up",
    "down",
    "right",
    "left",
    "y",
    "n",
    "q",
]


@tool(
    "terminal",
    title="Send input to terminal",
    destructive=True,
    example={"terminalId": "terminal-1", "text": "yes", "pressEnter": True},
    errors=("unknown terminal", "terminal ended", "nothing to send"),
)
async def send_terminal_input(
    terminalId: Annotated[str, Field(description="The terminal to type into.")],
    text: Annotated[str, Field(description="Text to type (as is; add pressEnter to end the line).")] = "",
    pressEnter: Annotated[bool, Field(description="Press Enter after the text.")] = False,
    key: Annotated[
        Key | None,
        Field(
            description="A key to press after the text: 'ctrl+c' interrupts the running program, 'ctrl+d' ends input, arrows, 'enter'..."
        ),
    ] = None,
) -> InputSent:
    """Type into a terminal: answer a prompt (`text="y", pressEnter=true`), feed an interactive program, or
    press a key such as `ctrl+c` to interrupt what is running. Returns the bytes sent and the output offset
    before them (read the reaction with `read_terminal_output` from there)."""
    terminals = _terminals()
    term = terminals.get(terminalId)
    data = text.encode()
    if key is not None:
        data += KEYS[key]
    if pressEnter:
        data += b"\r"
    if not data:
        raise ToolFailure("invalid input: nothing to send (give text, pressEnter or key)")
    if "\x00" in text:
        raise ToolFailure("invalid input: text contains a NUL byte")
    if text.strip():
        await _confirm_command("Type this into a terminal", text)
    offset = term.log.end
    await anyio.to_thread.run_sync(terminals.write, term, data)
    return InputSent(terminalId=term.id, bytesSent=len(data), outputOffset=offset)


@tool("terminal", title="List terminals", read_only=True, idempotent=True, example={})
def list_terminals() -> list[TerminalSession]:
    """The workspace's terminal sessions (open and recently ended): id, name, state, whether a command is
    running (`busy`), the last command and its exit code, and the end of their output (`outputOffset`)."""
    return [_session(t) for t in _terminals().list()]


@tool(
    "terminal",
    title="Close terminal",
    destructive=True,
    idempotent=True,
    example={"terminalId": "terminal-1"},
    errors=("unknown terminal",),
)
def kill_terminal(terminalId: Annotated[str, Field(description="The terminal to close.")]) -> TerminalSession:
    """Close a terminal session and kill everything running in it (its whole process tree, including programs
    started in the background). Its output stays readable until it is forgotten."""
    terminals = _terminals()
    term = terminals.get(terminalId)
    if term.alive:
        term = terminals.kill(terminalId)
    return _session(term)


# ---------------------------------------------------------------------------------------------
# Jobs


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
    await _confirm_command("Start this background job", command)
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
    """Read a job's output (stdout and stderr interleaved) from a byte `offset`, with its state
    (running, exited, killed, timed_out) and exit code. Pass the previous `nextOffset` to get only what is new.
    With `waitMs`, waits until the job ends or `untilPattern` appears in the new output (e.g. a server's
    'listening on'). Only the last 4 MB of output is kept (`skippedBytes` counts what was dropped)."""
    job = _jobs().get(jobId)
    pattern = _pattern(untilPattern)
    matched = await _wait_until(lambda: not job.running, job.log, offset, _wait_s(waitMs), pattern)
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
    return out


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
    start time, duration and the end of their output (`outputOffset`)."""
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

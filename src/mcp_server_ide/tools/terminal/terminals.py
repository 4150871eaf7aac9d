"""Interactive terminal sessions: open a persistent shell on a pty, read what it shows, type into it,
list and close them. (``execute_terminal_command``, which types a command into one, is in
:mod:`.commands`.)
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated, Literal, NotRequired

import anyio
from pydantic import Field
from typing_extensions import TypedDict

from ...call import current, shaped
from ...lazy import LazyModule
from ...registry import ToolFailure, tool
from .output import InputSent, OutputChunk, iso, lean_chunk, wait_until
from .params import Cwd, MaxBytes, Offset, UntilPattern, WaitMs, until_pattern, wait_s
from .trust import confirm_command

if TYPE_CHECKING:
    from ...engines import processes
else:
    processes = LazyModule("mcp_server_ide.engines.processes")


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


class TerminalOutput(OutputChunk):
    terminalId: NotRequired[str]
    """The REST door only (the caller named it)."""
    state: str
    busy: bool
    lastExitCode: NotRequired[int | None]
    patternMatched: NotRequired[bool]


def _session(term: processes.Terminal) -> TerminalSession:
    out = TerminalSession(
        terminalId=term.id,
        name=term.name,
        state=term.state,
        busy=term.busy,
        cwd=term.cwd,
        shell=os.path.basename(term.shell),
        createdAt=iso(term.created_at),
        outputOffset=term.log.end,
    )
    last = term.last
    if last is not None:
        out["lastCommand"] = last.command[:500]
        out["lastExitCode"] = last.exit_code
    return out


def _terminals() -> processes.Terminals:
    return current().workspace.service(processes.Terminals)


@tool(
    "terminal",
    title="Open terminal",
    example={"name": "dev server", "cwd": "web"},
    errors=("too many terminals", "cwd outside the workspace"),
)
async def create_terminal(
    name: str | None = None,
    cwd: Cwd = None,
) -> TerminalSession:
    """Open a persistent bash terminal (a pty) for `execute_terminal_command`; at most 8 per workspace."""
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
    terminalId: str,
    offset: Offset = 0,
    maxBytes: MaxBytes = 100_000,
    waitMs: WaitMs = 0,
    untilPattern: UntilPattern = None,
) -> TerminalOutput:
    """A terminal's output from byte `offset`, as plain text; pass the previous `nextOffset` for what is new.
    `waitMs` waits for the prompt or `untilPattern`."""
    term = _terminals().get(terminalId)
    pattern = until_pattern(untilPattern)
    matched = await wait_until(lambda: not term.busy, term.log, offset, wait_s(waitMs), pattern)
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
    return shaped(out, lean_chunk(offset, "terminalId"))


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

KEYS: dict[Key, bytes] = {
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


@tool(
    "terminal",
    title="Send input to terminal",
    destructive=True,
    example={"terminalId": "terminal-1", "text": "yes", "pressEnter": True},
    errors=("unknown terminal", "terminal ended", "nothing to send"),
)
async def send_terminal_input(
    terminalId: str,
    text: str = "",
    pressEnter: bool = False,
    key: Annotated[
        Key | None,
        Field(description="Pressed after the text: 'ctrl+c', 'ctrl+d', 'enter', arrows..."),
    ] = None,
) -> InputSent:
    """Type text or press a key (`ctrl+c`, `enter`...) in a terminal, e.g. to answer a prompt."""
    terminals = _terminals()
    term = terminals.get(terminalId)
    processes.check_sendable(text, "input")
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
        await confirm_command("Type this into a terminal", text)
    offset = term.log.end
    await anyio.to_thread.run_sync(terminals.write, term, data)
    return InputSent(terminalId=term.id, bytesSent=len(data), outputOffset=offset)


@tool("terminal", title="List terminals", read_only=True, idempotent=True, example={})
def list_terminals() -> list[TerminalSession]:
    """The workspace's terminals: id, name, state, whether busy, last command and exit code."""
    return [_session(t) for t in _terminals().list()]


@tool(
    "terminal",
    title="Close terminal",
    destructive=True,
    idempotent=True,
    example={"terminalId": "terminal-1"},
    errors=("unknown terminal",),
)
def kill_terminal(terminalId: str) -> TerminalSession:
    """Close a terminal and kill everything running in it (its whole process tree)."""
    terminals = _terminals()
    term = terminals.get(terminalId)
    if term.alive:
        term = terminals.kill(terminalId)
    return _session(term)

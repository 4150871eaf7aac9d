"""A faster stdio transport for the SDK's server: asyncio pipes instead of worker threads.

The SDK's ``stdio_server()`` reads each line and writes and flushes each answer through
``anyio.wrap_file``: three worker-thread round trips per request. On this 2-core machine that
is ~0.3 ms of every tool call (a bare ``MCPServer``'s no-op call: 1.01 ms with the SDK's
transport, 0.79 ms with this one, interleaved medians). Here the same descriptors are read and
written by the event loop itself (``connect_read_pipe`` / ``connect_write_pipe``); everything
else is the SDK's own ``stdio_server()``, given these streams:

- fd 0 and fd 1 are claimed exactly as the SDK does (pointed at ``/dev/null`` and stderr while
  serving, so a stray ``print`` or a child process cannot write into the protocol stream, and
  restored on exit);
- used only when both ends are pipes or sockets (what clients launch us with); a terminal or a
  file falls back to the SDK's transport, so no shared terminal is ever made non-blocking;
- lines of any length are read (a single write of a large file is one line);
- the pipes are grown to 1 MB where Linux allows, so a large answer is one write;
- a ``lane`` (:mod:`.directlane`) may answer a request line itself, writing on the same pipe;
- requests still running when stdin closes are answered before the SDK is told (:mod:`.inflight`);
- a ``handshake`` (:mod:`.handshake`) that read the first line (and may have answered it before
  the SDK loaded) hands over every byte it read, and drops the SDK's second answer to it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Protocol

from . import jsonrpc
from .wrapped import WrappedReader

if TYPE_CHECKING:
    from mcp.server import MCPServer
    from mcp.shared.message import SessionMessage

    from ..surface.lowlevel import MessageReader, MessageWriter
    from .handshake import Handshake

LINE_LIMIT = 1 << 30
PIPE_SIZE = 1 << 20
"""Pipe buffer asked for (Linux ``F_SETPIPE_SZ``, best effort): a 100 KB answer then goes out in one
write instead of waiting for the client to drain a 64 KB pipe in the middle of it."""
_F_SETPIPE_SZ = 1031


class Lane(Protocol):
    def answer(self, line: bytes) -> bytes | None:
        """The response line for a request line it answers itself, else None."""
        ...


class _Lines:
    """``async for line in stdin`` over an asyncio stream (what the SDK's reader iterates).

    With a ``lane`` (:mod:`.directlane`), a line the lane answers is answered here and never
    reaches the SDK."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        lane: Lane | None = None,
        writer: asyncio.StreamWriter | None = None,
    ) -> None:
        self.reader = reader
        self.lane = lane if writer is not None else None
        self.writer = writer

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> bytes:
        while True:
            line = await self.reader.readline()
            if not line:
                raise StopAsyncIteration
            if self.writer is None:
                return line
            answer = jsonrpc.answer_for_bad_id(line)  # the SDK would take it for a notification
            if answer is None and self.lane is not None:
                answer = self.lane.answer(line)
            if answer is None:
                return line
            self.writer.write(answer)
            await self.writer.drain()


class _Answering(WrappedReader):
    """The SDK's read stream, with every line its reader could not parse answered here.

    The SDK hands such a line on as an exception, which the session only logs: the client would
    wait forever. Here it gets the JSON-RPC error the HTTP doors give (-32700, or -32600 for JSON
    that is not a message), with the request's id when the bytes still show it."""

    def __init__(self, inner: MessageReader, writer: asyncio.StreamWriter) -> None:
        super().__init__(inner)
        self.writer = writer

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item = await self.inner.receive()
            answer = jsonrpc.answer_for_unparsed(item) if isinstance(item, Exception) else None
            if answer is None:
                return item
            self.writer.write(answer)
            await self.writer.drain()


class _Writer:
    """``await stdout.write(text)`` / ``await stdout.flush()`` over an asyncio transport (the SDK
    writes each message as one ``write(json + "\\n")``)."""

    def __init__(self, writer: asyncio.StreamWriter, handshake: Handshake | None = None) -> None:
        self.writer = writer
        self.handshake = handshake

    async def write(self, text: str) -> None:
        if self.handshake is not None:
            kept = self.handshake.outgoing(text.removesuffix("\n"))
            if kept is None:
                return
        self.writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self.writer.drain()


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def usable() -> bool:
    """True when stdin and stdout are pipes or sockets and the loop is asyncio's."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    try:
        return _is_pipe(sys.stdin.fileno()) and _is_pipe(sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):
        return False


@asynccontextmanager
async def stdio_streams(
    lane: Lane | None = None, handshake: Handshake | None = None
) -> AsyncIterator[tuple[MessageReader, MessageWriter]]:
    """The SDK's ``stdio_server()`` streams, fed by asyncio pipes on the claimed descriptors (after
    the bytes a ``handshake`` read first)."""
    from mcp.server import stdio as sdk_stdio

    from ..surface.lowlevel import claim_stdio
    from .inflight import CountedReader, CountedWriter, InFlight

    loop = asyncio.get_running_loop()
    if handshake is not None and not handshake.done.is_set():  # no first line yet: wait, off the loop
        import anyio

        await anyio.to_thread.run_sync(handshake.done.wait, abandon_on_cancel=True)
    stdin_file, release_in = claim_stdio(0)
    stdout_file, release_out = claim_stdio(1)
    read_transport = write_transport = None
    for fd in (stdin_file.fileno(), stdout_file.fileno()):
        _grow_pipe(fd)
    try:
        reader = asyncio.StreamReader(limit=LINE_LIMIT, loop=loop)
        if handshake is not None and handshake.buffered:
            reader.feed_data(handshake.buffered)
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader, loop=loop),
            os.fdopen(os.dup(stdin_file.fileno()), "rb", buffering=0),
        )
        write_transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(os.dup(stdout_file.fileno()), "wb", buffering=0)
        )
        writer = asyncio.StreamWriter(write_transport, protocol, None, loop)
        # The SDK types its streams as anyio files; it only iterates lines (bytes or text, which it
        # parses as JSON either way) and awaits write/flush, which these do on the asyncio pipes.
        lines, out = _Lines(reader, lane, writer), _Writer(writer, handshake)
        inflight = InFlight()
        async with sdk_stdio.stdio_server(stdin=lines, stdout=out) as (read_stream, write_stream):  # pyright: ignore[reportArgumentType]
            reading = CountedReader(_Answering(read_stream, writer), inflight)
            yield reading, CountedWriter(write_stream, inflight)
    finally:
        for transport in (read_transport, write_transport):
            if transport is not None:
                transport.close()
        if release_out is not None:
            release_out()
        if release_in is not None:
            release_in()


def _grow_pipe(fd: int) -> None:
    if not sys.platform.startswith("linux"):
        return
    import fcntl

    with contextlib.suppress(OSError):
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            fcntl.fcntl(fd, _F_SETPIPE_SZ, PIPE_SIZE)


async def run(server: MCPServer, lane: Lane | None = None, handshake: Handshake | None = None) -> None:
    """Serve ``server`` (an ``MCPServer``) over stdio, on the fast transport when it can be used
    (and with ``lane`` answering the calls it takes). A ``handshake`` means stdin and stdout are
    pipes and its bytes are the stream's first: the fast transport is then always the one."""
    if handshake is None and not usable():
        await server.run_stdio_async()
        return
    from ..surface.lowlevel import serve_streams

    async with stdio_streams(lane, handshake) as (read_stream, write_stream):
        await serve_streams(server, read_stream, write_stream)

"""Output capture: a capped head + tail of a stream, a rolling log with offsets, and reading pipes.

- :class:`Capture` (one-shot commands) keeps the start and the end of a stream around a
  ``…[N bytes truncated]…`` marker, so memory stays flat whatever the command prints (``yes``).
- :class:`OutputLog` (jobs, terminals) keeps the last bytes with absolute offsets, read later.
- :func:`read_available` and :func:`drain` read non-blocking pipes and ptys into either.

Neither cuts a UTF-8 sequence in two.
"""

from __future__ import annotations

import errno
import os
import threading
import time
from collections.abc import Callable

DEFAULT_MAX_OUTPUT = 1 << 20
"""Bytes kept per stream (stdout and stderr each) by one-shot commands: half head, half tail."""
_READ_CHUNK = 256 * 1024


class Capture:
    """Keeps the first and the last ``limit / 2`` bytes of a stream, whatever its length."""

    def __init__(self, limit: int = DEFAULT_MAX_OUTPUT) -> None:
        self.limit = max(0, int(limit))
        self.head_limit = self.limit - self.limit // 2
        self.tail_limit = self.limit // 2
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        if not data:
            return
        self.total += len(data)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
            if not data:
                return
        if self.tail_limit <= 0:
            return
        if len(data) >= self.tail_limit:
            self.tail[:] = data[-self.tail_limit :]
            return
        self.tail += data
        if len(self.tail) > 2 * self.tail_limit:
            del self.tail[: len(self.tail) - self.tail_limit]

    @property
    def truncated(self) -> bool:
        return self.total > self.limit

    def value(self) -> bytes:
        """The whole stream, or its head and tail around a ``…[N bytes truncated]…`` marker."""
        if not self.truncated:
            return bytes(self.head + self.tail)
        head = _cut_utf8_end(bytes(self.head))
        tail = _cut_utf8_start(bytes(self.tail[-self.tail_limit :]) if self.tail_limit else b"")
        dropped = self.total - len(head) - len(tail)
        marker = f"\n…[{dropped} bytes truncated]…\n".encode()
        return head + marker + tail


def _cut_utf8_end(data: bytes) -> bytes:
    """Drop an incomplete UTF-8 sequence at the end of ``data``."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte < 0x80:
            return data
        if byte >= 0xC0:  # lead byte: complete only if its sequence fits
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return data if back >= need else data[:-back]
    return data


def _cut_utf8_start(data: bytes) -> bytes:
    """Drop UTF-8 continuation bytes at the start of ``data``."""
    i = 0
    while i < min(3, len(data)) and 0x80 <= data[i] < 0xC0:
        i += 1
    return data[i:]


def decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


class OutputLog:
    """An append-only byte log with absolute offsets that keeps only its last ``limit`` bytes."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.buf = bytearray()
        self.start = 0
        self.lock = threading.Lock()
        self.version = 0

    @property
    def end(self) -> int:
        return self.start + len(self.buf)

    def append(self, data: bytes) -> None:
        if not data:
            return
        with self.lock:
            self.buf += data
            excess = len(self.buf) - self.limit
            if excess > self.limit // 4:
                del self.buf[:excess]
                self.start += excess
            self.version += 1

    def read(self, offset: int, max_bytes: int, *, final: bool = False) -> tuple[bytes, int, int, int]:
        """``(data, start_offset, next_offset, skipped)`` from ``offset``.

        ``skipped`` counts bytes before the kept window that were dropped. An incomplete UTF-8
        sequence at the end is left for the next read unless the stream is ``final``.
        """
        with self.lock:
            offset = max(0, offset)
            kept_from = self.start + max(0, len(self.buf) - self.limit)
            skipped = max(0, kept_from - offset)
            offset = max(offset, kept_from)
            if offset > self.end:
                offset = self.end
            lo = offset - self.start
            hi = min(len(self.buf), lo + max(0, max_bytes))
            data = bytes(self.buf[lo:hi])
            at_end = hi == len(self.buf)
        if skipped:
            cut = _cut_utf8_start(data)
            offset += len(data) - len(cut)
            data = cut
        if not (final and at_end):
            data = _cut_utf8_end(data)
        return data, offset, offset + len(data), skipped


def read_available(fd: int, sink: Callable[[bytes], None]) -> bool:
    """Read what a non-blocking fd has now; True at end of file."""
    while True:
        try:
            data = os.read(fd, _READ_CHUNK)
        except BlockingIOError:
            return False
        except OSError as exc:
            if exc.errno == errno.EIO:  # pty whose other side is gone
                return True
            raise
        if not data:
            return True
        sink(data)
        if len(data) < _READ_CHUNK:
            return False


def drain(open_fds: set[int], sinks: dict[int, Callable[[bytes], None]]) -> None:
    """After a kill: read what is left in the pipes, for at most a second."""
    deadline = time.monotonic() + 1.0
    while open_fds and time.monotonic() < deadline:
        for fd in list(open_fds):
            try:
                if read_available(fd, sinks[fd]):
                    open_fds.discard(fd)
            except OSError:
                open_fds.discard(fd)
        if open_fds:
            time.sleep(0.01)

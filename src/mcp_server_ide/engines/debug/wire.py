"""DAP wire framing: ``Content-Length: N\\r\\n\\r\\n`` then N bytes of UTF-8 JSON, both ways.

:func:`encode` makes one frame; :class:`FrameReader` reads frames from a blocking binary stream
(the adapter's stdout) one message at a time, with a size cap so a broken adapter cannot make the
server buffer without end.
"""

from __future__ import annotations

import json
from typing import IO, Any

MAX_FRAME_BYTES = 64 << 20
"""One message larger than this ends the connection (an adapter's largest real answers are far smaller)."""


class WireError(Exception):
    """The byte stream is not DAP framing (or a frame is too large)."""


def encode(message: dict[str, Any]) -> bytes:
    body = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class FrameReader:
    """Reads DAP messages from ``stream``; :meth:`read` returns None at end of stream."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream

    def read(self) -> dict[str, Any] | None:
        length: int | None = None
        while True:
            line = self.stream.readline(4096)
            if not line:
                return None
            line = line.strip()
            if not line:
                if length is None:
                    continue  # stray blank line between frames
                break
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                try:
                    length = int(value.strip())
                except ValueError:
                    raise WireError(f"bad Content-Length header {line[:80]!r}") from None
        if length < 0 or length > MAX_FRAME_BYTES:
            raise WireError(f"a {length}-byte DAP message is over the {MAX_FRAME_BYTES}-byte cap")
        body = self.stream.read(length)
        if len(body) < length:
            return None
        message = json.loads(body)
        if not isinstance(message, dict):
            raise WireError("a DAP message is not a JSON object")
        return message

"""JSON-RPC shape checks the SDK does not make, shared by every door (HTTP and stdio).

The SDK reads ``{"id": 1e999999, "method": ...}`` as a notification (the id, a float, is dropped)
and answers nothing; these doors answer ``-32600`` instead. It also reads a message holding both a
``result`` and an ``error``, or a ``method`` beside either, as an answer to one of its own requests and
drops it: -32600 too, with the message's id. A line or body it cannot parse at all gets ``-32700``
with the request's id when it can still be read from the bytes.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
BAD_SESSION_ID = (
    "Bad Request: the Mcp-Session-Id header must be visible ASCII (0x21-0x7E) (rule: MCP session ids; "
    "send the id the server gave in its initialize answer)"
)
_ID_TEXT = re.compile(rb'"id"\s*:\s*(-?\d{1,18}(?![\d.eE])|"(?:[^"\\]|\\.){0,200}")')


def visible_ascii(text: str) -> bool:
    """True when ``text`` is one or more visible ASCII characters (0x21-0x7E), as MCP session ids are."""
    return bool(text) and all("\x21" <= ch <= "\x7e" for ch in text)


def bad_id(message: object) -> str | None:
    """Why a parsed message (or batch) has an id no JSON-RPC request may have, or None."""
    for item in message if isinstance(message, list) else [message]:
        if not isinstance(item, dict) or "id" not in item:
            continue
        value = item["id"]
        if value is None and "method" in item:
            return (
                "Invalid Request: the id is null (rule: MCP request ids must not be null; give e.g. 1 or "
                '"a1", or leave the id out for a notification)'
            )
        if value is None or isinstance(value, str):
            continue
        if isinstance(value, int) and not isinstance(value, bool):
            continue
        shown = (
            "a number too large to hold" if isinstance(value, float) and math.isinf(value) else repr(value)
        )
        return (
            f"Invalid Request: the id {shown} is not a string or an integer (rule: JSON-RPC ids are strings "
            'or integers; give e.g. 1 or "a1")'
        )
    return None


def error_line(request_id: object, code: int, message: str) -> bytes:
    """One JSON-RPC error message as a stdio line."""
    data = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return json.dumps(data, separators=(",", ":")).encode() + b"\n"


def recover_id(raw: bytes | str) -> object:
    """The id of a message that failed to parse, when the bytes still show it (else None)."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogatepass")
    try:
        parsed = json.loads(raw.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        parsed = None
    if isinstance(parsed, dict):
        value = parsed.get("id")
        return (
            value
            if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))
            else None
        )
    if parsed is not None:
        return None
    found = _ID_TEXT.search(raw[:4096])
    if found is None:
        return None
    try:
        value = json.loads(found.group(1).decode("utf-8", "replace"))
    except ValueError:
        return None
    return value if isinstance(value, str | int) else None


def answer_for_unparsed(exc: Exception) -> bytes | None:
    """The error line for what the SDK's stdio reader could not read (its pydantic error), or None
    when ``exc`` is not such a failure: -32700 for bytes that are not JSON (broken JSON, invalid
    UTF-8, a lone surrogate the SDK's parser refuses), -32600 for JSON that is not a message."""
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return None
    try:
        found: Any = errors()
        first = found[0]
    except (IndexError, TypeError, ValueError):
        return None
    raw = first.get("input")
    if first.get("type") == "json_invalid":
        request_id = recover_id(raw) if isinstance(raw, bytes | str) else None
        return error_line(
            request_id,
            PARSE_ERROR,
            "Parse error: the line is not valid JSON in UTF-8 (rule: one JSON-RPC message per line, UTF-8, "
            "no lone surrogates such as \\ud800 in strings)",
        )
    request_id = raw.get("id") if isinstance(raw, dict) else None
    if not (
        isinstance(request_id, str) or (isinstance(request_id, int) and not isinstance(request_id, bool))
    ):
        request_id = None
    return error_line(
        request_id,
        INVALID_REQUEST,
        'Invalid Request: not a JSON-RPC 2.0 message (rule: an object with "jsonrpc": "2.0" and a '
        '"method", or a result or error answering an id)',
    )


ODD_ID = re.compile(rb'"id"\s*:\s*(?:-?\d+[.eE]|true|false|null|\[|\{)')
"""A line that may hold an id no request may have (checked further with :func:`bad_id`)."""


MIXED_SHAPE = (
    "Invalid Request: the message holds {keys} (rule: a JSON-RPC message is a request or notification "
    '(a "method"), or an answer (one "result" or one "error"), never both; send the request alone)'
)


def mixed_shape(message: object) -> tuple[object, str] | None:
    """(the id to answer with, why) when a parsed message (or one of a batch) is both a request and an
    answer, or an answer with both a result and an error; else None."""
    for item in message if isinstance(message, list) else [message]:
        if not isinstance(item, dict):
            continue
        keys = [key for key in ("method", "result", "error") if key in item]
        if len(keys) > 1:
            rid = item.get("id")
            shown = " and ".join(f'"{key}"' for key in keys)
            return (rid if _usable_id(rid) else None), MIXED_SHAPE.format(keys=shown)
    return None


def _usable_id(value: object) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _maybe_mixed(line: bytes) -> bool:
    has = [key in line for key in (b'"method"', b'"result"', b'"error"')]
    return sum(has) > 1


def answer_for_bad_id(line: bytes) -> bytes | None:
    """The -32600 line for a request line whose top-level id is neither a string nor an integer, or
    that is both a request and an answer (:func:`mixed_shape`)."""
    odd, mixed = ODD_ID.search(line) is not None, _maybe_mixed(line)
    if not (odd or mixed):
        return None
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None  # the SDK's parser answers it (-32700)
    reason = bad_id(message) if odd else None
    if reason is not None:
        return error_line(None, INVALID_REQUEST, reason)
    found = mixed_shape(message) if mixed else None
    return None if found is None else error_line(found[0], INVALID_REQUEST, found[1])

"""Helpers for the compact (MCP) shapes of tool results; the rule for when they apply is
:func:`..call.shaped` (the REST door keeps the seed's full shapes)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

HASH_CHARS = 16
"""Hex digits of a content hash on MCP: 64 bits tell an edit whether the file changed since it was read
as well as SHA-256's 64 digits do (an ``expectedHash`` may be any prefix this long or longer)."""


def short_hash(item: Any) -> Any:
    """``item`` with its ``hash`` (a content SHA-256) cut to :data:`HASH_CHARS` digits."""
    if isinstance(item, dict) and isinstance(item.get("hash"), str):
        return {**item, "hash": item["hash"][:HASH_CHARS]}
    return item


def without(item: Mapping[str, Any], *keys: str, **defaults: object) -> Any:
    """``item`` less ``keys``, and less each key of ``defaults`` whose value is that default
    (``without(r, "durationMs", timedOut=False, stderr="")``)."""
    return {k: v for k, v in item.items() if k not in keys and not (k in defaults and defaults[k] == v)}

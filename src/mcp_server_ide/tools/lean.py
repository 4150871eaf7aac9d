"""Helpers for the compact (MCP) shapes of tool results; the rule for when they apply is
:func:`..call.shaped` (the REST door keeps the seed's full shapes)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def without(item: Mapping[str, Any], *keys: str, **defaults: object) -> Any:
    """``item`` less ``keys``, and less each key of ``defaults`` whose value is that default
    (``without(r, "durationMs", timedOut=False, stderr="")``)."""
    return {k: v for k, v in item.items() if k not in keys and not (k in defaults and defaults[k] == v)}

"""The Debug Adapter Protocol's own schema, not a second hand-written copy of it.

debugpy (a dependency) ships the official ``debugProtocol.json`` (the JSON schema every DAP type is
generated from, the same file ``@vscode/debugprotocol`` is built from). This module reads it
lazily: :func:`check_request` refuses a request whose command the protocol does not have or whose
arguments miss a required field, so a typo in this engine fails loudly in tests instead of being
ignored by an adapter; :func:`argument_names` lists what a command's arguments may carry.
"""

from __future__ import annotations

import functools
import json
from importlib.util import find_spec
from pathlib import Path
from typing import Any

SCHEMA_PARTS = ("_vendored", "pydevd", "_pydevd_bundle", "_debug_adapter", "debugProtocol.json")


@functools.cache
def schema() -> dict[str, Any]:
    """The protocol's JSON schema (``definitions`` by type name), from the installed debugpy."""
    spec = find_spec("debugpy")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("debugpy is not installed")
    path = Path(next(iter(spec.submodule_search_locations))).joinpath(*SCHEMA_PARTS)
    return json.loads(path.read_text(encoding="utf-8"))


def _arguments_def(command: str) -> dict[str, Any] | None:
    """The ``XArguments`` definition of the request ``command``, or None when the protocol has no such request."""
    defs = schema()["definitions"]
    name = command[:1].upper() + command[1:]
    if f"{name}Request" not in defs:
        return None
    return defs.get(f"{name}Arguments", {})


def argument_names(command: str) -> set[str]:
    found = _arguments_def(command)
    return set((found or {}).get("properties", {}))


def check_request(command: str, arguments: dict[str, Any]) -> None:
    """Raise ValueError when ``command`` is not a DAP request or ``arguments`` lack a required field.
    (``launch``/``attach`` arguments are adapter-specific beyond the schema's few; they pass.)"""
    found = _arguments_def(command)
    if found is None:
        raise ValueError(f"{command!r} is not a Debug Adapter Protocol request")
    missing = [k for k in found.get("required", ()) if k not in arguments]
    if missing:
        raise ValueError(f"DAP {command!r} arguments miss the required {', '.join(missing)}")

"""A step's environment: ``env`` maps and ``envFile`` files of run configurations, checked."""

from __future__ import annotations

import re

from ...workspace import Workspace
from ..failures import ToolFailure
from .variables import as_text


def env_map(value: object, where: str) -> dict[str, str]:
    """An ``env`` object as names to strings (null is the empty string); refuses names a shell cannot hold."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ToolFailure(f"invalid {where}: env must be an object of names to strings", kind="invalid")
    for name in value:
        if not _ENV_NAME.match(str(name)):
            raise ToolFailure(
                f"invalid {where}: {name!r} is not an environment variable name", kind="invalid"
            )
    return {str(k): as_text(v) if v is not None else "" for k, v in value.items()}


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def read_env_file(ws: Workspace, path: str, where: str) -> dict[str, str]:
    """The ``NAME=value`` lines of an env file inside the workspace (a missing file is empty)."""
    from .. import sandbox, textio

    try:
        resolved = sandbox.resolve(ws, path)
    except ToolFailure:
        raise ToolFailure(
            f"refused: the envFile of {where} is outside the workspace", kind="refused"
        ) from None
    if not resolved.path.is_file():
        return {}
    env: dict[str, str] = {}
    for raw in textio.read_text(resolved).text.split("\n"):
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        if line.startswith("export "):
            line = line[7:]
        key, _, value = line.partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        env[key.strip()] = value
    return env

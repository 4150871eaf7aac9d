"""The debug adapters this server can run, one entry a language: how to start it, what to send it.

- **debugpy** (PyPI, a dependency): ``python -m debugpy.adapter`` under the server's own interpreter;
  the program runs under the workspace's interpreter (``python`` of the launch configuration, else the
  project's, as :mod:`..runconfigs.interpreter` finds it). ``console: integratedTerminal`` makes the
  adapter ask this client to start the program (``runInTerminal``), so the program is an ordinary job
  of the process engine: its output is paged by the job tools, its tree killed with the session.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

from ..failures import ToolFailure

PASSED_THROUGH = (
    "justMyCode",
    "stopOnEntry",
    "django",
    "jinja",
    "showReturnValue",
    "subProcess",
    "redirectOutput",
)
"""debugpy launch options taken from the configuration as they are."""


@dataclass(frozen=True)
class Adapter:
    name: str
    adapter_id: str
    types: tuple[str, ...]
    argv: list[str] = field(default_factory=list)
    exception_filters: tuple[str, ...] = ()
    """The filters the adapter offers (``set_exception_breakpoints``)."""
    default_filters: tuple[str, ...] = ()


DEBUGPY = Adapter(
    name="debugpy",
    adapter_id="debugpy",
    types=("debugpy", "python"),
    argv=[sys.executable, "-m", "debugpy.adapter"],
    exception_filters=("raised", "uncaught", "userUnhandled"),
    default_filters=("uncaught",),
)

ADAPTERS = (DEBUGPY,)


def adapter_for(kind: object, name: str) -> Adapter:
    for adapter in ADAPTERS:
        if kind in adapter.types:
            return adapter
    types = ", ".join(t for a in ADAPTERS for t in a.types)
    raise ToolFailure(
        f"unavailable: {name!r} is of type {kind!r}; this server debugs the types {types} (run it without "
        "the debugger with run_configuration)",
        kind="unavailable",
    )


def launch_arguments(item: dict[str, Any], launch: dict[str, Any]) -> dict[str, Any]:
    """debugpy's ``launch`` arguments: the resolved target (``launch``) plus the options it passes on."""
    args: dict[str, Any] = {"name": item["name"], "type": "python", "request": "launch", **launch}
    args["console"] = "integratedTerminal"
    args.setdefault("justMyCode", True)
    for key in PASSED_THROUGH:
        if key in item:
            args[key] = item[key]
    return args

"""The debug adapters this server can run, one entry a language: how to start it, what to send it.

- **debugpy** (PyPI, a dependency): ``python -m debugpy.adapter`` under the server's own interpreter;
  the program runs under the workspace's interpreter (``python`` of the launch configuration, else the
  project's, as :mod:`..runconfigs.interpreter` finds it). ``console: integratedTerminal`` makes the
  adapter ask this client to start the program (``runInTerminal``), so the program is an ordinary job
  of the process engine: its output is paged by the job tools, its tree killed with the session.
- **js-debug** (vscode-js-debug's DAP server, from npm on first use: :mod:`.jsdebug`) for ``node`` and
  ``pwa-node``: a server on a private unix socket; the program is started the same way
  (``runInTerminal``), then js-debug asks for a child session per node process (``startDebugging``),
  which the session opens as a second connection and drives from then on.
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
    server: bool = False
    """A DAP server listening on a socket (js-debug) rather than an adapter on stdio (debugpy)."""
    mirrors_output: bool = False
    """The program's stdout/stderr also come as ``output`` events (kept out of the job log, seen twice)."""


DEBUGPY = Adapter(
    name="debugpy",
    adapter_id="debugpy",
    types=("debugpy", "python"),
    argv=[sys.executable, "-m", "debugpy.adapter"],
    exception_filters=("raised", "uncaught", "userUnhandled"),
    default_filters=("uncaught",),
)

JS_DEBUG = Adapter(
    name="js-debug",
    adapter_id="pwa-node",
    types=("node", "pwa-node"),
    exception_filters=("all", "uncaught"),
    server=True,
    mirrors_output=True,
)

ADAPTERS = (DEBUGPY, JS_DEBUG)

NODE_PASSED_THROUGH = (
    "stopOnEntry",
    "skipFiles",
    "sourceMaps",
    "outFiles",
    "resolveSourceMapLocations",
    "smartStep",
    "runtimeExecutable",
    "runtimeArgs",
    "runtimeVersion",
)
"""js-debug launch options taken from the configuration as they are."""


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


def launch_arguments(
    item: dict[str, Any], launch: dict[str, Any], adapter: Adapter = DEBUGPY
) -> dict[str, Any]:
    """The adapter's ``launch`` arguments: the resolved target (``launch``) plus the options it passes on."""
    if adapter is JS_DEBUG:
        return node_launch_arguments(item, launch)
    args: dict[str, Any] = {"name": item["name"], "type": "python", "request": "launch", **launch}
    args["console"] = "integratedTerminal"
    args.setdefault("justMyCode", True)
    for key in PASSED_THROUGH:
        if key in item:
            args[key] = item[key]
    return args


def node_launch_arguments(item: dict[str, Any], launch: dict[str, Any]) -> dict[str, Any]:
    """js-debug's ``launch`` arguments for a ``node``/``pwa-node`` configuration."""
    args: dict[str, Any] = {
        "name": item["name"],
        "type": "pwa-node",
        "request": "launch",
        "cwd": launch["cwd"],
        "args": launch["args"],
        "env": launch["env"],
        "console": "integratedTerminal",
    }
    if item.get("program"):
        args["program"] = str(item["program"])
    for key in NODE_PASSED_THROUGH:
        if key in item:
            args[key] = item[key]
    return args

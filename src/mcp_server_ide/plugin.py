"""The plugin API: what a module loaded with ``--plugin MODULE`` uses to add to the server.

A plugin is a plain Python module on the import path::

    from mcp_server_ide import plugin

    @plugin.tool(title="Word count", read_only=True)
    def word_count(pathInProject: str) -> int:
        \"\"\"Count the words of a workspace file.\"\"\"
        ws = plugin.current().workspace
        ...

    @plugin.resource("notes://today", mime_type="text/markdown")
    def today() -> str: ...

    @plugin.prompt(title="Standup")
    def standup(project: str) -> str: ...

    @plugin.completion("prompt", "standup", "project")
    def projects(ws, value, chosen): return ["api", "web"]

Tools join the same registry as the built-in ones (category ``plugin`` unless another is
given), so every door serves them, ``--tools`` selects them and they get schemas, annotations
and icons the same way. Resources and prompts are the SDK's (``MCPServer.resource`` /
``.prompt`` arguments). A plugin may also define ``install(server, runner, workspace_for,
options)`` for anything else; it is called once the server is built.

Inside a tool: :func:`current` gives the call (workspace, reporter); :func:`elicit`,
:func:`sample` and :func:`list_roots` ask the client on either protocol era; :func:`log` and
:func:`progress` report back; :func:`mcp_context` is the SDK ``Context`` for anything else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import registry
from .call import current, current_or_none
from .engines.peer import PeerUnavailable, elicit, list_roots, mcp_context, sample, text_of
from .registry import ToolFailure
from .surface.completion import completer as completion

__all__ = [
    "PeerUnavailable",
    "ToolFailure",
    "completion",
    "current",
    "elicit",
    "list_roots",
    "log",
    "mcp_context",
    "progress",
    "prompt",
    "resource",
    "sample",
    "text_of",
    "tool",
]


@dataclass
class Registration:
    kind: str  # "resource" | "prompt"
    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


REGISTRATIONS: list[Registration] = []


def tool(
    fn: Callable[..., Any] | None = None, *, category: str = "plugin", title: str | None = None, **kwargs: Any
) -> Any:
    """Register a tool (``@plugin.tool`` or ``@plugin.tool(title=..., read_only=True, ...)``)."""

    def register(f: Callable[..., Any]) -> Callable[..., Any]:
        shown = title or f.__name__.replace("_", " ").strip().capitalize()
        return registry.tool(category, title=shown, **kwargs)(f)

    return register(fn) if fn is not None else register


def resource(uri: str, **kwargs: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a resource or resource template (arguments of ``MCPServer.resource``)."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        REGISTRATIONS.append(Registration("resource", fn, (uri,), kwargs))
        return fn

    return register


def prompt(name: str | None = None, **kwargs: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a prompt (arguments of ``MCPServer.prompt``)."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        REGISTRATIONS.append(Registration("prompt", fn, (name,), kwargs))
        return fn

    return register


async def log(level: str, message: str) -> None:
    call = current_or_none()
    if call is not None:
        await call.reporter.log(level, message)


async def progress(done: float, total: float | None = None, message: str | None = None) -> None:
    call = current_or_none()
    if call is not None:
        await call.reporter.progress(done, total, message)

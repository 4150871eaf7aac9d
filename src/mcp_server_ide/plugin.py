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
``.prompt`` arguments). A plugin may also define an ``install`` hook for anything else; it is
called once the server is built, with the same arguments as the built-in surface modules'
(:class:`mcp_server_ide.extensions.Install`)::

    from typing import TYPE_CHECKING

    if TYPE_CHECKING:
        from mcp.server import MCPServer

        from mcp_server_ide.runner import ToolRunner
        from mcp_server_ide.server import ServerOptions, WorkspaceFor

    def install(server: MCPServer, runner: ToolRunner, workspace_for: WorkspaceFor, options: ServerOptions) -> None:
        server.middleware.append(...)        # the SDK's MCPServer, as built
        runner.patch_tools(add_meta)         # adjust each tool's SDK Tool as it is built
        ws = workspace_for(ctx)              # the workspace of a request (from its Context)
        options.plugins, options.read_only   # how the server was started

Annotations are optional (the hook is called positionally, as before).

Inside a tool: :func:`current` gives the call (workspace, reporter); :func:`elicit`,
:func:`sample` and :func:`list_roots` ask the client on either protocol era; :func:`log` and
:func:`progress` report back; :func:`mcp_context` is the SDK ``Context`` for anything else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, Unpack, overload

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


F = TypeVar("F", bound=Callable[..., Any])
"""A function of any signature (a tool, resource or prompt function)."""


@dataclass
class Registration:
    kind: Literal["resource", "prompt"]
    fn: Callable[..., Any]
    uri: str = ""
    """The resource's URI (or URI template)."""
    name: str | None = None
    """The prompt's name (None: the function's)."""
    kwargs: dict[str, Any] = field(default_factory=dict)
    """Keyword arguments of ``MCPServer.resource`` / ``.prompt``, passed on as given."""


REGISTRATIONS: list[Registration] = []


@overload
def tool(
    fn: F, *, category: str = ..., title: str | None = ..., **kwargs: Unpack[registry.ToolOptions]
) -> F: ...
@overload
def tool(
    fn: None = None, *, category: str = ..., title: str | None = ..., **kwargs: Unpack[registry.ToolOptions]
) -> Callable[[F], F]: ...
def tool(
    fn: F | None = None,
    *,
    category: str = "plugin",
    title: str | None = None,
    **kwargs: Unpack[registry.ToolOptions],
) -> F | Callable[[F], F]:
    """Register a tool (``@plugin.tool`` or ``@plugin.tool(title=..., read_only=True, ...)``)."""

    def register(f: F) -> F:
        shown = title or f.__name__.replace("_", " ").strip().capitalize()
        return registry.tool(category, title=shown, **kwargs)(f)

    return register(fn) if fn is not None else register


def resource(uri: str, **kwargs: Any) -> Callable[[F], F]:
    """Register a resource or resource template (arguments of ``MCPServer.resource``)."""

    def register(fn: F) -> F:
        REGISTRATIONS.append(Registration("resource", fn, uri=uri, kwargs=kwargs))
        return fn

    return register


def prompt(name: str | None = None, **kwargs: Any) -> Callable[[F], F]:
    """Register a prompt (arguments of ``MCPServer.prompt``)."""

    def register(fn: F) -> F:
        REGISTRATIONS.append(Registration("prompt", fn, name=name, kwargs=kwargs))
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

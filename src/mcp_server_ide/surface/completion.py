"""``completion/complete``: one handler for every prompt argument and resource-template variable.

The SDK takes a single completion function per server; this module keeps a table instead, so
the prompts, the file template and plugins each register completers for their own arguments:

    @completer("prompt", "explain_symbol", "symbol")
    def symbols(ws, value, context): return [...]

A completer gets the workspace, the partial value and the other arguments already chosen, and
returns candidate strings (sync completers run in a worker thread). For resource templates the
name is the template's URI (or ``"file"`` for every workspace-file template).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, cast

import anyio
from mcp_types import (
    CompleteRequestParams,
    CompleteResult,
    Completion,
    PromptReference,
    ResourceTemplateReference,
)

from . import lowlevel

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from ..runner import ToolRunner
    from ..server import ServerOptions, WorkspaceFor
    from ..workspace import Workspace
    from .lowlevel import RequestContext

log = logging.getLogger(__name__)

MAX_VALUES = 100

SyncCompleter = Callable[["Workspace", str, dict[str, str]], Iterable[str]]
AsyncCompleter = Callable[["Workspace", str, dict[str, str]], Awaitable[Iterable[str]]]
Completer = SyncCompleter | AsyncCompleter
"""``fn(ws, value, context_arguments) -> candidates`` (or a coroutine function giving them)."""
_TABLE: dict[tuple[str, str, str], Completer] = {}


def completer(kind: str, name: str, argument: str) -> Callable[[Completer], Completer]:
    """Register ``fn(ws, value, context_arguments) -> list[str]`` for one argument."""
    if kind not in ("prompt", "resource"):
        raise ValueError("kind is 'prompt' or 'resource'")

    def register(fn: Completer) -> Completer:
        _TABLE[(kind, name, argument)] = fn
        return fn

    return register


def find(kind: str, name: str, argument: str) -> Completer | None:
    found = _TABLE.get((kind, name, argument))
    if found is None and kind == "resource" and name.startswith("file://"):
        found = _TABLE.get(("resource", "file", argument))
    return found


def ranked(candidates: list[str], value: str) -> list[str]:
    """Prefix matches first (case-sensitive, then not), then substring matches; no duplicates."""
    low = value.casefold()
    seen: set[str] = set()
    buckets: list[list[str]] = [[], [], []]
    for c in candidates:
        if c in seen:
            continue
        seen.add(c)
        if c.startswith(value):
            buckets[0].append(c)
        elif c.casefold().startswith(low):
            buckets[1].append(c)
        elif low in c.casefold():
            buckets[2].append(c)
    return buckets[0] + buckets[1] + buckets[2]


def install(
    server: MCPServer, runner: ToolRunner, workspace_for: WorkspaceFor, options: ServerOptions
) -> None:
    from mcp.server.mcpserver import Context

    async def complete(ctx: RequestContext, params: CompleteRequestParams) -> CompleteResult:
        ref = params.ref
        if isinstance(ref, PromptReference):
            fn = find("prompt", ref.name, params.argument.name)
        elif isinstance(ref, ResourceTemplateReference):
            fn = find("resource", ref.uri, params.argument.name)
        else:
            fn = None
        if fn is None:
            return CompleteResult(completion=Completion(values=[], total=0, has_more=False))
        ws = workspace_for(Context(request_context=ctx, mcp_server=server))
        value = params.argument.value or ""
        chosen = dict(params.context.arguments or {}) if params.context is not None else {}
        try:
            if inspect.iscoroutinefunction(fn):
                values = await cast("AsyncCompleter", fn)(ws, value, chosen)
            else:
                values = await anyio.to_thread.run_sync(cast("SyncCompleter", fn), ws, value, chosen)
        except Exception:
            log.exception("completion of %s failed", params.argument.name)
            values = []
        values = [str(v) for v in values or ()]
        return CompleteResult(
            completion=Completion(
                values=values[:MAX_VALUES], total=len(values), has_more=len(values) > MAX_VALUES
            )
        )

    lowlevel.replace_request(server, "completion/complete", CompleteRequestParams, lambda previous: complete)

"""The tool table: one definition per tool, served by every door.

A tool is a plain typed Python function with a docstring, decorated with :func:`tool`.
Its JSON input schema, output schema, annotations and description all come from that one
definition (through the MCP SDK's own function introspection, so MCP and the REST door
validate arguments the same way). Doors never know a tool by name.

Failures a caller can act on are raised as :class:`ToolFailure` (defined in
:mod:`.engines.failures`, re-exported here for tools and doors); its message names the rule that
was broken and how to fix the call. :func:`sdk_error` is its form for the SDK.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict, TypeVar

from mcp.server.mcpserver.exceptions import ToolError

from .engines.failures import FailureKind as FailureKind
from .engines.failures import ToolFailure

# The seed's categories (000) plus this server's own groups. Order is the reference page's order.
CATEGORIES: dict[str, str] = {
    "editor": "Editor",
    "file": "Files",
    "search": "Search",
    "code": "Code analysis",
    "debug": "Debug and run",
    "terminal": "Terminal",
    "git": "Git",
    "project": "Project",
    "action": "Actions",
    "project_fs": "Sandbox (project_fs)",
    "journal": "Change journal",
    "hosted": "Hosted projects",
    "plugin": "Plugins",
}

RUN_CATEGORIES = frozenset({"terminal", "debug", "action"})
"""Categories whose tools that are not read-only run code (see :attr:`ToolSpec.scope`)."""

HTTP_STATUS: dict[str, int] = {
    "invalid": 400,
    "refused": 403,
    "not_found": 404,
    "conflict": 409,
    "too_large": 413,
    "unavailable": 503,
}
"""The REST door's status for each :data:`FailureKind`."""


def sdk_error(failure: ToolFailure) -> ToolError:
    """``failure`` as the SDK's ``ToolError``, for a tool's body to raise to the SDK.

    The SDK answers a ``ToolError`` with ``isError: true`` and ``Error executing tool NAME: <its
    message>``; any other exception gets the bare ``Error executing tool NAME``, its text withheld.
    """
    return ToolError(str(failure))


class _PagedMark:
    """Marks a ``PagedList[X]`` return annotation (the runner publishes total/truncated/nextOffset)."""

    def __repr__(self) -> str:
        return "PAGED"


PAGED = _PagedMark()


T = TypeVar("T")

ToolFn = Callable[..., Any]
"""A tool function: any signature (the SDK derives the schema from it), any JSON-ready result."""
F = TypeVar("F", bound=ToolFn)

Inline = bool | Callable[[dict[str, Any]], bool]
"""See :attr:`ToolSpec.inline` (the function gets the validated arguments, a JSON object)."""


class PagedList(list[T]):
    """One page of a longer list. The items stay the result (the seed's JSON array); the page facts
    travel beside it: extra envelope keys on the REST door (``total``, ``truncated``, ``nextOffset``);
    on MCP the bare array when it is the whole list, else ``{"result": [...], "total", "truncated",
    "nextOffset", "note"}`` as the one JSON value (:func:`.resultform.page_value`).

    Annotate the tool ``-> PagedList[Item]`` and return ``PagedList(items, total=..., truncated=...,
    next_offset=..., offset=...)``. ``note`` says, on MCP, why the list stopped early (if it did).
    """

    def __init__(
        self,
        items: Iterable[T] = (),
        *,
        total: int | None = None,
        truncated: bool = False,
        next_offset: int | None = None,
        note: str | None = None,
        offset: int = 0,
    ) -> None:
        super().__init__(items)
        self.offset = offset
        self.total = len(self) if total is None else total
        self.truncated = truncated
        self.next_offset = next_offset
        self.note = note

    def __class_getitem__(cls, item: type) -> Any:
        """At run time ``PagedList[X]`` is ``Annotated[list[X], PAGED]`` (what the SDK's schema
        derivation reads); to a type checker it stays ``PagedList[X]``. (``Any``: a typing form.)"""
        return Annotated[list[item], PAGED]

    def page_fields(self) -> dict[str, int | bool | None]:
        return {"total": self.total, "truncated": self.truncated, "nextOffset": self.next_offset}

    def with_items(self, items: Iterable[T]) -> PagedList[T]:
        return PagedList(
            items,
            total=self.total,
            truncated=self.truncated,
            next_offset=self.next_offset,
            note=self.note,
            offset=self.offset,
        )


@dataclass(frozen=True)
class ToolSpec:
    """Everything the doors need to know about one tool."""

    fn: ToolFn
    name: str
    category: str
    title: str
    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool
    structured: bool | None
    example: dict[str, Any] | None
    errors: tuple[str, ...]
    meta: dict[str, Any] | None = None
    requires: tuple[str, ...] = field(default=())
    inline: Inline = False
    """A fast sync tool run on the event loop: no thread hop. Only for work that is bounded and small:
    no process, no lock another process may hold, no diff or read whose size the caller or the disk
    decides. A function of the validated arguments (called inside the call, so it may stat the file a
    read names) when only some calls are (a flat listing, not a recursive walk; a small file, not a big one)."""

    @property
    def description(self) -> str:
        return _clean_doc(self.fn.__doc__ or self.title)

    @property
    def scope(self) -> str:
        """The token scope a hosted caller needs for this tool: ``read`` for a read-only tool, ``run`` for
        one that starts or steers processes (terminals, jobs, run configurations, debugging, actions),
        ``write`` for any other."""
        if self.read_only:
            return "read"
        return "run" if self.category in RUN_CATEGORIES else "write"


_TABLE: dict[str, ToolSpec] = {}


class ToolOptions(TypedDict, total=False):
    """The keyword arguments of :func:`tool` after ``title`` (for wrappers such as ``plugin.tool``)."""

    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool
    structured: bool | None
    example: dict[str, Any] | None
    errors: tuple[str, ...]
    meta: dict[str, Any] | None
    requires: tuple[str, ...]
    inline: Inline
    name: str | None


def tool(
    category: str,
    *,
    title: str,
    read_only: bool = False,
    destructive: bool = False,
    idempotent: bool = False,
    open_world: bool = False,
    structured: bool | None = None,
    example: dict[str, Any] | None = None,
    errors: tuple[str, ...] = (),
    meta: dict[str, Any] | None = None,
    requires: tuple[str, ...] = (),
    inline: Inline = False,
    name: str | None = None,
) -> Callable[[F], F]:
    """Register ``fn`` as a tool.

    ``read_only`` tools never change the workspace (``--read-only`` keeps only these).
    ``structured=False`` for tools whose result is plain text: with ``--structured-content`` it gets
    no output schema (the SDK would double it as ``{"result": ...}``); by default no tool has one. ``example`` is a valid argument object shown on the reference page.
    ``errors`` lists the failures a caller can expect, in words. ``requires`` names workspace
    features the tool needs (``"git"``, ``"python"``...), used by dynamic discovery. ``inline`` marks a
    sync tool whose work is bounded and small (run on the event loop, and answerable by the stdio direct
    lane when read-only; see :attr:`ToolSpec.inline`), or gives a function of the arguments saying which
    calls are.
    """
    if category not in CATEGORIES:
        raise ValueError(f"unknown tool category {category!r}; add it to registry.CATEGORIES")

    def register(fn: F) -> F:
        tool_name = name or fn.__name__
        if tool_name in _TABLE and _TABLE[tool_name].fn is not fn:
            raise ValueError(f"tool {tool_name!r} is defined twice")
        _TABLE[tool_name] = ToolSpec(
            fn=fn,
            name=tool_name,
            category=category,
            title=title,
            read_only=read_only,
            destructive=destructive,
            idempotent=idempotent,
            open_world=open_world,
            structured=structured,
            example=example,
            errors=errors,
            meta=meta,
            requires=requires,
            inline=inline,
        )
        return fn

    return register


def all_tools() -> list[ToolSpec]:
    """Every registered tool, in category order then definition order."""
    order = {c: i for i, c in enumerate(CATEGORIES)}
    return sorted(_TABLE.values(), key=lambda t: order.get(t.category, len(order)))


def get(name: str) -> ToolSpec | None:
    return _TABLE.get(name)


def load_builtin_tools() -> None:
    """Import every module of ``mcp_server_ide.tools`` so their tools register."""
    from . import tools as package

    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{info.name}")


def load_plugin(module_name: str) -> None:
    """Import a user module whose ``@tool`` functions (and resources/prompts) join the table."""
    importlib.import_module(module_name)


def _clean_doc(doc: str) -> str:
    import inspect

    return inspect.cleandoc(doc).strip()

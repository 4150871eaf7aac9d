"""How a tool's return value travels on MCP: once, as one compact JSON text block.

Why (ARCHITECTURE.md, "What a result carries", has the sources): VS Code, Claude Code and Cursor
hand the model ``JSON.stringify(structuredContent)`` *instead of* the text when a result has
``structuredContent``; Claude Desktop hands it the text only; no client shows ``outputSchema`` to
the model. So a result sent both ways pays twice on the wire and gains nothing, and the text is
the one form every client reads. By default a result is therefore:

- one text block of compact JSON (no indentation), with every key whose value is null left out;
- a string result as the text itself (a file's text, a diff);
- a paged list as its JSON array when that is the whole list, else (a later page, more to fetch,
  a note to give) ``{"result": [...], "total": N, "truncated": true, "nextOffset": K, "note": "..."}``;
- content blocks (images, resources) as they are.

``--structured-content`` (for programmatic clients that read ``structuredContent``) brings back
``outputSchema`` + ``structuredContent``, with the text block the compact JSON of that same value,
nulls kept (the schema may require the key).
"""

from __future__ import annotations

import typing
from typing import Any

import pydantic_core
from mcp.server.mcpserver.utilities.types import Audio, Image
from mcp_types import CallToolResult, ContentBlock, TextContent
from pydantic_core import to_jsonable_python

from .registry import PagedList

CONTENT_TYPES: tuple[type, ...] = (Image, Audio, *typing.get_args(ContentBlock))
"""What the SDK turns into content blocks of their own (not JSON data)."""


def without_nulls(value: Any) -> Any:
    """JSON-ready ``value`` with every object key whose value is null left out (list items stay:
    their position means something)."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) if isinstance(v, dict | list) else v for v in value]
    return value


def jsonable(value: object) -> Any:
    """``value`` as plain JSON data (camelCase aliases of models, dataclasses as objects)."""
    return to_jsonable_python(value, by_alias=True)


def compact_json(value: object, *, keep_nulls: bool = False) -> str:
    """``value`` as compact JSON text: no indentation, and (unless ``keep_nulls``) no null-valued key."""
    data = jsonable(value)
    return pydantic_core.to_json(data if keep_nulls else without_nulls(data)).decode()


def is_content(value: object) -> bool:
    """Whether ``value`` is (or holds) MCP content blocks rather than JSON data."""
    if isinstance(value, CONTENT_TYPES):
        return True
    return isinstance(value, list | tuple) and any(isinstance(item, CONTENT_TYPES) for item in value)


def page_value(page: PagedList[Any]) -> Any:
    """The one JSON value of a page: its items when they are the whole list, else the items with
    the page facts (a later page, more to fetch, a ``note`` saying why a search stopped early...)."""
    items = jsonable(list(page))
    if not (page.offset or page.truncated or page.next_offset is not None or page.note):
        return items
    value: dict[str, Any] = {"result": items, "total": page.total}
    if page.truncated:
        value["truncated"] = True
    if page.next_offset is not None:
        value["nextOffset"] = page.next_offset
    if page.note:
        value["note"] = page.note
    return value


def page_structured(page: PagedList[Any]) -> dict[str, Any]:
    """A page as ``structuredContent`` (``--structured-content``): every page fact, as its schema says."""
    value: dict[str, Any] = {"result": jsonable(list(page)), **page.page_fields()}
    if page.note:
        value["note"] = page.note
    return value


def as_page(result: object) -> PagedList[Any]:
    if isinstance(result, PagedList):
        return result
    return PagedList(result if isinstance(result, list | tuple) else ())


def text_result(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)])


def structured_result(structured: Any) -> CallToolResult:
    """``structured`` as ``structuredContent`` plus its compact JSON as the one text block."""
    return CallToolResult(
        content=[TextContent(type="text", text=pydantic_core.to_json(structured).decode())],
        structured_content=structured,
    )

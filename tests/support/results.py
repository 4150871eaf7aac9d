"""Reading a tool's answer the way a client would."""

from __future__ import annotations

import json
from typing import Any

PAGE_FACTS = {"result", "total", "truncated", "nextOffset", "note"}


def payload(result: Any) -> Any:
    """The tool's result data: the JSON of its one text block (every MCP result is one compact JSON
    text block, without structuredContent: see ``resultform``). A page with more to fetch is
    ``{"result": [...], "total", "truncated", "nextOffset"}``; :func:`page` reads both forms. A plain run
    (``exit code N`` then stdout) is read as its JSON form would be: :func:`plain_run`."""
    assert len(result.content) == 1, result.content
    text = result.content[0].text
    if text.startswith("exit code "):
        return plain_run(text)
    return json.loads(text)


def plain_run(text: str) -> dict[str, Any]:
    """``run_command_on_background``'s text answer (``exit code N``, a newline, stdout verbatim) as the
    JSON object it stands for: ``{"stdout"?, "exitCode"}`` (an empty stdout left out, as in JSON)."""
    head, _, stdout = text.partition("\n")
    code = int(head.removeprefix("exit code "))
    return {"stdout": stdout, "exitCode": code} if stdout else {"exitCode": code}


def flat_references(found: dict[str, Any]) -> list[dict[str, Any]]:
    """find_references' compact answer (references grouped by file) as one list of locations, each with
    its ``path``, in the answer's order."""
    return [{"path": group["path"], **at} for group in found["references"] for at in group["locations"]]


def page(result: Any) -> dict[str, Any]:
    """A paged tool's answer as ``{"result": items, "total", "truncated", "nextOffset", "note"?}``,
    whether it came as the bare array (nothing more to fetch) or as the object with the page facts."""
    data = payload(result)
    if isinstance(data, list):
        return {"result": data, "total": len(data), "truncated": False, "nextOffset": None}
    assert isinstance(data, dict) and set(data) <= PAGE_FACTS, data
    return {"truncated": False, "nextOffset": None, **data}


def data(result: Any) -> Any:
    """What a test usually wants from a successful call: the JSON value of its one text block, or
    the text itself when it is not JSON (a diff, a file's text)."""
    assert len(result.content) == 1, result.content
    text = result.content[0].text
    if not text.startswith(("{", "[")):
        return text
    return json.loads(text)


def _text(result: Any) -> str:
    return result.content[0].text if result.content else repr(result)


async def call(client: Any, tool: str, /, **args: Any) -> Any:
    """Call ``tool`` through an MCP client session; it must succeed: its :func:`payload`."""
    result = await client.call_tool(tool, args)
    assert not result.is_error, f"{tool}: {_text(result)}"
    return payload(result)


async def call_data(client: Any, tool: str, /, **args: Any) -> Any:
    """Call ``tool``; it must succeed: its :func:`data` (JSON, or the text when it is not JSON)."""
    result = await client.call_tool(tool, args)
    assert not result.is_error, f"{tool}: {_text(result)}"
    return data(result)


async def error(client: Any, tool: str, /, **args: Any) -> str:
    """Call ``tool``; it must fail (an ``isError`` result): the error's text."""
    result = await client.call_tool(tool, args)
    assert result.is_error, f"{tool} should have failed: {_text(result)}"
    return _text(result)

"""Helpers shared by the adversarial suites (SECURITY.md §1, §2, §5, §7).

- Which tools take a path, and arguments that aim one of them at a given path (built from the
  tool's own input schema, so tools added later are covered without editing the suites).
- Scanning an answer for host paths outside the workspace and for secrets read from outside.
- Telling a clean refusal from a crash (the SDK answers a crash with a bare
  ``Error executing tool NAME``; the REST door with a 500).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

PATH_KEYS = ("pathInProject", "path", "dir", "directory", "folder", "filePath", "file", "uri")
"""Parameter names that carry one workspace path, most specific first."""

CORE_CATEGORIES = ("file", "search", "project_fs")


def registered_specs() -> list[Any]:
    from mcp_server_ide import registry

    registry.load_builtin_tools()
    return registry.all_tools()


def path_key(schema: dict[str, Any]) -> str | None:
    props = schema.get("properties", {})
    for key in PATH_KEYS:
        if key in props:
            return key
    return None


def _fill_value(name: str, prop: dict[str, Any], marker: str) -> Any:
    lowered = name.lower()
    if prop.get("type") == "integer" or "integer" in json.dumps(prop.get("anyOf", [])):
        return 1
    if prop.get("type") == "boolean":
        return False
    if prop.get("type") == "array":
        return [marker]
    if any(word in lowered for word in ("old", "search", "find", "pattern", "query", "substring")):
        return "root"
    return marker


def args_for(name: str, schema: dict[str, Any], path: str, marker: str = "PWNED-BY-TEST\n") -> dict[str, Any]:
    """Arguments that aim tool ``name`` at ``path``: the path parameter plus every required one."""
    key = path_key(schema)
    if key is None:
        raise ValueError(f"{name} takes no path")
    args: dict[str, Any] = {key: path}
    props = schema.get("properties", {})
    for req in schema.get("required", []):
        if req == key:
            continue
        args[req] = _fill_value(req, props.get(req, {}), marker)
    if name == "replace_specific_text":
        args["searchText"], args["replaceText"] = "root", marker
    return args


def result_text(result: Any) -> str:
    """Everything an MCP tool result says: its text blocks and its structured content."""
    parts = [getattr(block, "text", "") or "" for block in result.content]
    if result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts)


def data_of(result: Any) -> Any:
    """A tool's answer as data, whether it came as structuredContent or as JSON text only (a result of
    an MCP ``CallToolResult`` or of a raw JSON-RPC ``result`` dict). Plain text comes back as
    ``{"content": text}``."""
    if isinstance(result, dict):
        structured, blocks = result.get("structuredContent"), result.get("content", [])
        first = blocks[0].get("text", "") if blocks else ""
    else:
        structured, blocks = result.structured_content, result.content
        first = getattr(blocks[0], "text", "") if blocks else ""
    if structured is not None:
        return structured
    try:
        return json.loads(first)
    except ValueError:
        return {"content": first}


def is_crash(tool: str, text: str) -> bool:
    """The SDK's answer to an unexpected exception: the bare prefix, nothing after it."""
    return text.strip() == f"Error executing tool {tool}" or "internal error" in text


SECRET_MARKERS = ("root:x:0:0", "EVIL-SECRET", "OUTSIDE-SECRET")


def echo_forms(user_path: str) -> list[str]:
    """The ways a refusal may echo the caller's own input (it is theirs, not a host path)."""
    forms = {user_path, repr(user_path), user_path[:200], repr(user_path[:200])[:-1]}
    forms |= {json.dumps(f)[1:-1] for f in list(forms)}
    return sorted(forms, key=len, reverse=True)


def host_leaks(text: str, *, ws: Path, forbidden: Iterable[str], echo: str | None = None) -> list[str]:
    """Host paths outside ``ws`` (and outside secrets) that ``text`` reveals.

    The caller's own path, echoed back, does not count; paths inside the workspace do not count.
    """
    scrubbed = text
    if echo:
        for form in echo_forms(echo):
            if form:
                scrubbed = scrubbed.replace(form, "<ECHO>")
    for form in (str(ws), json.dumps(str(ws))[1:-1]):
        scrubbed = re.sub(re.escape(form) + r"(?![\w.\-])", "<WS>", scrubbed)
    found = [m for m in SECRET_MARKERS if m in text]
    found += [f for f in forbidden if f and f in scrubbed]
    return found


def snapshot(folder: Path, skip: Path | None = None) -> dict[str, tuple[str, bytes | str | None, int]]:
    """Every entry under ``folder`` (not following links): kind, content or link target, mode."""
    out: dict[str, tuple[str, bytes | str | None, int]] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        here = Path(dirpath)
        if skip is not None and (here == skip or skip in here.parents):
            dirnames[:] = []
            continue
        for name in dirnames + filenames:
            p = here / name
            if skip is not None and p == skip:
                continue
            st = p.lstat()
            rel = str(p.relative_to(folder))
            if p.is_symlink():
                out[rel] = ("link", os.readlink(p), st.st_mode)
            elif p.is_file():
                out[rel] = ("file", p.read_bytes(), st.st_mode)
            else:
                out[rel] = ("other", None, st.st_mode)
    return out

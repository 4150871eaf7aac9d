"""What ``tools/list`` shows of each tool, kept across starts.

Building the SDK's ``Tool`` objects for every tool costs ~100 ms of pydantic model building, and
clients list the tools right after ``initialize``. A listing needs only each tool's name, title,
description, schemas, annotations, icons and ``_meta``; those are kept in a JSON file in the state
folder, keyed by everything they derive from: this package's source files (tools and the code that
shapes them), the SDK and pydantic versions, the enabled tool names, read-only mode, and the patches
applied to the tools as they are built (each names itself and what it depends on beyond this
package's code, e.g. whether ``apps/review.html`` is there). The key is taken when the tools are
first listed, after every ``install`` hook ran. Any change gives a new key, so a stale listing is
never served; a tool is still built for real when called.

Only a listing made from this package alone is kept. A ``--plugin`` module is code whose effect on
the listing (at import, in its ``install`` hook) cannot be named without building the tools, so a
server with a plugin, a tool from outside the package or a patch that does not name itself builds
its listing every start (:func:`cache_key` gives None).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp_types import Icon, ToolAnnotations

from .registry import ToolSpec
from .workspace import default_state_home

if TYPE_CHECKING:
    from mcp.server.mcpserver.tools.base import Tool

log = logging.getLogger(__name__)

PACKAGE_DIR = Path(__file__).resolve().parent
PACKAGE = __name__.rpartition(".")[0]
KEEP = 8


@dataclass(frozen=True)
class Listed:
    """A tool as ``tools/list`` shows it (the attributes the SDK reads from a ``Tool``)."""

    name: str
    title: str | None
    description: str
    parameters: dict[str, Any]
    output_schema: dict[str, Any] | None
    annotations: ToolAnnotations | None
    icons: list[Icon] | None
    meta: dict[str, Any] | None


def cache_key(
    specs: Iterable[ToolSpec],
    *,
    read_only: bool,
    structured: bool = False,
    patches: Iterable[str | None] = (),
) -> str | None:
    """The key of the listing of these tools with these patches, or None when it must not be cached."""
    names = []
    for spec in specs:
        if not spec.fn.__module__.startswith(PACKAGE + "."):
            return None  # foreign code: its source, and all it reads, are not ours to key
        names.append(spec.name)
    shaped_by = []
    for patch in patches:
        if patch is None:
            return None  # a patch that cannot say what its effect depends on
        shaped_by.append(patch)
    digest = hashlib.sha256()
    for dist in ("mcp", "pydantic", "mcp-server-ide"):
        try:
            digest.update(f"{dist}={metadata.version(dist)};".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{dist}=?;".encode())
    digest.update(("|".join(names) + f";read_only={read_only};structured={structured};").encode())
    digest.update(("patches=" + "|".join(shaped_by) + ";").encode())
    for path in sorted(str(p) for p in PACKAGE_DIR.rglob("*.py")):
        try:
            st = os.stat(path)
            digest.update(f"{path}:{st.st_mtime_ns}:{st.st_size};".encode())
        except OSError:
            digest.update(f"{path}:missing;".encode())
    return digest.hexdigest()[:24]


def _path(key: str) -> Path:
    return default_state_home() / "cache" / f"tools-{key}.json"


def load(key: str) -> dict[str, Listed] | None:
    try:
        data = json.loads(_path(key).read_text(encoding="utf-8"))
        return {
            item["name"]: Listed(
                name=item["name"],
                title=item["title"],
                description=item["description"],
                parameters=item["parameters"],
                output_schema=item["output_schema"],
                annotations=ToolAnnotations.model_validate(item["annotations"])
                if item["annotations"] is not None  # {} (every hint at its default) is not None
                else None,
                icons=[Icon.model_validate(i) for i in item["icons"]] if item["icons"] is not None else None,
                meta=item["meta"],
            )
            for item in data
        }
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        log.debug("tool listing cache unreadable; rebuilding", exc_info=True)
        return None


def save(key: str, tools: Iterable[Tool]) -> None:
    """Keep the listing of fully built tools (best effort: a failure only costs the next start)."""
    from .engines.textio import atomic_write

    items = [
        {
            "name": t.name,
            "title": t.title,
            "description": t.description,
            "parameters": t.parameters,
            "output_schema": t.output_schema,
            "annotations": t.annotations.model_dump(mode="json", by_alias=True, exclude_none=True)
            if t.annotations is not None
            else None,
            "icons": [i.model_dump(mode="json", by_alias=True, exclude_none=True) for i in t.icons]
            if t.icons is not None
            else None,
            "meta": t.meta,
        }
        for t in tools
    ]
    path = _path(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps(items).encode("utf-8"), 0o600)
        _prune(path.parent)
    except OSError:
        log.debug("could not keep the tool listing cache", exc_info=True)


def _prune(folder: Path, keep: int = KEEP) -> None:
    """Keep the most recent listings only (one per version and set of options in use)."""
    kept = sorted(folder.glob("tools-*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in kept[keep:]:
        old.unlink(missing_ok=True)

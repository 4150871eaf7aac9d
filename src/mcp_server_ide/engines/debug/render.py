"""Variables for a model to read: values cut with a marker, children paged and depth-limited.

A debugger can hand back a million-element list, a 10 MB string or a structure that contains
itself; everything here is bounded: :data:`VALUE_CHARS` characters a value (then ``…(+N chars)``),
``limit`` children a level, ``depth`` levels, children expanded until :data:`NODE_BUDGET` nodes
are shown (then only their ``ref``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

VALUE_CHARS = 200
LOCALS_VALUE_CHARS = 80
NODE_BUDGET = 200
MAX_DEPTH = 4
GROUPS = ("special variables", "function variables", "class variables", "protected variables")
"""debugpy's grouping entries (dunders, methods): not the program's data, left out of answers."""

Fetch = Callable[[int, int, int], tuple[list[dict[str, Any]], int | None]]
"""``(variablesReference, offset, limit) -> (children, total)``: one page and the count of all when
the adapter pages (a large array in js-debug), else every child and None."""


def cut(text: str, limit: int = VALUE_CHARS) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…(+{len(text) - limit} chars)"


class Renderer:
    def __init__(self, fetch: Fetch, *, depth: int = 1, limit: int = 50) -> None:
        self.fetch = fetch
        self.depth = max(1, min(depth, MAX_DEPTH))
        self.limit = max(1, min(limit, 500))
        self.budget = NODE_BUDGET

    def children(self, ref: int, offset: int = 0, level: int = 1) -> tuple[list[dict[str, Any]], int]:
        """One page of ``ref``'s children (rendered), and how many children it has in all."""
        got, total = self.fetch(ref, max(0, offset), self.limit)
        if total is None:
            every = [v for v in got if v.get("name") not in GROUPS]
            page, total = every[max(0, offset) : max(0, offset) + self.limit], len(every)
        else:
            page = got[: self.limit]
        out: list[dict[str, Any]] = []
        for var in page:  # every item of the page is shown; the budget only stops expanding
            self.budget -= 1
            out.append(self.one(var, level))
        return out, total

    def one(self, var: dict[str, Any], level: int) -> dict[str, Any]:
        item: dict[str, Any] = {
            "name": cut(str(var.get("name", "")), 100),
            "value": cut(str(var.get("value", ""))),
        }
        if var.get("type"):
            item["type"] = cut(str(var["type"]), 60)
        ref = var.get("variablesReference") or 0
        if ref:
            count = (var.get("indexedVariables") or 0) + (var.get("namedVariables") or 0)
            if count:
                item["count"] = count
            if level < self.depth and self.budget > 0:
                kids, total = self.children(ref, 0, level + 1)
                item["children"] = kids
                if total > len(kids):
                    item["more"] = total - len(kids)
                    item["ref"] = ref
            else:
                item["ref"] = ref
        return item


def compact_locals(variables: list[dict[str, Any]], most: int = 20) -> dict[str, str]:
    """``{name: value}`` of a frame's first scope, cut short: what a stop result shows."""
    out: dict[str, str] = {}
    for var in variables:
        name = str(var.get("name", ""))
        if name in GROUPS or name.startswith("__"):
            continue
        if len(out) >= most:
            out["…"] = f"{len(variables) - most} more (get_variables)"
            break
        out[cut(name, 60)] = cut(str(var.get("value", "")), LOCALS_VALUE_CHARS)
    return out

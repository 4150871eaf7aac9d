"""Published output schemas that clients can check cheaply.

An MCP client that validates ``structuredContent`` against a tool's ``outputSchema`` (the Python
SDK's ``Client`` does, with the pure-Python ``jsonschema``) pays for every item of every array:
1.4 ms for a 60-entry folder listing here, more than the whole round trip of the call. So the
schema a tool *publishes* describes arrays of objects in words (``"Each item: {path: string,
size: integer}"``) instead of an ``items`` schema, while the server still validates every result
against the full model before sending it. Top-level fields keep their types.
"""

from __future__ import annotations

import json
from typing import Any


def light_output_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with each array of objects described in its ``description`` instead of ``items``."""
    defs: dict[str, Any] = schema.get("$defs", {})

    def resolve(node: object) -> object:
        seen = 0
        while isinstance(node, dict) and isinstance(node.get("$ref"), str) and seen < 20:
            node = defs.get(node["$ref"].rsplit("/", 1)[-1], {})
            seen += 1
        return node

    def shape(node: object, depth: int = 0) -> str:
        node = resolve(node)
        if not isinstance(node, dict) or depth > 6:
            return "any"
        if "anyOf" in node:
            return " | ".join(shape(n, depth + 1) for n in node["anyOf"])
        if "enum" in node:
            return "|".join(json.dumps(v, ensure_ascii=False) for v in node["enum"])
        kind = node.get("type")
        if kind == "array":
            return "[" + shape(node["items"], depth + 1) + "]" if "items" in node else "array"
        if "properties" in node:
            required = set(node.get("required", ()))
            fields = (
                f"{name}{'' if name in required else '?'}: {shape(sub, depth + 1)}"
                for name, sub in node["properties"].items()
            )
            return "{" + ", ".join(fields) + "}"
        return kind if isinstance(kind, str) else "any"

    def heavy(items: object) -> bool:
        items = resolve(items)
        return isinstance(items, dict) and (
            "properties" in items or items.get("type") in ("object", "array") or "anyOf" in items
        )

    def lighten(node: dict[str, Any]) -> dict[str, Any]:
        out = dict(node)
        if out.get("type") == "array" and "items" in out and heavy(out["items"]):
            items = out.pop("items")
            said = out.get("description", "").rstrip()
            out["description"] = (said + " " if said else "") + f"Each item: {shape(items)}."
            return out
        if isinstance(out.get("properties"), dict):
            out["properties"] = {name: lighten_any(sub) for name, sub in out["properties"].items()}
        if isinstance(out.get("anyOf"), list):
            out["anyOf"] = [lighten_any(sub) for sub in out["anyOf"]]
        return out

    def lighten_any(node: object) -> object:
        return lighten(node) if isinstance(node, dict) else node

    light = lighten({k: v for k, v in schema.items() if k != "$defs"})
    if defs and '"$ref"' in json.dumps(light):
        light["$defs"] = {name: lighten_any(sub) for name, sub in defs.items()}
    return light

"""Reading a JSON schema for people: a short type text, the values an enum allows, a plausible example
value. Used for the reference's inputs and results; nothing here knows a tool.
"""

from __future__ import annotations

import json
from typing import Any


def deref(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with its ``$ref`` followed into ``defs`` (an unknown name gives ``{}``)."""
    seen = 0
    while "$ref" in schema and seen < 20:
        name = schema["$ref"].rsplit("/", 1)[-1]
        schema = defs.get(name, {})
        seen += 1
    return schema


def _non_null(schema: dict[str, Any]) -> tuple[list[dict[str, Any]], bool]:
    options = schema.get("anyOf") or schema.get("oneOf")
    if not options:
        return [schema], False
    rest = [o for o in options if o.get("type") != "null"]
    return rest, len(rest) != len(options)


def enum_values(schema: dict[str, Any], defs: dict[str, Any]) -> list[Any] | None:
    """The values an enum (or a const) allows, null aside; None when the schema is not one."""
    options, _ = _non_null(schema)
    if len(options) == 1:
        target = deref(options[0], defs)
        if "enum" in target:
            return list(target["enum"])
        if "const" in target:
            return [target["const"]]
    return None


def type_text(schema: dict[str, Any], defs: dict[str, Any], depth: int = 0) -> str:
    """A short readable type: ``string``, ``integer or null``, ``array of string``, ``"a" | "b"``, ``ChangeInfo``."""
    if depth > 6:
        return "…"
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    options, nullable = _non_null(schema)
    if len(options) > 1 or nullable:
        parts = [type_text(o, defs, depth + 1) for o in options]
        return " or ".join([*parts, "null"] if nullable else parts)
    schema = options[0]
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if "enum" in schema:
        return " | ".join(json.dumps(v) for v in schema["enum"])
    if "const" in schema:
        return json.dumps(schema["const"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return " or ".join(kind)
    if kind == "array":
        items = schema.get("items")
        return f"array of {type_text(items, defs, depth + 1)}" if items else "array"
    if kind == "object" and not schema.get("properties"):
        return "object"
    if kind == "object":
        return schema.get("title") or "object"
    return kind or "any"


def example_value(schema: dict[str, Any], defs: dict[str, Any], name: str = "", depth: int = 0) -> Any:
    """A plausible value for a schema (used where a tool gives no example of its own)."""
    if depth > 6:
        return None
    if schema.get("examples"):
        return schema["examples"][0]
    if "default" in schema and schema["default"] is not None:
        return schema["default"]
    options, _ = _non_null(schema)
    schema = deref(options[0], defs) if options else {}
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object":
        props = schema.get("properties", {})
        if not props:
            return {}
        return {key: example_value(prop, defs, key, depth + 1) for key, prop in props.items()}
    if kind == "array":
        if not schema.get("items"):
            return []  # items not described by the schema: show no guess
        return [example_value(schema["items"], defs, name.rstrip("s"), depth + 1)]
    if kind == "integer":
        return (
            max(int(schema.get("minimum", 1)), 1)
            if "line" in name.lower() or "id" in name.lower()
            else int(schema.get("minimum", 0))
        )
    if kind == "number":
        return float(schema.get("minimum", 0))
    if kind == "boolean":
        return False
    return _example_string(name)


def _example_string(name: str) -> str:
    low = name.lower()
    if "hash" in low:
        return "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    if low.endswith("path") or low in ("path", "file", "pathinproject", "dir", "folder"):
        return "src/app.py"
    if "time" in low or low.endswith("at"):
        return "2025-01-01T12:00:00Z"
    if "diff" in low:
        return "--- a/src/app.py\n+++ b/src/app.py\n@@ -1 +1 @@\n-old\n+new\n"
    if "name" in low:
        return "example"
    return "…"

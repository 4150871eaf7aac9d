"""JSON schemas without the bytes a model does not read.

pydantic gives every model and field a generated ``title`` ("Pathinproject",
"get_file_text_by_pathArguments"), every optional parameter ``anyOf: [X, {"type": "null"}]`` with
``default: null``, a free-form object ``additionalProperties: true`` (the default): 40% of a
listing's input schemas, read by the model on every turn. A lean schema keeps names, types, bounds,
enums, required lists, real defaults and descriptions. It stays valid JSON Schema (2020-12). An
input schema accepts every argument the tool takes except an explicit ``null`` for an optional
parameter, which means the same as leaving it out (the server still accepts it: arguments are
validated by the tool's pydantic model, never against the published schema). An output schema keeps
its null branches: clients validate ``structuredContent`` against it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server.mcpserver.tools.base import Tool

    from .registry import ToolSpec

_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
_SCHEMA_LISTS = ("anyOf", "allOf", "oneOf", "prefixItems")
_SCHEMA_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames")
_NULL = {"type": "null"}


LEAN_PATCH = "lean-schemas"
"""The name :func:`lean_tool` is keyed by in the listing cache (:mod:`.toolcache`)."""


def lean_tool(spec: ToolSpec, sdk_tool: Tool) -> None:
    """Publish ``sdk_tool``'s schemas lean (a tool patch); arguments and results are still validated
    by its models."""
    sdk_tool.parameters = lean_schema(sdk_tool.parameters)
    output = sdk_tool.output_schema
    if output is not None:
        lean = lean_schema(output, inputs=False)
        output.clear()  # in place: the SDK's Tool and its FuncMetadata hold this same dict
        output.update(lean)


def lean_schema(schema: dict[str, Any], *, inputs: bool = True) -> dict[str, Any]:
    """``schema`` without generated titles and ``default: null``, and, for the arguments of a tool
    (``inputs``), without the null branch of optional parameters (a new dict; ``schema`` is not
    changed). A result keeps its null branches: a field that is null in a result must validate."""
    return _node(schema, optional=False, drop_null=inputs)


def _node(node: dict[str, Any], *, optional: bool, drop_null: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    required = set(node.get("required", ())) if isinstance(node.get("required"), list) else set()
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue  # generated from the field or model name: the property name says it already
        if key == "default" and value is None:
            continue
        if key == "additionalProperties" and value is True:
            continue  # JSON Schema's default: an open object says nothing more with it
        if key == "properties" and isinstance(value, dict):
            out[key] = {
                name: _node(sub, optional=drop_null and name not in required, drop_null=drop_null)
                if isinstance(sub, dict)
                else sub
                for name, sub in value.items()
            }
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {
                name: _node(sub, optional=False, drop_null=drop_null) if isinstance(sub, dict) else sub
                for name, sub in value.items()
            }
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [
                _node(sub, optional=False, drop_null=drop_null) if isinstance(sub, dict) else sub
                for sub in value
            ]
        elif key in _SCHEMA_ONE and isinstance(value, dict):
            out[key] = _node(value, optional=False, drop_null=drop_null)
        else:
            out[key] = value  # data (enum, const, examples, a real default) and keywords stay as they are
    if optional and isinstance(out.get("anyOf"), list) and _NULL in out["anyOf"]:
        rest = [sub for sub in out["anyOf"] if sub != _NULL]
        if len(rest) == 1 and isinstance(rest[0], dict) and not set(rest[0]) & set(out):
            out.pop("anyOf")
            out = {**rest[0], **out}
        elif rest:
            out["anyOf"] = rest
    return out

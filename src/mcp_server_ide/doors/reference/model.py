"""The reference as data: every tool the runner serves, with its inputs, result shape, examples and
errors (``GET /mcp/tools?format=json``; :mod:`.page` renders the page from it).

Everything comes from the tool runner (the registry's specs and the SDK tools built from them); no
tool is named here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict

from ... import __version__, registry
from .schema import deref, enum_values, example_value, type_text

if TYPE_CHECKING:
    from ...registry import ToolSpec
    from ...runner import ToolRunner


class InputField(TypedDict):
    name: str
    type: str
    required: bool
    description: str
    default: NotRequired[Any]
    enum: NotRequired[list[Any]]
    limits: NotRequired[dict[str, Any]]
    example: NotRequired[Any]
    """Always set, last: the tool's own example, else the field's default, else one made from its schema."""


class ResultField(TypedDict):
    name: str
    type: str
    required: bool
    description: NotRequired[str]


class TextResult(TypedDict):
    kind: Literal["text"]
    description: str


class ShapedResult(TypedDict):
    kind: Literal["value", "object"]
    """``value``: a result wrapped as ``{"result": ...}``; ``object``: the object itself."""
    type: str
    fields: list[ResultField]


class Example(TypedDict):
    arguments: dict[str, Any]
    result: Any


class RestCall(TypedDict):
    method: str
    path: str
    contentType: str


class ToolEntry(TypedDict):
    name: str
    title: str
    category: str
    categoryTitle: str
    description: str
    annotations: dict[str, Any]
    readOnly: bool
    destructive: bool
    inputSchema: dict[str, Any]
    inputs: list[InputField]
    outputSchema: dict[str, Any] | None
    result: TextResult | ShapedResult
    example: Example
    errors: list[str]
    rest: RestCall
    requires: NotRequired[list[str]]
    meta: NotRequired[dict[str, Any]]


class Category(TypedDict):
    id: str
    title: str
    tools: list[str]


class Reference(TypedDict):
    server: dict[str, str]
    auth: dict[str, Any]
    calling: dict[str, str]
    errors: dict[str, Any]
    categories: list[Category]
    tools: list[ToolEntry]


def reference_json(runner: ToolRunner, *, auth_required: bool = False) -> Reference:
    """The reference of every tool the runner serves, as a JSON-ready dict."""
    tools = [_tool_entry(runner, spec) for spec in runner.specs.values()]
    order = {c: i for i, c in enumerate(registry.CATEGORIES)}
    tools.sort(key=lambda t: order.get(t["category"], len(order)))  # stable: the runner's order within one
    categories: list[Category] = []
    for cid, title in registry.CATEGORIES.items():
        names = [t["name"] for t in tools if t["category"] == cid]
        if names:
            categories.append({"id": cid, "title": title, "tools": names})
    extra = sorted({t["category"] for t in tools} - set(registry.CATEGORIES))
    for cid in extra:
        categories.append(
            {"id": cid, "title": cid, "tools": [t["name"] for t in tools if t["category"] == cid]}
        )
    return {
        "server": {"name": "mcp-server-ide", "version": __version__},
        "auth": {"required": auth_required, "scheme": "Bearer" if auth_required else None},
        "calling": {
            "mcp": "tools/call on the Streamable HTTP endpoint /mcp (or stdio) with {name, arguments}",
            "rest": "POST /mcp/{tool} with the arguments as a JSON object, Content-Type: application/json; "
            'answers {"status": result, "error": null} or {"status": null, "error": message}',
        },
        "errors": {
            "mcp": "a failed call is a normal result with isError: true and a message naming the rule broken and the fix",
            "rest": "HTTP status by kind of failure, with the message in the envelope's error",
            "httpStatus": dict(registry.HTTP_STATUS),
        },
        "categories": categories,
        "tools": tools,
    }


def _tool_entry(runner: ToolRunner, spec: ToolSpec) -> ToolEntry:
    sdk = runner.sdk[spec.name]
    schema = runner.input_schema(spec.name)
    output = runner.output_schema(spec.name)
    annotations = sdk.annotations.model_dump(by_alias=True, exclude_none=True) if sdk.annotations else {}
    example_args = dict(spec.example) if spec.example is not None else _example_arguments(schema)
    entry: ToolEntry = {
        "name": spec.name,
        "title": spec.title,
        "category": spec.category,
        "categoryTitle": registry.CATEGORIES.get(spec.category, spec.category),
        "description": spec.description,
        "annotations": annotations,
        "readOnly": spec.read_only,
        "destructive": spec.destructive and not spec.read_only,
        "inputSchema": schema,
        "inputs": _inputs(schema, spec.example or {}),
        "outputSchema": output,
        "result": _result_shape(output),
        "example": {"arguments": example_args, "result": _example_result(output, spec)},
        "errors": list(spec.errors),
        "rest": {"method": "POST", "path": f"/mcp/{spec.name}", "contentType": "application/json"},
    }
    if spec.requires:
        entry["requires"] = list(spec.requires)
    if sdk.meta:
        entry["meta"] = sdk.meta
    return entry


def _inputs(schema: dict[str, Any], example: dict[str, Any]) -> list[InputField]:
    defs = schema.get("$defs", {})
    required = set(schema.get("required", []))
    out = []
    for name, prop in schema.get("properties", {}).items():
        item: InputField = {
            "name": name,
            "type": type_text(prop, defs),
            "required": name in required,
            "description": prop.get("description", ""),
        }
        if "default" in prop:
            item["default"] = prop["default"]
        enum = enum_values(prop, defs)
        if enum:
            item["enum"] = enum
        limits = {k: prop[k] for k in ("minimum", "maximum", "minLength", "maxLength") if k in prop}
        if limits:
            item["limits"] = limits
        # Every field has an example: the tool's own, else its default, else one made from its schema.
        item["example"] = example[name] if name in example else example_value(prop, defs, name)
        out.append(item)
    return out


def _result_shape(output: dict[str, Any] | None) -> TextResult | ShapedResult:
    if output is None:
        return {
            "kind": "text",
            "description": "Plain text (one MCP text block; the REST door's status is the string).",
        }
    defs = output.get("$defs", {})
    if output.get("x-wrapped") or set(output.get("properties", {})) == {"result"}:
        inner = output["properties"]["result"]
        return {"kind": "value", "type": type_text(inner, defs), "fields": _fields(inner, defs)}
    return {"kind": "object", "type": type_text(output, defs), "fields": _fields(output, defs)}


def _fields(schema: dict[str, Any], defs: dict[str, Any]) -> list[ResultField]:
    schema = deref(schema, defs)
    if schema.get("type") == "array":
        schema = deref(schema.get("items", {}), defs)
    required = set(schema.get("required", []))
    fields: list[ResultField] = []
    for name, prop in schema.get("properties", {}).items():
        field: ResultField = {"name": name, "type": type_text(prop, defs), "required": name in required}
        if prop.get("description"):
            field["description"] = prop["description"]
        fields.append(field)
    return fields


def _example_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    defs = schema.get("$defs", {})
    return {
        name: example_value(prop, defs, name)
        for name, prop in schema.get("properties", {}).items()
        if name in set(schema.get("required", []))
    }


def _example_result(output: dict[str, Any] | None, spec: ToolSpec) -> Any:
    if output is None:
        return "ok" if "ok" in spec.description.lower() else "…text…"
    defs = output.get("$defs", {})
    if set(output.get("properties", {})) == {"result"}:
        return example_value(output["properties"]["result"], defs, "result")
    return example_value(output, defs, "result")

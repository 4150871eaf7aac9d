"""The REST door as an OpenAPI 3.1 document (``GET /mcp/openapi.json``), generated from the registry.

Each tool is one ``POST /mcp/{tool}`` operation: the request body is the tool's input schema (the one
``GET /mcp/list_tools`` publishes, with the seed's parameter names), the answer is the seed's envelope
``{"status": result, "error": null}`` or ``{"status": null, "error": message}``. Built from the same
data as the reference at ``GET /mcp/tools`` (:func:`.model.reference_json`); no tool is named here.
A schema's own ``$defs`` move to ``components/schemas`` (named ``<tool>.<Def>``) so every ``$ref``
resolves inside the one document.
"""

from __future__ import annotations

import copy
from typing import Any

from ... import registry
from .model import Reference

ENVELOPE = "Envelope"
FAILURE = "Failure"


def openapi_document(reference: Reference) -> dict[str, Any]:
    """The OpenAPI 3.1 document of every tool in ``reference`` (the reference page's data)."""
    schemas: dict[str, Any] = {
        ENVELOPE: {
            "type": "object",
            "description": "The seed's answer; a paged listing adds its page facts (total, truncated...) beside status.",
            "properties": {"status": {"description": "The tool's result."}, "error": {"type": "null"}},
            "required": ["status", "error"],
        },
        FAILURE: {
            "type": "object",
            "description": "A refusal or failure: the message names the rule broken and the fix.",
            "properties": {"status": {"type": "null"}, "error": {"type": "string"}},
            "required": ["status", "error"],
        },
    }
    paths: dict[str, Any] = {}
    for tool in reference["tools"]:
        body = _lift_defs(tool["name"], tool["inputSchema"], schemas)
        paths[tool["rest"]["path"]] = {"post": _operation(tool, body)}
    document: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {
            "title": "mcp-server-ide REST door",
            "version": reference["server"]["version"],
            "description": reference["calling"]["rest"] + ". " + reference["errors"]["rest"] + ".",
        },
        "paths": paths,
        "components": {"schemas": schemas},
        "tags": [{"name": c["id"], "description": c["title"]} for c in reference["categories"]],
    }
    if reference["auth"]["required"]:
        document["components"]["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
        document["security"] = [{"bearer": []}]
    return document


def _operation(tool: Any, body: dict[str, Any]) -> dict[str, Any]:
    failure = {"content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{FAILURE}"}}}}
    responses: dict[str, Any] = {
        "200": {
            "description": "The tool ran; its result is in status.",
            "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{ENVELOPE}"}}},
        }
    }
    for kind, code in sorted(registry.HTTP_STATUS.items(), key=lambda item: item[1]):
        responses.setdefault(str(code), {"description": f"Refused or failed ({kind}).", **failure})
    responses["415"] = {"description": "The body is not application/json.", **failure}
    return {
        "operationId": tool["name"],
        "summary": tool["title"],
        "description": tool["description"],
        "tags": [tool["category"]],
        "requestBody": {"required": True, "content": {"application/json": {"schema": body}}},
        "responses": responses,
    }


def _lift_defs(tool: str, schema: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with its ``$defs`` moved into ``schemas`` and every ``$ref`` pointed there."""
    schema = copy.deepcopy(schema)
    defs = schema.pop("$defs", {})
    for name, sub in defs.items():
        schemas[f"{tool}.{name}"] = _repoint(tool, sub)
    return _repoint(tool, schema)


def _repoint(tool: str, node: Any) -> Any:
    if isinstance(node, dict):
        out = {key: _repoint(tool, value) for key, value in node.items()}
        ref = out.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            out["$ref"] = f"#/components/schemas/{tool}.{ref.rsplit('/', 1)[-1]}"
        return out
    if isinstance(node, list):
        return [_repoint(tool, item) for item in node]
    return node

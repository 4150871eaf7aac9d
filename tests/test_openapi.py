"""``GET /mcp/openapi.json``: the REST door as an OpenAPI 3.1 document, through the real HTTP server.

It validates as OpenAPI 3.1 (``openapi-spec-validator``) and loads in schemathesis; every tool of
``GET /mcp/list_tools`` is one POST operation whose body schema is that tool's input schema and whose
answer is the seed's envelope; the token and origin rules are the REST door's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import schemathesis
from openapi_spec_validator import validate

from mcp_server_ide.doors.reference.openapi import openapi_document


def test_openapi_document_is_valid_and_lists_every_tool(http_server: Any, ws_path: Path) -> None:
    server = http_server(ws_path)
    answer = httpx.get(server.url + "/mcp/openapi.json", timeout=30)
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/json")
    doc = answer.json()
    validate(doc)  # raises on anything OpenAPI 3.1 does not allow
    assert doc["openapi"].startswith("3.1")
    listed = {t["name"]: t for t in httpx.get(server.url + "/mcp/list_tools", timeout=30).json()}
    assert set(doc["paths"]) == {f"/mcp/{name}" for name in listed}
    for name, tool in listed.items():
        operation = doc["paths"][f"/mcp/{name}"]["post"]
        assert list(doc["paths"][f"/mcp/{name}"]) == ["post"]  # no tool from a GET
        assert operation["operationId"] == name and operation["description"] == tool["description"]
        body = operation["requestBody"]["content"]["application/json"]["schema"]
        assert body == tool["inputSchema"]  # the REST door's names, unchanged
        ok = operation["responses"]["200"]["content"]["application/json"]["schema"]
        assert ok == {"$ref": "#/components/schemas/Envelope"}
    envelope = doc["components"]["schemas"]["Envelope"]
    assert envelope["required"] == ["status", "error"]
    assert "security" not in doc  # no token set

    schema = schemathesis.openapi.from_dict(doc)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert {op.path for op in operations} == set(doc["paths"])


def test_openapi_follows_the_rest_doors_token_and_origin_rules(http_server: Any, ws_path: Path) -> None:
    token = "s3cret-token-for-the-openapi-test"
    server = http_server(ws_path, "--token", token)
    assert httpx.get(server.url + "/mcp/openapi.json", timeout=30).status_code == 401
    auth = {"Authorization": f"Bearer {token}"}
    doc = httpx.get(server.url + "/mcp/openapi.json", headers=auth, timeout=30).json()
    validate(doc)
    assert doc["security"] == [{"bearer": []}] and token not in str(doc)
    assert doc["components"]["securitySchemes"]["bearer"] == {"type": "http", "scheme": "bearer"}
    evil = {**auth, "Origin": "http://localhost.evil.com"}
    assert httpx.get(server.url + "/mcp/openapi.json", headers=evil, timeout=30).status_code == 403
    assert httpx.post(server.url + "/mcp/openapi.json", json={}, headers=auth, timeout=30).status_code == 404


def test_defs_move_to_components_and_refs_follow() -> None:
    reference: Any = {
        "server": {"version": "1"},
        "auth": {"required": False},
        "calling": {"rest": "r"},
        "errors": {"rest": "e"},
        "categories": [{"id": "files", "title": "Files", "tools": ["t"]}],
        "tools": [
            {
                "name": "t",
                "title": "T",
                "description": "d",
                "category": "files",
                "rest": {"path": "/mcp/t"},
                "inputSchema": {
                    "type": "object",
                    "properties": {"edit": {"$ref": "#/$defs/Edit"}},
                    "$defs": {
                        "Edit": {"type": "object", "properties": {"n": {"$ref": "#/$defs/N"}}},
                        "N": {},
                    },
                },
            }
        ],
    }
    doc = openapi_document(reference)
    validate(doc)
    body = doc["paths"]["/mcp/t"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body["properties"]["edit"] == {"$ref": "#/components/schemas/t.Edit"} and "$defs" not in body
    assert doc["components"]["schemas"]["t.Edit"]["properties"]["n"] == {"$ref": "#/components/schemas/t.N"}

"""The generated reference at GET /mcp/tools, through the real HTTP server (seed 001).

JSON lists every registered tool with its full schema; the HTML page is public, never holds the
token, and nothing on it runs a tool from a GET.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from mcp_server_ide import registry
from mcp_server_ide.runner import ToolRunner, enabled_specs


def local_runner() -> ToolRunner:
    from mcp_server_ide.server import build_server
    from mcp_server_ide.workspace import Workspace

    _, runner = build_server(lambda ctx: Workspace.open(Path.cwd()))
    return runner


def test_json_lists_every_tool_with_full_schema(http_server: Any, ws_path: Path) -> None:
    server = http_server(ws_path)
    answer = httpx.get(server.url + "/mcp/tools", headers={"Accept": "application/json"}, timeout=30)
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/json")
    ref = answer.json()
    assert httpx.get(server.url + "/mcp/tools?format=json", timeout=30).json() == ref

    runner = local_runner()
    registry.load_builtin_tools()
    assert {t["name"] for t in ref["tools"]} == {s.name for s in enabled_specs()} == set(runner.specs)
    listed = {t["name"]: t for t in httpx.get(server.url + "/mcp/list_tools", timeout=30).json()}
    assert set(listed) == {t["name"] for t in ref["tools"]}

    for tool in ref["tools"]:
        name = tool["name"]
        spec = runner.specs[name]
        assert tool["title"] == spec.title and tool["category"] == spec.category
        assert tool["categoryTitle"] == registry.CATEGORIES[spec.category]
        assert tool["description"] == spec.description and tool["description"]
        assert tool["inputSchema"] == listed[name]["inputSchema"] == runner.input_schema(name)
        assert tool["outputSchema"] == runner.output_schema(name)
        assert tool["annotations"].get("readOnlyHint", False) == spec.read_only
        assert "title" not in tool["annotations"]  # the tool's own title is the one clients show
        assert tool["errors"] == list(spec.errors)
        assert tool["rest"] == {"method": "POST", "path": f"/mcp/{name}", "contentType": "application/json"}
        properties = tool["inputSchema"].get("properties", {})
        assert [i["name"] for i in tool["inputs"]] == list(properties)
        required = set(tool["inputSchema"].get("required", []))
        for field in tool["inputs"]:
            prop = properties[field["name"]]
            assert field["type"], (name, field)
            assert field["required"] == (field["name"] in required)
            assert field["description"] == prop.get("description", "")
            if "default" in prop:
                assert field["default"] == prop["default"]
            assert "example" in field, (name, field)
        assert isinstance(tool["example"]["arguments"], dict)
        assert set(tool["example"]["arguments"]) >= required, name
        assert "result" in tool["example"]
        if tool["outputSchema"] is None:
            assert tool["result"]["kind"] == "text"
        else:
            assert tool["result"]["kind"] in ("object", "value") and tool["result"]["type"]

    categories = [c["id"] for c in ref["categories"]]
    assert categories == [c for c in registry.CATEGORIES if c in {t["category"] for t in ref["tools"]}]
    assert sum(len(c["tools"]) for c in ref["categories"]) == len(ref["tools"])
    assert ref["auth"]["required"] is False


def test_html_page_is_grouped_and_searchable(http_server: Any, ws_path: Path) -> None:
    server = http_server(ws_path)
    page = httpx.get(server.url + "/mcp/tools", headers={"Accept": "text/html,*/*;q=0.8"}, timeout=30)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "script-src 'self'" in page.headers["content-security-policy"]
    text = page.text
    ref = httpx.get(server.url + "/mcp/tools?format=json", timeout=30).json()
    for tool in ref["tools"]:
        assert f'id="tool-{tool["name"]}"' in text
        assert f'<option value="{tool["name"]}">' in text
    for cat in ref["categories"]:
        assert f'id="cat-{cat["id"]}"' in text
    assert 'id="search"' in text and 'id="playground"' in text
    for asset, kind in (("reference.css", "text/css"), ("reference.js", "text/javascript")):
        answer = httpx.get(f"{server.url}/mcp/static/{asset}", timeout=30)
        assert answer.status_code == 200 and answer.headers["content-type"].startswith(kind)
    assert httpx.get(server.url + "/mcp/static/..%2F..%2Fserver.py", timeout=30).status_code == 404
    assert httpx.get(server.url + "/mcp/static/reference.py", timeout=30).status_code == 404


def test_page_never_holds_the_token_and_runs_nothing_from_get(http_server: Any, ws_path: Path) -> None:
    token = "s3cret-token-for-the-reference-test"
    server = http_server(ws_path, "--token", token)
    page = httpx.get(server.url + "/mcp/tools", timeout=30)
    assert page.status_code == 200  # public: it describes tools, it runs none
    assert (
        token not in page.text and 'data-auth-required="true"' in page.text and 'id="pg-token"' in page.text
    )
    ref = httpx.get(server.url + "/mcp/tools?format=json", timeout=30).json()
    assert ref["auth"] == {"required": True, "scheme": "Bearer"} and token not in str(ref)

    (ws_path / "a.txt").write_text("hello\n")
    # A GET never runs a tool, with or without the token; a form post from a web page fails.
    auth = {"Authorization": f"Bearer {token}"}
    assert (
        httpx.get(
            server.url + "/mcp/get_file_text_by_path?pathInProject=a.txt", headers=auth, timeout=30
        ).status_code
        == 405
    )
    form = httpx.post(
        server.url + "/mcp/create_new_file_with_text",
        data={"pathInProject": "b.txt", "text": "x"},
        headers=auth,
        timeout=30,
    )
    assert form.status_code == 415 and not (ws_path / "b.txt").exists()
    # The playground's own call: POST with JSON and the token the person typed.
    assert (
        httpx.post(
            server.url + "/mcp/get_file_text_by_path", json={"pathInProject": "a.txt"}, timeout=30
        ).status_code
        == 401
    )
    ok = httpx.post(
        server.url + "/mcp/get_file_text_by_path", json={"pathInProject": "a.txt"}, headers=auth, timeout=30
    )
    assert ok.status_code == 200 and ok.json()["status"]["content"] == "hello\n"
    # POST to the reference path is not a tool call either.
    assert httpx.post(server.url + "/mcp/tools", json={}, headers=auth, timeout=30).status_code == 404

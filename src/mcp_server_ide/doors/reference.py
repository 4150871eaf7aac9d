"""The generated reference of every tool, at ``GET /mcp/tools`` (seed 001), with a live playground.

Everything on it comes from the tool runner (the registry's specs and the SDK tools built from them):
name, title, category, description, annotations, every input field (type, required, default,
description, example), the result shape (output schema) with an example, and the errors a tool can
answer. No tool is named here.

- ``GET /mcp/tools?format=json`` (or ``Accept: application/json``): the reference as JSON.
- ``GET /mcp/tools``: a readable, searchable HTML page grouped by category, with a playground that
  builds a form from a tool's input schema (or takes raw JSON) and calls ``POST /mcp/{tool}``. The
  page never holds the server's token: when one is set, the playground asks for it. No tool runs
  from a GET.
- ``GET /mcp/static/<file>``: the page's own CSS and JS (package data; no CDN).
"""

from __future__ import annotations

import html
import json
import re
from importlib import resources
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from .. import __version__, registry

STATIC_TYPES = {
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
}
PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'none'; base-uri 'none'; frame-ancestors 'none'"
)
LONG_TEXT = re.compile(r"(text|content|code|body|message|script|patch|diff|query)$", re.IGNORECASE)


# ----------------------------------------------------------------------------- the data


def reference_json(runner: Any, *, auth_required: bool = False) -> dict[str, Any]:
    """The reference of every tool the runner serves, as a JSON-ready dict."""
    tools = [_tool_entry(runner, spec) for spec in runner.specs.values()]
    order = {c: i for i, c in enumerate(registry.CATEGORIES)}
    tools.sort(key=lambda t: (order.get(t["category"], len(order)), t["_order"]))
    for t in tools:
        del t["_order"]
    categories = []
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


def _tool_entry(runner: Any, spec: Any) -> dict[str, Any]:
    sdk = runner.sdk[spec.name]
    schema = runner.input_schema(spec.name)
    output = runner.output_schema(spec.name)
    annotations = sdk.annotations.model_dump(by_alias=True, exclude_none=True) if sdk.annotations else {}
    example_args = dict(spec.example) if spec.example is not None else _example_arguments(schema)
    entry: dict[str, Any] = {
        "name": spec.name,
        "title": spec.title,
        "category": spec.category,
        "categoryTitle": registry.CATEGORIES.get(spec.category, spec.category),
        "description": spec.description,
        "annotations": annotations,
        "readOnly": bool(annotations.get("readOnlyHint", spec.read_only)),
        "destructive": bool(annotations.get("destructiveHint", False)),
        "inputSchema": schema,
        "inputs": _inputs(schema, spec.example or {}),
        "outputSchema": output,
        "result": _result_shape(output, spec),
        "example": {"arguments": example_args, "result": _example_result(output, spec)},
        "errors": list(spec.errors),
        "rest": {"method": "POST", "path": f"/mcp/{spec.name}", "contentType": "application/json"},
        "_order": list(runner.specs).index(spec.name),
    }
    if spec.requires:
        entry["requires"] = list(spec.requires)
    if sdk.meta:
        entry["meta"] = sdk.meta
    return entry


def _inputs(schema: dict[str, Any], example: dict[str, Any]) -> list[dict[str, Any]]:
    defs = schema.get("$defs", {})
    required = set(schema.get("required", []))
    out = []
    for name, prop in schema.get("properties", {}).items():
        item: dict[str, Any] = {
            "name": name,
            "type": type_text(prop, defs),
            "required": name in required,
            "description": prop.get("description", ""),
        }
        if "default" in prop:
            item["default"] = prop["default"]
        enum = _enum(prop, defs)
        if enum:
            item["enum"] = enum
        limits = {k: prop[k] for k in ("minimum", "maximum", "minLength", "maxLength") if k in prop}
        if limits:
            item["limits"] = limits
        # Every field has an example: the tool's own, else its default, else one made from its schema.
        item["example"] = example[name] if name in example else example_value(prop, defs, name)
        out.append(item)
    return out


def _result_shape(output: dict[str, Any] | None, spec: Any) -> dict[str, Any]:
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


def _fields(schema: dict[str, Any], defs: dict[str, Any]) -> list[dict[str, Any]]:
    schema = _deref(schema, defs)
    if schema.get("type") == "array":
        schema = _deref(schema.get("items", {}), defs)
    required = set(schema.get("required", []))
    return [
        {
            "name": name,
            "type": type_text(prop, defs),
            "required": name in required,
            **({"description": prop["description"]} if prop.get("description") else {}),
        }
        for name, prop in schema.get("properties", {}).items()
    ]


def _example_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    defs = schema.get("$defs", {})
    return {
        name: example_value(prop, defs, name)
        for name, prop in schema.get("properties", {}).items()
        if name in set(schema.get("required", []))
    }


def _example_result(output: dict[str, Any] | None, spec: Any) -> Any:
    if output is None:
        return "ok" if "ok" in spec.description.lower() else "…text…"
    defs = output.get("$defs", {})
    if set(output.get("properties", {})) == {"result"}:
        return example_value(output["properties"]["result"], defs, "result")
    return example_value(output, defs, "result")


# ----------------------------------------------------------------------------- schema helpers


def _deref(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
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


def _enum(schema: dict[str, Any], defs: dict[str, Any]) -> list[Any] | None:
    options, _ = _non_null(schema)
    if len(options) == 1:
        target = _deref(options[0], defs)
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
    schema = _deref(options[0], defs) if options else {}
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


# ----------------------------------------------------------------------------- the page


def reference_html(runner: Any, *, auth_required: bool = False) -> str:
    data = reference_json(runner, auth_required=auth_required)
    by_name = {t["name"]: t for t in data["tools"]}
    nav, sections, options = [], [], []
    for cat in data["categories"]:
        tools = [by_name[n] for n in cat["tools"]]
        cid = html.escape(cat["id"])
        nav.append(
            f'<li class="nav-cat" data-category="{cid}"><a class="nav-cat-link" href="#cat-{cid}">'
            f'{html.escape(cat["title"])}<span class="count">{len(tools)}</span></a><ul>'
            + "".join(
                f'<li data-tool="{html.escape(t["name"])}"><a href="#tool-{html.escape(t["name"])}">'
                f"{html.escape(t['name'])}</a></li>"
                for t in tools
            )
            + "</ul></li>"
        )
        options.append(
            f'<optgroup label="{html.escape(cat["title"])}">'
            + "".join(
                f'<option value="{html.escape(t["name"])}">{html.escape(t["name"])}</option>' for t in tools
            )
            + "</optgroup>"
        )
        sections.append(
            f'<section class="category" id="cat-{cid}" data-category="{cid}">'
            f'<h2 class="cat-title">{html.escape(cat["title"])} <span class="count">{len(tools)} tools</span></h2>'
            + "".join(_tool_card(t) for t in tools)
            + "</section>"
        )
    total = len(data["tools"])
    statuses = html.escape(", ".join(str(code) for code in sorted(set(registry.HTTP_STATUS.values()))))
    token_field = (
        '<label class="pg-token"><span>Bearer token</span>'
        '<input id="pg-token" type="password" autocomplete="off" spellcheck="false" '
        'placeholder="This server needs its token to run tools"></label>'
    )
    payload = json.dumps(data, ensure_ascii=False).replace("</", "<\\/").replace("<!--", "<\\!--")
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Tool reference · mcp-server-ide {html.escape(__version__)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/mcp/static/reference.css">
<script type="module" src="/mcp/static/reference.js"></script>
</head>
<body data-auth-required="{str(auth_required).lower()}">
<header class="topbar">
  <div class="brand"><span class="logo" aria-hidden="true">⌘</span><span>mcp-server-ide</span>
  <span class="version">v{html.escape(__version__)}</span></div>
  <div class="search-box">
    <input id="search" type="search" placeholder="Search {total} tools by name, category or description" aria-label="Search tools" autocomplete="off" spellcheck="false">
    <kbd>/</kbd>
  </div>
  <span id="match-count" class="match-count" aria-live="polite">{total} tools</span>
  <nav class="toplinks"><a href="/mcp/tools?format=json">JSON</a><a href="#playground">Playground</a></nav>
</header>
<div class="layout">
<nav class="toc" aria-label="Tools by category"><ul>{"".join(nav)}</ul></nav>
<main id="tools">
<section class="intro">
  <h1>Tool reference</h1>
  <p>Every tool this server offers, generated from its own definitions: what it does, each input field,
  the result it returns and the errors it can answer. Call them over MCP (<code>tools/call</code> on
  <code>/mcp</code>) or through the REST door: <code>POST /mcp/&lt;tool&gt;</code> with the arguments as a JSON
  object. This page as JSON: <a href="/mcp/tools?format=json"><code>/mcp/tools?format=json</code></a>.</p>
  <p>A call that fails comes back as a normal result with <code>isError: true</code> (on REST:
  <code>{{"status": null, "error": "…"}}</code> with HTTP {statuses}) and a message naming the rule it broke
  and how to fix the call.</p>
  <ul class="legend">
    <li><span class="badge read">read-only</span> never changes the workspace</li>
    <li><span class="badge write">writes</span> changes files or state</li>
    <li><span class="badge danger">destructive</span> may overwrite or remove work (the change journal can undo it)</li>
  </ul>
</section>
<p id="no-match" class="no-match" hidden>No tool matches your search.</p>
{"".join(sections)}
</main>
<aside class="playground" id="playground" aria-label="Playground">
  <div class="pg-head"><h2>Playground</h2><span class="pg-sub">Runs against this server</span></div>
  <label class="pg-pick"><span>Tool</span><select id="pg-tool">{"".join(options)}</select></label>
  <p id="pg-desc" class="pg-desc"></p>
  {token_field if auth_required else ""}
  <div class="pg-tabs" role="tablist">
    <button type="button" role="tab" id="pg-tab-form" aria-selected="true">Form</button>
    <button type="button" role="tab" id="pg-tab-json" aria-selected="false">JSON</button>
  </div>
  <div id="pg-form" class="pg-form"></div>
  <textarea id="pg-json" class="pg-json" spellcheck="false" hidden aria-label="Arguments as JSON"></textarea>
  <div class="pg-actions">
    <button type="button" id="pg-run" class="run">Call tool</button>
    <button type="button" id="pg-reset" class="ghost">Example</button>
    <span id="pg-warn" class="pg-warn" hidden>changes the workspace</span>
  </div>
  <div id="pg-status" class="pg-status" aria-live="polite"></div>
  <pre id="pg-result" class="pg-result" hidden></pre>
  <noscript><p>The playground needs JavaScript. Without it, call <code>POST /mcp/&lt;tool&gt;</code> yourself.</p></noscript>
</aside>
</div>
<script type="application/json" id="reference-data">{payload}</script>
</body>
</html>
"""


def _tool_card(t: dict[str, Any]) -> str:
    name = html.escape(t["name"])
    badges = []
    if t["readOnly"]:
        badges.append('<span class="badge read">read-only</span>')
    else:
        badges.append('<span class="badge write">writes</span>')
    if t["destructive"]:
        badges.append('<span class="badge danger">destructive</span>')
    if t["annotations"].get("idempotentHint") and not t["readOnly"]:
        badges.append('<span class="badge plain">idempotent</span>')
    if t["annotations"].get("openWorldHint"):
        badges.append('<span class="badge plain">open world</span>')
    if t.get("meta", {}).get("ui"):
        badges.append(
            '<span class="badge plain" title="Hosts that support MCP Apps show the review view">app</span>'
        )
    search = " ".join(
        [
            t["name"],
            t["title"],
            t["categoryTitle"],
            t["category"],
            t["description"],
            *(i["name"] for i in t["inputs"]),
        ]
    ).lower()
    rows = "".join(_input_row(i) for i in t["inputs"])
    params = (
        '<table class="params"><thead><tr><th>Name</th><th>Type</th><th>Description</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>"
        if rows
        else '<p class="none">None: call it with <code>{}</code>.</p>'
    )
    result = t["result"]
    if result["kind"] == "text":
        result_html = f"<p>{html.escape(result['description'])}</p>"
    else:
        fields = "".join(
            f'<li><code>{html.escape(f["name"])}</code> <span class="type">{html.escape(f["type"])}</span>'
            + ("" if f["required"] else ' <span class="opt">optional</span>')
            + (f" — {_inline(f['description'])}" if f.get("description") else "")
            + "</li>"
            for f in result["fields"]
        )
        result_html = f'<p>Returns <span class="type">{html.escape(result["type"])}</span>.</p>' + (
            f'<ul class="fields">{fields}</ul>' if fields else ""
        )
    errors = "".join(f"<li>{_inline(e)}</li>" for e in t["errors"])
    example_call = json.dumps(t["example"]["arguments"], indent=2, ensure_ascii=False)
    example_result = json.dumps(t["example"]["result"], indent=2, ensure_ascii=False)
    schema_text = json.dumps(t["outputSchema"], indent=2, ensure_ascii=False) if t["outputSchema"] else ""
    input_schema = json.dumps(t["inputSchema"], indent=2, ensure_ascii=False)
    return f"""<article class="tool" id="tool-{name}" data-name="{name}" data-search="{html.escape(search)}">
<header class="tool-head">
  <h3><a class="anchor" href="#tool-{name}">{name}</a></h3>
  <span class="tool-title">{html.escape(t["title"])}</span>
  <span class="badges">{"".join(badges)}</span>
  <button type="button" class="try" data-try="{name}">Try it</button>
</header>
<div class="desc">{_paragraphs(t["description"])}</div>
<h4>Parameters</h4>
{params}
<div class="examples">
  <div><h4>Example arguments</h4><pre class="code"><code>{html.escape(example_call)}</code></pre>
  <p class="rest-line"><code>POST /mcp/{name}</code> · <code>Content-Type: application/json</code></p></div>
  <div><h4>Example result</h4><pre class="code"><code>{html.escape(example_result)}</code></pre></div>
</div>
<h4>Result</h4>
{result_html}
{f'<h4>Errors it can answer</h4><ul class="errors">{errors}</ul>' if errors else ""}
<details class="schemas"><summary>JSON schemas</summary>
<h5>Input</h5><pre class="code"><code>{html.escape(input_schema)}</code></pre>
{f'<h5>Output</h5><pre class="code"><code>{html.escape(schema_text)}</code></pre>' if schema_text else ""}
</details>
</article>"""


def _input_row(i: dict[str, Any]) -> str:
    bits = []
    if "default" in i:
        bits.append(f'<span class="meta">default <code>{html.escape(json.dumps(i["default"]))}</code></span>')
    if "limits" in i:
        text = ", ".join(f"{k} {v}" for k, v in i["limits"].items())
        bits.append(f'<span class="meta">{html.escape(text)}</span>')
    if "example" in i and not ("default" in i and i["example"] == i["default"]):
        shown = json.dumps(i["example"], ensure_ascii=False)
        if len(shown) > 120:
            shown = shown[:117] + "…"
        bits.append(f'<span class="meta">e.g. <code>{html.escape(shown)}</code></span>')
    req = '<span class="req">required</span>' if i["required"] else '<span class="opt">optional</span>'
    return (
        f'<tr><td class="pname"><code>{html.escape(i["name"])}</code>{req}</td>'
        f'<td class="ptype">{html.escape(i["type"])}</td>'
        f'<td>{_inline(i["description"])}<div class="pmeta">{"".join(bits)}</div></td></tr>'
    )


_CODE = re.compile(r"`([^`]+)`")


def _inline(text: str) -> str:
    """Escape text and render `code` spans."""
    out, last = [], 0
    for m in _CODE.finditer(text):
        out.append(html.escape(text[last : m.start()]))
        out.append(f"<code>{html.escape(m.group(1))}</code>")
        last = m.end()
    out.append(html.escape(text[last:]))
    return "".join(out)


def _paragraphs(text: str) -> str:
    paras = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    return "".join(f"<p>{_inline(' '.join(p.split()))}</p>" for p in paras)


# ----------------------------------------------------------------------------- routes


def _wants_json(request: Request) -> bool:
    fmt = request.query_params.get("format", "").lower()
    if fmt in ("json", "html"):
        return fmt == "json"
    accept = request.headers.get("accept", "").lower()
    json_q = _quality(accept, "application/json")
    html_q = _quality(accept, "text/html")
    return json_q > 0 and json_q >= html_q


def _quality(accept: str, media: str) -> float:
    for part in accept.split(","):
        fields = [f.strip() for f in part.split(";")]
        if fields[0] == media:
            for f in fields[1:]:
                if f.startswith("q="):
                    try:
                        return float(f[2:])
                    except ValueError:
                        return 0.0
            return 1.0
    return 0.0


def _static_file(name: str) -> bytes | None:
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name) or name.startswith("."):
        return None
    try:
        return resources.files(__package__).joinpath("static", name).read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def routes(runner: Any, settings: Any = None) -> list[Route]:
    """``GET /mcp/tools`` (JSON or HTML) and ``GET /mcp/static/<file>``, for the HTTP door to mount."""
    auth_required = bool(getattr(settings, "token", None))
    cache: dict[str, Any] = {}

    async def tools_page(request: Request) -> Response:
        if _wants_json(request):
            if "json" not in cache:
                cache["json"] = reference_json(runner, auth_required=auth_required)
            return JSONResponse(cache["json"], headers={"Vary": "Accept", "Cache-Control": "no-cache"})
        if "html" not in cache:
            cache["html"] = reference_html(runner, auth_required=auth_required)
        return HTMLResponse(
            cache["html"],
            headers={
                "Vary": "Accept",
                "Cache-Control": "no-cache",
                "Content-Security-Policy": PAGE_CSP,
                "X-Content-Type-Options": "nosniff",
                "Referrer-Policy": "no-referrer",
            },
        )

    async def static(request: Request) -> Response:
        name = request.path_params["file"]
        data = _static_file(name)
        suffix = "." + name.rsplit(".", 1)[-1] if "." in name else ""
        if data is None or suffix not in STATIC_TYPES:
            return JSONResponse(
                {"status": None, "error": f"not found: no static file {name!r}"}, status_code=404
            )
        return Response(
            data,
            media_type=STATIC_TYPES[suffix],
            headers={"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"},
        )

    return [
        Route("/mcp/tools", tools_page, methods=["GET"]),
        Route("/mcp/static/{file:path}", static, methods=["GET"]),
    ]

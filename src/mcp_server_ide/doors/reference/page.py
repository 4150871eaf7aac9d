"""The reference as an HTML page: tools grouped by category, searchable, each with its parameters,
examples, result, errors and schemas, beside a playground that calls ``POST /mcp/{tool}``.

The page holds the reference JSON (:mod:`.model`) for its script (``static/reference.js``, which
builds the playground's forms from it) and never the server's token: when one is set, the playground
asks for it.
"""

from __future__ import annotations

import html
import json
import re
from typing import TYPE_CHECKING

from ... import __version__, registry
from .model import InputField, ToolEntry, reference_json

if TYPE_CHECKING:
    from ...runner import ToolRunner


def reference_html(runner: ToolRunner, *, auth_required: bool = False) -> str:
    """The page for the tools the runner serves (its data is :func:`.model.reference_json`)."""
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
<link rel="stylesheet" href="static/reference.css">
<script type="module" src="static/reference.js"></script>
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
  <nav class="toplinks"><a href="tools?format=json">JSON</a><a href="#playground">Playground</a></nav>
</header>
<div class="layout">
<nav class="toc" aria-label="Tools by category"><ul>{"".join(nav)}</ul></nav>
<main id="tools">
<section class="intro">
  <h1>Tool reference</h1>
  <p>Every tool this server offers, generated from its own definitions: what it does, each input field,
  the result it returns and the errors it can answer. Call them over MCP (<code>tools/call</code> on
  <code>/mcp</code>) or through the REST door: <code>POST /mcp/&lt;tool&gt;</code> with the arguments as a JSON
  object. This page as JSON: <a href="tools?format=json"><code>/mcp/tools?format=json</code></a>.</p>
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


def _tool_card(t: ToolEntry) -> str:
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
            + (f" — {_inline(f.get('description', ''))}" if f.get("description") else "")
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


def _input_row(i: InputField) -> str:
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

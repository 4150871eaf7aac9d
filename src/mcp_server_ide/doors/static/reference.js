// The tool reference page: search, and a playground that calls POST /mcp/<tool> on this server.
// No dependencies. The reference data is embedded in the page (#reference-data); the page never
// holds the server's token: when the server has one, the person types it (kept for this tab only).

const data = JSON.parse(document.getElementById("reference-data").textContent);
const tools = new Map(data.tools.map((t) => [t.name, t]));
const $ = (id) => document.getElementById(id);

// ------------------------------------------------------------------ search

const search = $("search");
const cards = [...document.querySelectorAll("article.tool")];
const sections = [...document.querySelectorAll("section.category")];
const navItems = [...document.querySelectorAll(".toc li[data-tool]")];
const navCats = [...document.querySelectorAll(".toc .nav-cat")];

function applySearch() {
  const terms = search.value.toLowerCase().split(/\s+/).filter(Boolean);
  let shown = 0;
  const visible = new Set();
  for (const card of cards) {
    const hay = card.dataset.search;
    const ok = terms.every((t) => hay.includes(t) || card.dataset.name.includes(t));
    card.classList.toggle("hidden-by-search", !ok);
    if (ok) {
      shown += 1;
      visible.add(card.dataset.name);
    }
  }
  for (const section of sections) {
    const any = section.querySelector("article.tool:not(.hidden-by-search)");
    section.classList.toggle("hidden-by-search", !any);
  }
  for (const li of navItems) li.classList.toggle("hidden-by-search", !visible.has(li.dataset.tool));
  for (const cat of navCats) {
    cat.classList.toggle("hidden-by-search", !cat.querySelector("li[data-tool]:not(.hidden-by-search)"));
  }
  $("match-count").textContent = terms.length ? `${shown} of ${cards.length} tools` : `${cards.length} tools`;
  $("no-match").hidden = shown !== 0;
}

search.addEventListener("input", applySearch);
document.addEventListener("keydown", (event) => {
  const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement?.tagName ?? "");
  if (event.key === "/" && !typing) {
    event.preventDefault();
    search.focus();
    search.select();
  } else if (event.key === "Escape" && document.activeElement === search) {
    search.value = "";
    applySearch();
  }
});

// ------------------------------------------------------------------ schema helpers

function deref(schema, defs) {
  let s = schema || {};
  for (let i = 0; i < 20 && s.$ref; i += 1) s = defs[s.$ref.split("/").pop()] || {};
  return s;
}

function unwrap(schema, defs) {
  // anyOf [X, null] -> X (nullable); anything else stays as it is.
  const options = schema.anyOf || schema.oneOf;
  if (!options) return { schema: deref(schema, defs), nullable: false };
  const rest = options.filter((o) => o.type !== "null");
  if (rest.length === 1) return { schema: deref(rest[0], defs), nullable: rest.length !== options.length };
  return { schema: { anyOf: rest }, nullable: rest.length !== options.length };
}

function fieldKind(name, schema, defs) {
  const s = unwrap(schema, defs).schema;
  if (s.enum) return "enum";
  if (s.type === "boolean") return "boolean";
  if (s.type === "integer" || s.type === "number") return "number";
  if (s.type === "string") return /(text|content|code|body|message|script|patch|diff|query)$/i.test(name) ? "longtext" : "text";
  if (s.type === "array") {
    const item = deref(s.items, defs);
    if (item.type === "string") return "lines";
  }
  return "json";
}

// ------------------------------------------------------------------ the playground

const picker = $("pg-tool");
const formBox = $("pg-form");
const jsonBox = $("pg-json");
const result = $("pg-result");
const status = $("pg-status");
const runButton = $("pg-run");
const tokenInput = $("pg-token");
let mode = "form";
let current = null;

if (tokenInput) tokenInput.value = sessionStorage.getItem("mcp-ide-token") || "";
tokenInput?.addEventListener("input", () => sessionStorage.setItem("mcp-ide-token", tokenInput.value));

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

function buildForm(tool, values) {
  formBox.replaceChildren();
  const schema = tool.inputSchema;
  const defs = schema.$defs || {};
  const required = new Set(schema.required || []);
  const props = Object.entries(schema.properties || {});
  if (!props.length) {
    formBox.append(el("p", { class: "empty", text: "This tool takes no parameters." }));
    return;
  }
  const info = new Map(tool.inputs.map((i) => [i.name, i]));
  for (const [name, prop] of props) {
    const kind = fieldKind(name, prop, defs);
    const meta = info.get(name) || {};
    const id = `pg-f-${name}`;
    const value = values[name];
    const wrap = el("div", { class: `field${kind === "boolean" ? " check" : ""}`, "data-name": name, "data-kind": kind });
    const head = el(
      "span",
      { class: "fname" },
      el("code", { text: name }),
      el("span", { class: "ftype", text: meta.type || "" }),
      required.has(name) ? el("span", { class: "freq", text: "*", title: "required" }) : null,
    );
    let input;
    if (kind === "boolean") {
      const fallback = prop.default ?? false;
      input = el("input", { type: "checkbox", id, name });
      input.checked = value !== undefined ? Boolean(value) : Boolean(fallback);
      input.dataset.default = String(Boolean(fallback));
      wrap.append(el("label", { for: id }, input, head));
    } else {
      const label = el("label", { for: id }, head);
      if (kind === "enum") {
        input = el("select", { id, name });
        const options = unwrap(prop, defs).schema.enum;
        if (!required.has(name)) input.append(el("option", { value: "", text: "(default)" }));
        for (const option of options) input.append(el("option", { value: JSON.stringify(option), text: String(option) }));
        if (value !== undefined) input.value = JSON.stringify(value);
      } else if (kind === "number") {
        input = el("input", { type: "number", id, name, step: unwrap(prop, defs).schema.type === "integer" ? "1" : "any" });
        if (value !== undefined && value !== null) input.value = String(value);
        if (prop.default !== undefined && prop.default !== null) input.placeholder = `default ${prop.default}`;
      } else if (kind === "longtext") {
        input = el("textarea", { id, name, rows: "2", spellcheck: "false" });
        input.value = value ?? "";
      } else if (kind === "lines") {
        input = el("textarea", { id, name, rows: "2", spellcheck: "false", placeholder: "one per line" });
        input.value = Array.isArray(value) ? value.join("\n") : "";
      } else if (kind === "json") {
        input = el("textarea", { id, name, rows: "3", spellcheck: "false", placeholder: "JSON" });
        input.value = value === undefined ? "" : JSON.stringify(value, null, 2);
      } else {
        input = el("input", { type: "text", id, name, spellcheck: "false", autocomplete: "off" });
        input.value = value ?? "";
        if (prop.default !== undefined && prop.default !== null) input.placeholder = `default ${JSON.stringify(prop.default)}`;
      }
      wrap.append(label, input);
    }
    if (meta.description) wrap.append(el("div", { class: "fhelp", title: meta.description }, ...withCode(meta.description)));
    formBox.append(wrap);
  }
}

function readForm(tool) {
  const args = {};
  const problems = [];
  for (const wrap of formBox.querySelectorAll(".field")) {
    wrap.classList.remove("invalid");
    const name = wrap.dataset.name;
    const kind = wrap.dataset.kind;
    const input = wrap.querySelector("input, select, textarea");
    if (kind === "boolean") {
      if (String(input.checked) !== input.dataset.default || (tool.inputSchema.required || []).includes(name)) {
        args[name] = input.checked;
      }
      continue;
    }
    const raw = input.value;
    if (raw === "") continue;
    try {
      if (kind === "enum") args[name] = JSON.parse(raw);
      else if (kind === "number") args[name] = Number(raw);
      else if (kind === "lines") args[name] = raw.split("\n").map((s) => s.trim()).filter(Boolean);
      else if (kind === "json") args[name] = JSON.parse(raw);
      else args[name] = raw;
    } catch {
      wrap.classList.add("invalid");
      problems.push(`${name}: not valid JSON`);
    }
  }
  return { args, problems };
}

function setMode(next) {
  if (next === mode) return;
  if (next === "json") {
    const { args } = readForm(current);
    jsonBox.value = JSON.stringify(args, null, 2);
  } else {
    let args;
    try {
      args = JSON.parse(jsonBox.value || "{}");
    } catch (error) {
      showError(`The JSON is not valid: ${error.message}`);
      return;
    }
    buildForm(current, args);
  }
  mode = next;
  $("pg-tab-form").setAttribute("aria-selected", String(mode === "form"));
  $("pg-tab-json").setAttribute("aria-selected", String(mode === "json"));
  formBox.hidden = mode !== "form";
  jsonBox.hidden = mode !== "json";
}

function selectTool(name, { scroll = false } = {}) {
  current = tools.get(name);
  if (!current) return;
  picker.value = name;
  $("pg-desc").replaceChildren(...withCode(firstSentence(current.description)));
  $("pg-warn").hidden = current.readOnly;
  resetArguments();
  result.hidden = true;
  status.replaceChildren();
  if (scroll) $("playground").scrollIntoView({ behavior: "smooth", block: "start" });
}

function resetArguments() {
  const example = current.example?.arguments || {};
  buildForm(current, example);
  jsonBox.value = JSON.stringify(example, null, 2);
}

function withCode(text) {
  // `code` spans as <code> elements (built as nodes: nothing is parsed as HTML).
  return text.split("`").map((part, i) => (i % 2 ? el("code", { text: part }) : document.createTextNode(part)));
}

function firstSentence(text) {
  const para = text.split(/\n\s*\n/)[0].replace(/\s+/g, " ");
  const match = para.match(/^(.+?[.!?])(\s+[A-Z`]|$)/);
  return match ? match[1] : para;
}

function highlight(json) {
  const escaped = json.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  return escaped.replace(
    /("(?:\\u[a-fA-F0-9]{4}|\\[^u]|[^\\"])*"(\s*:)?|\b(?:true|false|null)\b|-?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)/g,
    (match) => {
      let cls = "j-num";
      if (match.startsWith('"')) cls = match.trimEnd().endsWith(":") ? "j-key" : "j-str";
      else if (/true|false|null/.test(match)) cls = "j-lit";
      return `<span class="${cls}">${match}</span>`;
    },
  );
}

function showStatus(ok, text, ms) {
  status.replaceChildren(
    el("span", { class: `pill ${ok ? "ok" : "err"}`, text }),
    ms !== undefined ? el("span", { text: `${ms} ms` }) : null,
  );
}

function showError(message) {
  result.hidden = false;
  result.className = "pg-result error";
  result.textContent = message;
}

async function run() {
  if (!current) return;
  let args;
  if (mode === "json") {
    try {
      args = JSON.parse(jsonBox.value || "{}");
    } catch (error) {
      showStatus(false, "invalid JSON");
      showError(`The arguments are not valid JSON: ${error.message}`);
      return;
    }
  } else {
    const read = readForm(current);
    if (read.problems.length) {
      showStatus(false, "invalid input");
      showError(read.problems.join("\n"));
      return;
    }
    args = read.args;
  }
  const headers = { "Content-Type": "application/json", Accept: "application/json" };
  const token = tokenInput?.value.trim();
  if (token) headers.Authorization = `Bearer ${token}`;
  runButton.disabled = true;
  status.replaceChildren(el("span", { text: `Calling ${current.name}…` }));
  const started = performance.now();
  try {
    const response = await fetch(`./${encodeURIComponent(current.name)}`, {
      method: "POST",
      headers,
      body: JSON.stringify(args),
      credentials: "omit",
      cache: "no-store",
    });
    const ms = Math.round(performance.now() - started);
    let body;
    try {
      body = await response.json();
    } catch {
      body = { status: null, error: `HTTP ${response.status}: the answer was not JSON` };
    }
    if (response.ok && body.error == null) {
      showStatus(true, `${response.status} OK`, ms);
      result.hidden = false;
      result.className = "pg-result";
      result.dataset.state = "ok";
      const value = body.status;
      if (typeof value === "string") result.textContent = value;
      else result.innerHTML = highlight(JSON.stringify(value, null, 2));
    } else {
      showStatus(false, `${response.status} error`, ms);
      showError(body.error || `HTTP ${response.status}`);
      result.dataset.state = "error";
      if (response.status === 401 && !tokenInput) {
        showError(`${body.error}\n\nReload the page after starting the server with a token, or pass it here.`);
      }
      if (response.status === 401) tokenInput?.focus();
    }
  } catch (error) {
    showStatus(false, "network error");
    showError(`The request failed: ${error.message}`);
    result.dataset.state = "error";
  } finally {
    runButton.disabled = false;
    if (!result.hidden) result.scrollIntoView({ block: "nearest", behavior: "smooth" });
  }
}

picker.addEventListener("change", () => selectTool(picker.value));
runButton.addEventListener("click", run);
$("pg-reset").addEventListener("click", resetArguments);
$("pg-tab-form").addEventListener("click", () => setMode("form"));
$("pg-tab-json").addEventListener("click", () => setMode("json"));
for (const button of document.querySelectorAll("button[data-try]")) {
  button.addEventListener("click", () => {
    if (mode === "json") setMode("form");
    selectTool(button.dataset.try, { scroll: window.matchMedia("(max-width: 1320px)").matches });
    formBox.querySelector("input, textarea, select")?.focus({ preventScroll: true });
  });
}
document.addEventListener("keydown", (event) => {
  if ((event.ctrlKey || event.metaKey) && event.key === "Enter" && $("playground").contains(document.activeElement)) {
    event.preventDefault();
    run();
  }
});

const fromHash = location.hash.startsWith("#tool-") ? location.hash.slice(6) : null;
const firstPick = data.tools.find((t) => t.readOnly && t.inputs.length) || data.tools[0];
selectTool(tools.has(fromHash) ? fromHash : firstPick.name);
document.body.dataset.ready = "true";

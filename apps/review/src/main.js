// The review view (MCP App): the changes since a checkpoint, file by file, with Keep / Undo.
// It talks to the server only through the host (App.callServerTool): diff_since_checkpoint,
// keep_changes and restore_checkpoint, the server's change-journal tools.
import {
  App,
  PostMessageTransport,
  applyDocumentTheme,
  applyHostFonts,
  applyHostStyleVariables,
} from "@modelcontextprotocol/ext-apps";

const $ = (id) => document.getElementById(id);
const app = new App({ name: "mcp-server-ide-review", version: "0.1.0" }, {}, { autoResize: true });

let checkpoint = null; // null: the newest checkpoint (or the journal's start)
let lastDiff = null;
let busy = false;
let loads = 0;

class ToolFailed extends Error {}

function textOf(result) {
  return (result.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

async function callTool(name, args) {
  const result = await app.callServerTool({ name, arguments: args });
  if (result.isError) throw new ToolFailed(textOf(result) || `${name} failed`);
  if (result.structuredContent) return result.structuredContent;
  try {
    return JSON.parse(textOf(result));
  } catch {
    return {};
  }
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children) if (child !== null && child !== undefined && child !== false) node.append(child);
  return node;
}

function notice(kind, message, action) {
  const box = $("notice");
  box.hidden = !message;
  box.className = `notice ${kind}`;
  box.replaceChildren(el("span", { text: message }), action || null);
}

function checkpointLabel(cp) {
  if (!cp || cp.name === "start") return ["Changes since the journal started", null];
  return ["Changes since checkpoint ", cp.name];
}

function renderDiff(text) {
  // A unified diff with old/new line numbers; the ---/+++ header lines are left out (the file's row names it).
  const pre = el("div", { class: "diff", role: "table", "aria-label": "Changes" });
  let oldLine = 0;
  let newLine = 0;
  for (const line of text.replace(/\n$/, "").split("\n")) {
    if (line.startsWith("+++ ") || line.startsWith("--- ")) continue;
    let kind = "";
    let a = "";
    let b = "";
    const hunk = line.match(/^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/);
    if (hunk) {
      kind = "hunk";
      oldLine = Number(hunk[1]);
      newLine = Number(hunk[2]);
    } else if (line.startsWith("+")) {
      kind = "add";
      b = newLine++;
    } else if (line.startsWith("-")) {
      kind = "del";
      a = oldLine++;
    } else if (line.startsWith("\\") || line.startsWith("(") || line.startsWith("Binary") || line.startsWith("File ")) {
      kind = "meta";
    } else {
      a = oldLine++;
      b = newLine++;
    }
    pre.append(
      el(
        "div",
        { class: `line ${kind}`, role: "row" },
        el("span", { class: "ln", text: String(a) }),
        el("span", { class: "ln", text: String(b) }),
        el("span", { class: "code", text: line || " " }),
      ),
    );
  }
  return pre;
}

function render(diff) {
  lastDiff = diff;
  const files = diff.files || [];
  const [label, name] = checkpointLabel(diff.checkpoint);
  $("title").replaceChildren(label, name ? el("code", { text: name }) : "");
  const adds = files.reduce((n, f) => n + (f.additions || 0), 0);
  const dels = files.reduce((n, f) => n + (f.deletions || 0), 0);
  $("summary").replaceChildren(
    files.length
      ? `${files.length} file${files.length === 1 ? "" : "s"} changed · `
      : "No changes to review",
    ...(files.length ? [el("span", { class: "add", text: `+${adds}` }), " ", el("span", { class: "del", text: `−${dels}` })] : []),
  );
  $("keep-all").disabled = busy || !files.length;
  $("undo-all").disabled = busy || !files.length;
  const list = $("files");
  list.replaceChildren();
  if (!files.length) {
    list.append(
      el(
        "div",
        { class: "empty" },
        el("strong", { text: "Nothing to review" }),
        "Every journaled file is as it was at this checkpoint, or its changes were kept.",
      ),
    );
  }
  const collapse = files.length > 6;
  for (const file of files) {
    const diffView = renderDiff(file.diff || "");
    diffView.hidden = collapse;
    const toggle = el("button", {
      class: "toggle",
      type: "button",
      "aria-label": "Show or hide the diff",
      "aria-expanded": String(!collapse),
      text: collapse ? "▸" : "▾",
      onclick: () => {
        diffView.hidden = !diffView.hidden;
        toggle.textContent = diffView.hidden ? "▸" : "▾";
        toggle.setAttribute("aria-expanded", String(!diffView.hidden));
      },
    });
    list.append(
      el(
        "section",
        { class: "file", "data-path": file.path },
        el(
          "div",
          { class: "file-head" },
          toggle,
          el("span", { class: `status ${file.status}`, text: file.status }),
          el("span", { class: "path", title: file.path, text: file.path }),
          el(
            "span",
            { class: "stats" },
            el("span", { class: "add", text: `+${file.additions}` }),
            el("span", { class: "del", text: `−${file.deletions}` }),
          ),
          file.changedOutside ? el("span", { class: "warn", text: "also changed outside", title: "This file was edited by other hands since the server last wrote it" }) : null,
          el(
            "span",
            { class: "actions" },
            el("button", { type: "button", class: "btn small keep", "data-action": "keep", disabled: busy, text: "Keep", onclick: () => keep([file.path]) }),
            el("button", { type: "button", class: "btn small danger", "data-action": "undo", disabled: busy, text: "Undo", onclick: () => undo([file.path], false) }),
          ),
        ),
        diffView,
      ),
    );
  }
  $("app").setAttribute("aria-busy", "false");
  document.body.dataset.state = "ready";
  document.body.dataset.files = String(files.length);
}

async function refresh() {
  const ticket = ++loads;
  try {
    const diff = await callTool("diff_since_checkpoint", checkpoint ? { name: checkpoint } : {});
    if (ticket !== loads) return;
    if (!checkpoint && diff.checkpoint?.name) checkpoint = diff.checkpoint.name;
    render(diff);
  } catch (error) {
    if (ticket !== loads) return;
    $("summary").textContent = "The changes could not be loaded.";
    notice("error", error.message);
    document.body.dataset.state = "error";
  }
}

function setBusy(value) {
  busy = value;
  for (const button of document.querySelectorAll("button.btn")) button.disabled = value || (lastDiff && !lastDiff.files.length);
}

function describe(paths) {
  if (!paths) return "every file";
  return paths.length === 1 ? paths[0] : `${paths.length} files`;
}

async function tell(text) {
  // Let the assistant know what the person decided, for its next turn (hosts may not support it).
  try {
    await app.updateModelContext({ content: [{ type: "text", text }] });
  } catch {
    /* not supported by this host */
  }
}

async function keep(paths) {
  setBusy(true);
  try {
    const args = { name: checkpoint || "start" };
    if (paths) args.paths = paths;
    const done = await callTool("keep_changes", args);
    notice("ok", `Kept the changes to ${describe(done.kept && done.kept.length ? done.kept : paths)}.`);
    tell(`The person reviewed and kept the changes to ${describe(paths)} (checkpoint ${args.name}).`);
  } catch (error) {
    notice("error", error.message);
  } finally {
    busy = false;
    await refresh();
  }
}

async function undo(paths, force) {
  setBusy(true);
  try {
    const args = { name: checkpoint || "start" };
    if (paths) args.paths = paths;
    if (force) args.force = true;
    const done = await callTool("restore_checkpoint", args);
    const names = (done.restored || []).map((r) => r.path);
    notice("ok", `Undid the changes to ${describe(names.length ? names : paths)}.`);
    tell(`The person undid the changes to ${describe(names.length ? names : paths)}: they are back as at checkpoint ${args.name}. Read them again before editing.`);
  } catch (error) {
    const conflict = /conflict/i.test(error.message);
    notice(
      "error",
      error.message,
      conflict
        ? el("button", { type: "button", class: "btn small danger", text: "Undo anyway", onclick: () => undo(paths, true) })
        : null,
    );
  } finally {
    busy = false;
    await refresh();
  }
}

function applyContext(ctx) {
  if (!ctx) return;
  if (ctx.theme) applyDocumentTheme(ctx.theme);
  if (ctx.styles?.variables) applyHostStyleVariables(ctx.styles.variables);
  if (ctx.styles?.css?.fonts) applyHostFonts(ctx.styles.css.fonts);
}

$("keep-all").addEventListener("click", () => keep(null));
$("undo-all").addEventListener("click", () => undo(null, false));

app.ontoolresult = (params) => {
  // Opened from a journal tool's result: follow the checkpoint it was about. The server sends its
  // results as one JSON text block (structuredContent only with --structured-content).
  let data = params?.structuredContent;
  if (!data) {
    try {
      data = JSON.parse(textOf(params || {}));
    } catch {
      data = null;
    }
  }
  const cp = data?.checkpoint;
  if (typeof cp === "string") checkpoint = cp;
  else if (cp && typeof cp.name === "string") checkpoint = cp.name;
  refresh();
};
app.onhostcontextchanged = (ctx) => applyContext(ctx);
app.onteardown = async () => ({});

app
  .connect(new PostMessageTransport(window.parent, window.parent))
  .then(() => {
    applyContext(app.getHostContext());
    return refresh();
  })
  .catch((error) => {
    $("summary").textContent = "Could not connect to the host.";
    notice("error", String(error?.message || error));
    document.body.dataset.state = "error";
  });

"""Code intelligence for the code tools: symbols, references, definitions, refactors, problems, formatting.

Engines used: tree-sitter for outlines and for snapping a position to the nearest identifier;
the workspace's language servers (:mod:`.lsp`) for definition, references, rename, diagnostics and
TS/JS formatting and extraction; rope for Python extraction (and rename when no server can);
ruff for Python lint and format. Multi-file results go through :mod:`.multiedit`.

Cross-file answers are never partial in silence: they wait for the server to load the project
(:meth:`LanguageServer.wait_ready` plus the adapter's probe) and carry ``partial: true`` and a
``reason`` when the wait ran out or the server cannot see the whole project. A rename is refused
rather than applied from a partial view.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import threading
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from ..workspace import Workspace
from . import multiedit, sandbox, textio, treesitter
from .failures import ToolFailure
from .lsp import LanguageServer, Unavailable, path_of, servers, uri_of
from .lsp.adapters.base import env_float

IDENTIFIER = re.compile(r"^[^\W\d]\w*$|^\$[\w$]*$", re.UNICODE)


def ready_timeout() -> float:
    return env_float("MCP_IDE_LSP_READY_TIMEOUT", 90)


# ----------------------------------------------------------------------------- helpers


def _unavailable(exc: Unavailable) -> ToolFailure:
    return ToolFailure(f"unavailable: {exc}", kind="unavailable")


def _server(ws: Workspace, resolved: sandbox.Resolved) -> LanguageServer | None:
    try:
        return servers(ws).server_for(resolved.path)
    except Unavailable as exc:
        raise _unavailable(exc) from None


def _prepare(
    ws: Workspace, resolved: sandbox.Resolved, server: LanguageServer, cross_file: bool = True
) -> str | None:
    """Sync documents and wait for the project; the reason an answer may be partial, or None."""
    try:
        server.refresh_open_documents()
        server.sync_document(resolved.path)
    except OSError as exc:
        raise ToolFailure(f"cannot read {resolved.display_rel!r}: {exc.strerror}", kind="not_found") from None
    reason = server.wait_ready(ready_timeout())
    if cross_file and reason is None:
        try:
            reason = server.adapter.probe(server, resolved.path)
        except Unavailable as exc:
            raise _unavailable(exc) from None
        if reason is None:
            reason = server.wait_ready(ready_timeout())
    return reason


def _need_file(resolved: sandbox.Resolved) -> None:
    if not resolved.path.is_file():
        if not resolved.path.exists():
            raise sandbox.not_found(resolved)
        raise ToolFailure(f"{resolved.display_rel!r} is a folder; name a source file", kind="invalid")


def _display(ws: Workspace, path: Path) -> str | None:
    """A workspace-relative display path, or None when ``path`` is outside every root."""
    real = Path(os.path.realpath(path))
    for root in ws.roots:
        if real == root or real.is_relative_to(root):
            rel = real.relative_to(ws.root) if real.is_relative_to(ws.root) else real.relative_to(root)
            return str(rel).replace("/", os.sep)
    return None


def snap(text: str, path: Path, line: int, character: int) -> tuple[int, int, int]:
    """The identifier at or nearest (line, character) on that line: (line, start, end)."""
    if line < 0 or character < 0:
        raise ToolFailure("line and character are 0-based and cannot be negative", kind="invalid")
    hit = treesitter.identifier_at(text, treesitter.language_for(path), line, character)
    if hit is None:
        lines = text.count("\n") + 1
        if line >= lines:
            raise ToolFailure(
                f"line {line} is past the end of the file ({lines} lines, 0-based)", kind="invalid"
            )
        raise ToolFailure(f"no identifier on line {line} (0-based); point at a symbol's name", kind="invalid")
    return hit


def _doc_text(server: LanguageServer | None, resolved: sandbox.Resolved) -> str:
    if server is not None:
        doc = server.documents.get(uri_of(resolved.path))
        if doc is not None:
            return doc.text
    return textio.read_text(resolved).text


def _locations(result: Any) -> list[tuple[str, lsp.Range]]:
    if result is None:
        return []
    items = result if isinstance(result, list) else [result]
    out = []
    for item in items:
        if isinstance(item, lsp.LocationLink):
            out.append((item.target_uri, item.target_selection_range or item.target_range))
        elif isinstance(item, lsp.Location):
            out.append((item.uri, item.range))
    return out


def _partial(result: dict[str, Any], reason: str | None) -> dict[str, Any]:
    if reason:
        result["partial"] = True
        result["reason"] = reason
    return result


# ----------------------------------------------------------------------------- symbols


def symbols(ws: Workspace, resolved: sandbox.Resolved) -> dict[str, Any]:
    _need_file(resolved)
    lang = treesitter.language_for(resolved.path)
    if lang is None:
        raise ToolFailure(
            f"no outline for {resolved.display_rel!r}: no tree-sitter grammar matches its name "
            f"(supported: {len(treesitter.supported_languages())} languages by file extension)",
            kind="invalid",
        )
    raw, _ = textio.read_bytes(resolved)
    tf = textio.decode(raw, name=resolved.display_rel)
    outline = treesitter.outline(tf.text, lang)
    result: dict[str, Any] = {"symbols": [s.to_seed() for s in outline]}
    enriched_by = _enrich(ws, resolved, result["symbols"])
    if enriched_by:
        result["enrichedBy"] = enriched_by
    return result


def _enrich(ws: Workspace, resolved: sandbox.Resolved, symbols: list[dict[str, Any]]) -> str | None:
    """Kinds and details from the file's language server, only when one is already running and idle.

    Never starts a server and never waits for one: the outline stays a fast tree-sitter answer.
    """
    from .lsp import LanguageServers

    manager = next((s for s in ws.services() if isinstance(s, LanguageServers)), None)
    server = manager.running_for(resolved.path) if manager is not None else None
    if server is None or server.loading() or not server.supports("document_symbol_provider"):
        return None
    try:
        server.sync_document(resolved.path)
        found = server.request(
            "textDocument/documentSymbol",
            lsp.DocumentSymbolParams(text_document=lsp.TextDocumentIdentifier(uri=uri_of(resolved.path))),
            timeout=2,
        )
    except Exception:
        return None
    known: dict[tuple[str, int], tuple[str, str]] = {}

    def collect(items: Any) -> None:
        for item in items or []:
            if isinstance(item, lsp.DocumentSymbol):
                kind = treesitter.SYMBOL_KINDS[int(item.kind) - 1] if 0 < int(item.kind) <= 26 else ""
                known[(item.name, item.selection_range.start.line)] = (kind, item.detail or "")
                collect(item.children)
            elif isinstance(item, lsp.SymbolInformation):
                kind = treesitter.SYMBOL_KINDS[int(item.kind) - 1] if 0 < int(item.kind) <= 26 else ""
                known.setdefault((item.name, item.location.range.start.line), (kind, ""))

    collect(found)
    if not known:
        return None

    def apply(items: list[dict[str, Any]]) -> None:
        for sym in items:
            hit = known.get((sym["name"], sym["selectionRange"]["startLine"]))
            if hit is not None:
                kind, detail = hit
                # The server's kind wins, except its plain "Variable" over a more precise outline kind.
                if kind and (kind != "Variable" or sym["kind"] == "Variable"):
                    sym["kind"] = kind
                if detail and not sym["detail"]:
                    sym["detail"] = detail
            apply(sym.get("children", []))

    apply(symbols)
    return server.adapter.server_name


# ----------------------------------------------------------------------------- references / definition


def references(ws: Workspace, resolved: sandbox.Resolved, line: int, character: int) -> dict[str, Any]:
    _need_file(resolved)
    server = _server(ws, resolved)
    if server is None:
        return _text_references(ws, resolved, line, character)
    reason = _prepare(ws, resolved, server)
    text = _doc_text(server, resolved)
    row, start, _end = snap(text, resolved.path, line, character)
    position = lsp.Position(line=row, character=start)
    doc = lsp.TextDocumentIdentifier(uri=uri_of(resolved.path))
    try:
        refs = server.request(
            "textDocument/references",
            lsp.ReferenceParams(
                text_document=doc, position=position, context=lsp.ReferenceContext(include_declaration=True)
            ),
            timeout=120,
        )
        defs = _locations(
            server.request(
                "textDocument/definition",
                lsp.DefinitionParams(text_document=doc, position=position),
                timeout=60,
            )
        )
    except Unavailable as exc:
        raise _unavailable(exc) from None
    if reason is None and server.loading():
        reason = server.wait_ready(0) or None
    declared = {(u, r.start.line, r.start.character) for u, r in defs}
    out: list[dict[str, Any]] = []
    external = 0
    seen = set()
    for loc in refs or []:
        path = path_of(loc.uri)
        shown = _display(ws, path) if path is not None else None
        if shown is None:
            external += 1
            continue
        key = (shown, loc.range.start.line, loc.range.start.character)
        if key in seen:
            continue
        seen.add(key)
        item: dict[str, Any] = {
            "path": shown,
            "line": loc.range.start.line,
            "character": loc.range.start.character,
            "endLine": loc.range.end.line,
            "endCharacter": loc.range.end.character,
        }
        if (loc.uri, loc.range.start.line, loc.range.start.character) in declared:
            item["isDeclaration"] = True
        out.append(item)
    out.sort(key=lambda r: (not r.get("isDeclaration", False), r["path"], r["line"], r["character"]))
    result: dict[str, Any] = {"references": out, "symbol": text.split("\n")[row][start:_end]}
    if external:
        result["outsideWorkspace"] = external
    return _partial(result, reason)


def _text_references(ws: Workspace, resolved: sandbox.Resolved, line: int, character: int) -> dict[str, Any]:
    """No language server for this language: whole-word matches of the identifier, marked partial."""
    from . import search

    text = textio.read_text(resolved).text
    row, start, end = snap(text, resolved.path, line, character)
    name = text.split("\n")[row][start:end]
    suffix = resolved.path.suffix
    refs: list[dict[str, Any]] = []
    pattern = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")
    found = search.search_content(
        ws.root,
        rf"\b{re.escape(name)}\b",
        regex=True,
        filters=search.Filters(include=(f"*{suffix}",) if suffix else ()),
        max_matches_per_file=1,
    )
    hits: list[tuple[str, int, int]] = []
    for fm in found.files:
        try:
            other = textio.read_text(sandbox.resolve(ws, fm.path)).text
        except ToolFailure:
            continue
        for i, row_text in enumerate(other.split("\n")):
            for m in pattern.finditer(row_text):
                hits.append(
                    (fm.path.replace("/", os.sep), i, len(row_text[: m.start()].encode("utf-16-le")) // 2)
                )
        if len(hits) > 5000:
            break
    for path, ln, col in hits:
        refs.append(
            {"path": path, "line": ln, "character": col, "endLine": ln, "endCharacter": col + len(name)}
        )
    reason = (
        f"no language server handles {suffix or 'this file'} files here, so these are whole-word text matches "
        "of the name (configure one in lsp.json for exact references)"
    )
    return _partial({"references": refs, "symbol": name}, reason)


def definition(ws: Workspace, resolved: sandbox.Resolved, line: int, character: int) -> dict[str, Any]:
    _need_file(resolved)
    server = _server(ws, resolved)
    if server is None:
        raise ToolFailure(
            f"unavailable: no language server handles {resolved.path.suffix or 'this'} files here "
            "(Python and TypeScript/JavaScript are built in; configure others in lsp.json)",
            kind="unavailable",
        )
    reason = _prepare(ws, resolved, server)
    text = _doc_text(server, resolved)
    row, start, end = snap(text, resolved.path, line, character)
    doc = lsp.TextDocumentIdentifier(uri=uri_of(resolved.path))
    try:
        result = server.request(
            "textDocument/definition",
            lsp.DefinitionParams(text_document=doc, position=lsp.Position(line=row, character=start)),
            timeout=60,
        )
    except Unavailable as exc:
        raise _unavailable(exc) from None
    out = []
    for uri, rng in _locations(result):
        path = path_of(uri)
        shown = _display(ws, path) if path is not None else None
        item: dict[str, Any] = {
            "line": rng.start.line,
            "character": rng.start.character,
            "endLine": rng.end.line,
            "endCharacter": rng.end.character,
        }
        if shown is None:
            item["path"] = path.name if path is not None else uri.rsplit("/", 1)[-1]
            item["outsideWorkspace"] = True
        else:
            item["path"] = shown
            with contextlib.suppress(Exception):
                item["lineText"] = textio.read_text(sandbox.resolve(ws, str(path))).text.split("\n")[
                    rng.start.line
                ][:300]
        out.append(item)
    return _partial({"symbol": text.split("\n")[row][start:end], "definitions": out}, reason)


# ----------------------------------------------------------------------------- refactoring


def _check_name(name: str | None, what: str) -> str:
    if not name or not IDENTIFIER.match(name):
        raise ToolFailure(
            f"invalid options.newName {name!r}: {what} needs a valid identifier (letters, digits, _; not starting "
            "with a digit)",
            kind="invalid",
        )
    return name


def refactor(
    ws: Workspace,
    resolved: sandbox.Resolved,
    line: int,
    character: int,
    refactor_type: str,
    options: dict[str, Any],
    preview: bool,
) -> dict[str, Any]:
    _need_file(resolved)
    kind = refactor_type.strip().lower().replace("-", "_")
    if kind in ("extract_method",):
        kind = "extract_function"
    if kind in ("extract_constant", "extract_local", "introduce_variable"):
        kind = "extract_variable"
    if kind == "rename":
        plans, message, reason = _rename(
            ws, resolved, line, character, _check_name(options.get("newName"), "rename"), preview
        )
    elif kind in ("extract_function", "extract_variable"):
        plans, message, reason = _extract(ws, resolved, line, character, kind, options)
    else:
        raise ToolFailure(
            f"invalid refactorType {refactor_type!r}: use rename, extract_function or extract_variable",
            kind="invalid",
        )
    if not plans:
        raise ToolFailure(f"the {kind} changed nothing at line {line}, character {character}", kind="invalid")
    files = sorted(p.resolved.display_rel for p in plans)
    result: dict[str, Any] = {"success": True, "changedFiles": files}
    if preview:
        result["message"] = f"Preview only (nothing written): {message} in {len(files)} file(s)"
        result["diff"] = multiedit.preview(plans)
        result["applied"] = False
    else:
        multiedit.apply(ws, plans)
        result["message"] = f"Successfully {message} in {len(files)} file(s)"
        result["applied"] = True
    return _partial(result, reason)


def _rename(
    ws: Workspace, resolved: sandbox.Resolved, line: int, character: int, new_name: str, preview: bool
) -> tuple[list[multiedit.FilePlan], str, str | None]:
    server = _server(ws, resolved)
    reason: str | None = None
    plans: list[multiedit.FilePlan] | None = None
    old_name = ""
    if server is not None and server.supports("rename_provider"):
        reason = _prepare(ws, resolved, server)
        text = _doc_text(server, resolved)
        row, start, end = snap(text, resolved.path, line, character)
        old_name = text.split("\n")[row][start:end]
        if reason and not preview:
            raise ToolFailure(
                f"unavailable: not renaming from a partial view of the project ({reason}); try again in a moment, "
                "or pass preview: true to see what it would change so far",
                kind="unavailable",
            )
        doc = lsp.TextDocumentIdentifier(uri=uri_of(resolved.path))
        try:
            edit = server.request(
                "textDocument/rename",
                lsp.RenameParams(
                    text_document=doc, position=lsp.Position(line=row, character=start), new_name=new_name
                ),
                timeout=120,
            )
        except Unavailable as exc:
            if resolved.path.suffix not in (".py", ".pyi"):
                raise _unavailable(exc) from None
            edit = None
        except Exception as exc:  # the server refused (not a renameable symbol...)
            if resolved.path.suffix not in (".py", ".pyi"):
                raise ToolFailure(
                    f"cannot rename {old_name!r}: {getattr(exc, 'message', exc)}", kind="invalid"
                ) from None
            edit = None
        if edit is not None:
            plans = multiedit.plan_workspace_edit(ws, edit)
    if plans is None or (not plans and resolved.path.suffix in (".py", ".pyi")):
        if resolved.path.suffix not in (".py", ".pyi"):
            raise ToolFailure(
                f"unavailable: no language server can rename in {resolved.path.suffix or 'this'} files here",
                kind="unavailable",
            )
        from . import pyrefactor

        text = pyrefactor.read_text(ws, resolved.path)
        row, start, end = snap(text, resolved.path, line, character)
        old_name = text.split("\n")[row][start:end]
        offset = multiedit.offset_of(text, row, start)
        plans = multiedit.plan_contents(ws, pyrefactor.rename(ws, resolved.path, offset, new_name))
        reason = None
    return plans, f"renamed {old_name!r} to {new_name!r}", reason


def _range_from_options(
    text: str, path: Path, line: int, character: int, kind: str, options: dict[str, Any]
) -> tuple[int, int, int, int]:
    lines = text.split("\n")
    if line < 0 or line >= len(lines):
        raise ToolFailure(f"line {line} is outside the file ({len(lines)} lines, 0-based)", kind="invalid")
    end_line = options.get("endLine")
    end_char = options.get("endCharacter")
    if end_line is not None or end_char is not None:
        el = int(end_line if end_line is not None else line)
        if el < line or el >= len(lines):
            raise ToolFailure(
                f"options.endLine {el} must be between line {line} and {len(lines) - 1}", kind="invalid"
            )
        ec = int(end_char) if end_char is not None else len(lines[el])
        if el == line and ec <= character:
            raise ToolFailure("options.endCharacter must be after character on the same line", kind="invalid")
        return line, character, el, ec
    if kind == "extract_function":
        row = lines[line]
        first = len(row) - len(row.lstrip())
        return line, first, line, len(row.rstrip())
    found = _expression_at(text, path, line, character)
    if found is None:
        raise ToolFailure(
            "no expression at that position; give the end with options.endLine/options.endCharacter",
            kind="invalid",
        )
    return found


_EXPR_WORDS = (
    "expression",
    "call",
    "binary",
    "attribute",
    "subscript",
    "member",
    "operator",
    "string",
    "number",
    "integer",
    "float",
    "literal",
    "comparison",
    "boolean",
    "list",
    "dictionary",
    "tuple",
    "array",
    "object",
    "template",
    "parenthesized",
    "conditional",
    "ternary",
    "await",
    "lambda",
)


def _expression_at(text: str, path: Path, line: int, character: int) -> tuple[int, int, int, int] | None:
    """The largest expression containing the position that stays inside one statement."""
    lang = treesitter.language_for(path)
    if lang is None:
        return None
    src = text.encode("utf-8")
    starts = multiedit.line_starts(text)
    offset = multiedit.offset_of(text, line, character, starts)
    byte = len(text[:offset].encode("utf-8"))
    tree = treesitter.parser_for(lang).parse(src)
    node = tree.root_node.named_descendant_for_byte_range(byte, byte)
    best = None
    while node is not None:
        t = node.type
        if any(w in t for w in _EXPR_WORDS) and "statement" not in t:
            best = node
        elif best is not None and t not in (
            "identifier",
            "property_identifier",
            "argument_list",
            "arguments",
        ):
            break
        node = node.parent
    if best is None:
        return None
    a = len(src[: best.start_byte].decode("utf-8"))
    b = len(src[: best.end_byte].decode("utf-8"))
    sl, sc = multiedit.position_of(text, a, starts)
    el, ec = multiedit.position_of(text, b, starts)
    return sl, sc, el, ec


def _extract(
    ws: Workspace, resolved: sandbox.Resolved, line: int, character: int, kind: str, options: dict[str, Any]
) -> tuple[list[multiedit.FilePlan], str, str | None]:
    what = "function" if kind == "extract_function" else "variable"
    if resolved.path.suffix in (".py", ".pyi", ".pyw"):
        from . import pyrefactor

        name = _check_name(
            options.get("newName") or ("extracted_function" if what == "function" else "extracted_value"),
            kind,
        )
        text = pyrefactor.read_text(ws, resolved.path)
        sl, sc, el, ec = _range_from_options(text, resolved.path, line, character, kind, options)
        starts = multiedit.line_starts(text)
        a, b = multiedit.offset_of(text, sl, sc, starts), multiedit.offset_of(text, el, ec, starts)
        contents = pyrefactor.extract(ws, resolved.path, a, b, name, what)
        return multiedit.plan_contents(ws, contents), f"extracted {what} {name!r}", None
    server = _server(ws, resolved)
    if server is None or not server.supports("code_action_provider"):
        raise ToolFailure(
            f"unavailable: {kind} works for Python (rope) and TypeScript/JavaScript (tsserver); "
            f"no refactoring engine handles {resolved.path.suffix or 'this'} files here",
            kind="unavailable",
        )
    return _lsp_extract(ws, resolved, server, line, character, kind, options)


_REFACTOR_LOCK = threading.Lock()


def _code_action(raw: dict[str, Any]) -> lsp.CodeAction | lsp.Command:
    """``(Command | CodeAction)[]`` is ambiguous for a generic converter: a CodeAction's ``command`` is an object."""
    from .lsp.jsonrpc import CONVERTER

    if isinstance(raw.get("command"), str):
        return CONVERTER.structure(raw, lsp.Command)
    return CONVERTER.structure(raw, lsp.CodeAction)


def _lsp_extract(
    ws: Workspace,
    resolved: sandbox.Resolved,
    server: LanguageServer,
    line: int,
    character: int,
    kind: str,
    options: dict[str, Any],
) -> tuple[list[multiedit.FilePlan], str, str | None]:
    what = "function" if kind == "extract_function" else "variable"
    reason = _prepare(ws, resolved, server, cross_file=False)
    text = _doc_text(server, resolved)
    sl, sc, el, ec = _range_from_options(text, resolved.path, line, character, kind, options)
    doc = lsp.TextDocumentIdentifier(uri=uri_of(resolved.path))
    wanted = "refactor.extract.function" if what == "function" else "refactor.extract.constant"
    try:
        actions = server.request(
            "textDocument/codeAction",
            lsp.CodeActionParams(
                text_document=doc,
                range=lsp.Range(
                    start=lsp.Position(line=sl, character=sc), end=lsp.Position(line=el, character=ec)
                ),
                context=lsp.CodeActionContext(
                    diagnostics=[],
                    only=[lsp.CodeActionKind.RefactorExtract],
                    trigger_kind=lsp.CodeActionTriggerKind.Invoked,
                ),
            ),
            timeout=60,
            typed=False,
        )
    except Unavailable as exc:
        raise _unavailable(exc) from None
    actions = [_code_action(a) for a in actions or [] if isinstance(a, dict)]
    candidates = [a for a in actions if isinstance(a, lsp.CodeAction) and (a.kind or "").startswith(wanted)]
    if not candidates:
        offered = sorted({a.title for a in actions or [] if isinstance(a, lsp.CodeAction)})
        raise ToolFailure(
            f"cannot extract a {what} from lines {sl}:{sc}-{el}:{ec}: the server offers "
            f"{'; '.join(offered) if offered else 'no extraction there'} (select a whole expression or statements)",
            kind="invalid",
        )
    scope = str(options.get("scope") or "")

    def rank(action: lsp.CodeAction) -> tuple[int, int]:
        title = action.title.lower()
        if scope and scope.lower() in title:
            return (0, 0)
        if what == "function":
            return (0 if ("module scope" in title or "global scope" in title) else 1, 0)
        return (0 if "enclosing scope" in title else 1, 0)

    action = sorted(candidates, key=rank)[0]
    edits: list[lsp.WorkspaceEdit] = []
    with _REFACTOR_LOCK:
        if action.edit is not None:
            edits.append(action.edit)
        elif action.command is not None:
            server.edit_sink = lambda e: edits.append(e) is None
            try:
                server.request(
                    "workspace/executeCommand",
                    lsp.ExecuteCommandParams(
                        command=action.command.command, arguments=action.command.arguments
                    ),
                    timeout=60,
                )
            except Unavailable as exc:
                raise _unavailable(exc) from None
            except Exception as exc:
                raise ToolFailure(
                    f"the server failed to {kind}: {getattr(exc, 'message', exc)}", kind="invalid"
                ) from None
            finally:
                server.edit_sink = None
    if not edits:
        raise ToolFailure(f"the server sent no edit for {action.title!r}", kind="unavailable")
    plans: list[multiedit.FilePlan] = []
    for edit in edits:
        plans.extend(multiedit.plan_workspace_edit(ws, edit))
    name = _rename_generated(plans, options.get("newName"), kind)
    return plans, f"extracted {what} {name!r} ({action.title})", reason


def _rename_generated(plans: list[multiedit.FilePlan], new_name: str | None, kind: str) -> str:
    """tsserver names what it extracts newFunction/newLocal; give it the caller's name."""
    pattern = re.compile(r"\b(newFunction(?:_\d+)?|newLocal(?:_\d+)?)\b")
    for plan in plans:
        old_names = set(pattern.findall(plan.old_text))
        generated = [n for n in pattern.findall(plan.new_text) if n not in old_names]
        if not generated:
            continue
        current = generated[0]
        if not new_name:
            return current
        new_name = _check_name(new_name, kind)
        if re.search(rf"(?<![\w$]){re.escape(new_name)}(?![\w$])", plan.old_text):
            raise ToolFailure(
                f"conflict: {new_name!r} is already used in {plan.resolved.display_rel!r}; choose another newName",
                kind="conflict",
            )
        plan.new_text = re.sub(rf"(?<![\w$]){re.escape(current)}(?![\w$])", new_name, plan.new_text)
        return new_name
    return new_name or "the extracted code"


# ----------------------------------------------------------------------------- problems


SEVERITY = {1: "error", 2: "warning", 3: "information", 4: "hint"}


def _ruff_bin() -> str:
    try:
        from ruff.__main__ import find_ruff_bin

        return str(find_ruff_bin())
    except Exception:
        import shutil

        found = shutil.which("ruff")
        if found is None:
            raise ToolFailure("unavailable: ruff is not installed", kind="unavailable") from None
        return found


RUFF_MAX_OUTPUT = 64 * 1024 * 1024


def _ruff(
    ws: Workspace, resolved: sandbox.Resolved, args: list[str], text: str
) -> subprocess.CompletedProcess[bytes]:
    """Run ruff on the file's text through the process engine (own group, scrubbed env, timeout)."""
    from . import processes

    argv = [_ruff_bin(), *args, "--stdin-filename", resolved.rel, "-"]
    done = processes.run(
        argv,
        ws=ws,
        env={"RUFF_NO_CACHE": "true"},
        timeout_s=60,
        max_output=RUFF_MAX_OUTPUT,
        stdin=text.encode("utf-8"),
    )
    if done.timed_out:
        raise ToolFailure("unavailable: ruff took over 60 s and was stopped", kind="unavailable")
    if done.truncated:  # never write back (or report from) a cut answer
        raise ToolFailure(
            "unavailable: ruff printed more than it may; the file is unchanged", kind="unavailable"
        )
    code = done.exit_code if done.exit_code is not None else -1
    return subprocess.CompletedProcess(argv, code, done.stdout_bytes, done.stderr_bytes)


def _ruff_problems(ws: Workspace, resolved: sandbox.Resolved, text: str) -> list[dict[str, Any]]:
    done = _ruff(ws, resolved, ["check", "--output-format", "json", "--no-cache", "--exit-zero"], text)
    try:
        items = json.loads(done.stdout or b"[]")
    except ValueError:
        return []
    lines = text.split("\n")
    out = []
    for item in items:
        loc, end = item.get("location") or {}, item.get("end_location") or {}
        ln, col = max(0, int(loc.get("row", 1)) - 1), max(0, int(loc.get("column", 1)) - 1)
        eln, ecol = max(0, int(end.get("row", 1)) - 1), max(0, int(end.get("column", 1)) - 1)
        out.append(
            {
                "source": "ruff",
                "severity": "error"
                if (item.get("code") or "").startswith(("E9", "F8")) or item.get("code") is None
                else "warning",
                "code": item.get("code") or "syntax",
                "message": item.get("message", ""),
                "line": ln,
                "character": _utf16(lines, ln, col),
                "endLine": eln,
                "endCharacter": _utf16(lines, eln, ecol),
                **({"fixable": True} if item.get("fix") else {}),
            }
        )
    return out


def _utf16(lines: list[str], ln: int, col: int) -> int:
    row = lines[ln] if ln < len(lines) else ""
    prefix = row[:col]
    return len(prefix) if prefix.isascii() else len(prefix.encode("utf-16-le")) // 2


def _syntax_problems(text: str, path: Path) -> list[dict[str, Any]]:
    lang = treesitter.language_for(path)
    if lang is None:
        return []
    src = text.encode("utf-8")
    tree = treesitter.parser_for(lang).parse(src)
    if not tree.root_node.has_error:
        return []
    out: list[dict[str, Any]] = []
    pos = treesitter.Positions(src)

    def walk(node: Any) -> None:
        if len(out) >= 50:
            return
        if node.is_missing or node.type == "ERROR":
            sl, sc = pos.char(tuple(node.start_point))
            el, ec = pos.char(tuple(node.end_point))
            what = f"missing {node.type}" if node.is_missing else "syntax error"
            out.append(
                {
                    "source": "tree-sitter",
                    "severity": "error",
                    "code": "syntax",
                    "message": what,
                    "line": sl,
                    "character": sc,
                    "endLine": el,
                    "endCharacter": ec,
                }
            )
            return
        if node.has_error:
            for child in node.children:
                walk(child)

    walk(tree.root_node)
    return out


def problems(ws: Workspace, resolved: sandbox.Resolved) -> dict[str, Any]:
    _need_file(resolved)
    text = textio.read_text(resolved).text
    found: list[dict[str, Any]] = []
    sources: list[str] = []
    reason: str | None = None
    if resolved.path.suffix in (".py", ".pyi", ".pyw"):
        found.extend(_ruff_problems(ws, resolved, text))
        sources.append("ruff")
    server = _server(ws, resolved)
    if server is not None:
        reason = _prepare(ws, resolved, server, cross_file=False)
        doc = server.sync_document(resolved.path)
        diags = server.wait_diagnostics(doc, env_float("MCP_IDE_DIAGNOSTICS_TIMEOUT", 30))
        sources.append(server.adapter.server_name)
        if diags is None:
            reason = reason or f"{server.adapter.server_name} published no diagnostics in time"
        for d in diags or []:
            found.append(
                {
                    "source": d.source or server.adapter.server_name,
                    "severity": SEVERITY.get(int(d.severity or 1), "error"),
                    "code": str(d.code) if d.code is not None else "",
                    "message": d.message,
                    "line": d.range.start.line,
                    "character": d.range.start.character,
                    "endLine": d.range.end.line,
                    "endCharacter": d.range.end.character,
                }
            )
    elif not sources:
        found.extend(_syntax_problems(text, resolved.path))
        sources.append("tree-sitter (syntax only)")
    order = {"error": 0, "warning": 1, "information": 2, "hint": 3}
    found.sort(key=lambda p: (p["line"], p["character"], order.get(p["severity"], 4)))
    counts = {k: sum(1 for p in found if p["severity"] == k) for k in ("error", "warning")}
    result = {
        "path": resolved.display_rel,
        "problems": found,
        "errors": counts["error"],
        "warnings": counts["warning"],
        "sources": sources,
    }
    return _partial(result, reason)


# ----------------------------------------------------------------------------- formatting


def format_plan(ws: Workspace, resolved: sandbox.Resolved) -> multiedit.FilePlan | None:
    """The formatted text of a file as a plan (None when it is already formatted)."""
    _need_file(resolved)
    old = textio.read_text(resolved)
    if resolved.path.suffix in (".py", ".pyi", ".pyw"):
        done = _ruff(ws, resolved, ["format", "--no-cache"], old.text)
        if done.returncode != 0:
            msg = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise ToolFailure(
                f"cannot format {resolved.display_rel!r}: {(msg[-1] if msg else 'ruff failed')[:300]} (fix the syntax first)",
                kind="invalid",
            )
        new_text = done.stdout.decode("utf-8")
    else:
        server = _server(ws, resolved)
        if server is None or not server.supports("document_formatting_provider"):
            raise ToolFailure(
                f"unavailable: no formatter for {resolved.path.suffix or 'this'} files here "
                "(ruff formats Python; the TypeScript server formats TS/JS; configure others in lsp.json)",
                kind="unavailable",
            )
        _prepare(ws, resolved, server, cross_file=False)
        text = _doc_text(server, resolved)
        size, tabs = textio.indentation(text)
        try:
            edits = server.request(
                "textDocument/formatting",
                lsp.DocumentFormattingParams(
                    text_document=lsp.TextDocumentIdentifier(uri=uri_of(resolved.path)),
                    options=lsp.FormattingOptions(
                        tab_size=size,
                        insert_spaces=not tabs,
                        trim_trailing_whitespace=True,
                        insert_final_newline=True,
                    ),
                ),
                timeout=60,
            )
        except Unavailable as exc:
            raise _unavailable(exc) from None
        edits = edits or []
        new_text = multiedit.apply_text_edits(
            text,
            [
                (
                    e.range.start.line,
                    e.range.start.character,
                    e.range.end.line,
                    e.range.end.character,
                    e.new_text,
                )
                for e in edits
            ],
        )
    new_text = textio.normalise_input(new_text, old)
    if new_text == old.text:
        return None
    return multiedit.FilePlan(resolved, old, new_text)


def format_file(ws: Workspace, resolved: sandbox.Resolved) -> bool:
    """Format a file in place (ruff for Python, the language server otherwise). True when it changed."""
    plan = format_plan(ws, resolved)
    if plan is None:
        return False
    multiedit.apply(ws, [plan])
    return True

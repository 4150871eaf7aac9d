"""Extracting a function or a variable: rope for Python, the server's code actions for TS/JS.

The range to extract is the caller's (``options.endLine``/``endCharacter``), else the statement on
the line (a function) or the largest expression around the position (a variable, found with
tree-sitter). For TS/JS the server's ``refactor.extract`` action is applied (its edit, or the edit
its command sends back through ``workspace/applyEdit``) and the name tsserver generates is replaced
by ``options.newName``.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from ...workspace import Workspace
from .. import multiedit, sandbox, treesitter
from ..failures import ToolFailure
from ..lsp import LanguageServer, Unavailable, uri_of
from .query import doc_text, prepare, server_for, unavailable
from .rename import check_name

if TYPE_CHECKING:
    from tree_sitter import Node


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
    node: Node | None = tree.root_node.named_descendant_for_byte_range(byte, byte)
    best: Node | None = None
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


def plan_extract(
    ws: Workspace, resolved: sandbox.Resolved, line: int, character: int, kind: str, options: dict[str, Any]
) -> tuple[list[multiedit.FilePlan], str, str | None]:
    """The file plans of an ``extract_function``/``extract_variable``, a message, and why it may be partial."""
    what = "function" if kind == "extract_function" else "variable"
    if resolved.path.suffix in (".py", ".pyi", ".pyw"):
        from .. import pyrefactor

        name = check_name(
            options.get("newName") or ("extracted_function" if what == "function" else "extracted_value"),
            kind,
        )
        text = pyrefactor.read_text(ws, resolved.path)
        sl, sc, el, ec = _range_from_options(text, resolved.path, line, character, kind, options)
        starts = multiedit.line_starts(text)
        a, b = multiedit.offset_of(text, sl, sc, starts), multiedit.offset_of(text, el, ec, starts)
        contents = pyrefactor.extract(ws, resolved.path, a, b, name, what)
        return multiedit.plan_contents(ws, contents), f"extracted {what} {name!r}", None
    server = server_for(ws, resolved)
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
    from ..lsp.jsonrpc import CONVERTER

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
    reason = prepare(ws, resolved, server, cross_file=False)
    text = doc_text(server, resolved)
    sl, sc, el, ec = _range_from_options(text, resolved.path, line, character, kind, options)
    doc = lsp.TextDocumentIdentifier(uri=uri_of(resolved.path))
    wanted = "refactor.extract.function" if what == "function" else "refactor.extract.constant"
    try:
        raw: list[object] | None = server.request(
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
        raise unavailable(exc) from None
    actions = [_code_action(a) for a in raw or [] if isinstance(a, dict)]
    candidates = [a for a in actions if isinstance(a, lsp.CodeAction) and (a.kind or "").startswith(wanted)]
    if not candidates:
        offered = sorted({a.title for a in actions if isinstance(a, lsp.CodeAction)})
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
                raise unavailable(exc) from None
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
        new_name = check_name(new_name, kind)
        if re.search(rf"(?<![\w$]){re.escape(new_name)}(?![\w$])", plan.old_text):
            raise ToolFailure(
                f"conflict: {new_name!r} is already used in {plan.resolved.display_rel!r}; choose another newName",
                kind="conflict",
            )
        plan.new_text = re.sub(rf"(?<![\w$]){re.escape(current)}(?![\w$])", new_name, plan.new_text)
        return new_name
    return new_name or "the extracted code"

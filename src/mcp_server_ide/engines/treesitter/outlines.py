"""The outline of a text: run the language's plan, name each match, nest by containment.

Local variables inside functions are left out, as VS Code's outline does; nested functions and
classes stay."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .kinds import CALLABLES, CONTAINERS, ELIXIR_DEFS
from .languages import language_for
from .nodes import contains_type, detail_of, name_node, node_text
from .parsers import parser_for, plan_for
from .positions import Positions
from .symbols import Symbol

if TYPE_CHECKING:
    from tree_sitter import Node

# Specifiers (C/C++ struct_specifier...) name a type only when they have a body.
_NEEDS_BODY_SUFFIXES = ("specifier",)


def outline(text: str | bytes, lang: str) -> list[Symbol]:
    """The nested symbols of ``text`` in language ``lang`` (a language pack name)."""
    from tree_sitter import QueryCursor

    plan = plan_for(lang)
    if plan is None:
        return []
    src = text.encode("utf-8") if isinstance(text, str) else text
    tree = parser_for(lang).parse(src)
    captures = QueryCursor(plan.query).captures(tree.root_node)
    nodes = captures.get("def", [])
    nodes.sort(key=lambda n: (n.start_byte, -n.end_byte))
    pos = Positions(src)
    roots: list[Symbol] = []
    stack: list[Symbol] = []
    seen_names: set[int] = set()
    for node in nodes:
        while stack and node.start_byte >= stack[-1].end_byte:
            stack.pop()
        parent = stack[-1] if stack else None
        if plan.data is not None:
            sym = _data_symbol(node, plan.data[node.type], src, pos, lang, stack)
        else:
            sym = _code_symbol(node, plan.kinds[node.type], src, pos, parent, stack)
        if sym is None:
            continue
        key = sym.sel_start[0] * 1_000_003 + sym.sel_start[1]
        if parent is not None and key in seen_names and parent.sel_start == sym.sel_start:
            continue  # the same name seen through a wrapper (Java field_declaration -> variable_declarator)
        seen_names.add(key)
        (parent.children if parent is not None else roots).append(sym)
        stack.append(sym)
    return roots


def outline_file(path: str | Path, text: str | bytes | None = None) -> list[Symbol] | None:
    """The outline of a file, or None when no grammar fits its name."""
    lang = language_for(path)
    if lang is None:
        return None
    if text is None:
        text = Path(path).read_bytes()
    return outline(text, lang)


def _code_symbol(
    node: Node, kind: str | None, src: bytes, pos: Positions, parent: Symbol | None, stack: list[Symbol]
) -> Symbol | None:
    if kind is None:
        return None
    ntype = node.type
    if ntype.endswith(_NEEDS_BODY_SUFFIXES) and node.child_by_field_name("body") is None:
        return None
    in_callable = any(s.kind in CALLABLES for s in stack)
    if kind in ("Variable", "Constant", "Field", "Property") and in_callable:
        return None  # locals are not part of an outline
    name = name_node(node)
    if name is None:
        return None
    name_text = node_text(src, name).strip()
    if not name_text or "\n" in name_text or len(name_text) > 200:
        return None
    if ntype == "type_spec":
        inner = node.child_by_field_name("type")
        if inner is not None:
            kind = {"struct_type": "Struct", "interface_type": "Interface"}.get(inner.type, "TypeParameter")
    elif ntype in ("declaration", "field_declaration"):
        declarator = node.child_by_field_name("declarator")
        if declarator is not None and declarator.type == "variable_declarator":
            return None  # Java/C#: each declarator is its own symbol (`int x, y;`)
        if declarator is not None and contains_type(declarator, "function_declarator"):
            kind = "Function"
    elif ntype == "variable_declarator":
        value = node.child_by_field_name("value")
        if value is not None and value.type in ("arrow_function", "function_expression", "function"):
            kind = "Function"
        elif value is not None and value.type == "class":
            kind = "Class"
        else:
            up = node.parent
            wrapper = up.type if up is not None else ""
            if wrapper == "variable_declaration" and up is not None and up.parent is not None:
                wrapper = up.parent.type
            if wrapper == "field_declaration":
                kind = "Field"
            elif wrapper in ("constant_declaration",):
                kind = "Constant"
    elif ntype == "impl_item":
        trait = node.child_by_field_name("trait")
        if trait is not None:
            name_text = f"impl {node_text(src, trait)} for {name_text}"
    elif ntype == "assignment" and name_text.isupper() and len(name_text) > 1:
        kind = "Constant"
    if kind == "Function" and parent is not None and parent.kind in CONTAINERS | {"Interface"}:
        kind = "Constructor" if name_text == parent.name else "Method"
    start, end = node.start_point, node.end_point
    if node.parent is not None and node.parent.type == "decorated_definition":
        start = node.parent.start_point
    return Symbol(
        name=name_text,
        kind=kind,
        start=pos.char(start),
        end=pos.char(end),
        sel_start=pos.char(name.start_point),
        sel_end=pos.char(name.end_point),
        detail=detail_of(src, node, name, kind),
        start_byte=node.start_byte,
        end_byte=node.end_byte,
    )


def _data_symbol(
    node: Node, spec: tuple[str, str | None], src: bytes, pos: Positions, lang: str, stack: list[Symbol]
) -> Symbol | None:
    kind, how = spec
    name: Node | None = None
    text = ""
    if kind in ("Variable", "Field", "Property") and any(s.kind in CALLABLES for s in stack):
        return None
    if lang == "zig" and kind == "Variable":
        up, depth = node.parent, 0
        while up is not None and depth < 12:
            if up.type == "Block":
                return None  # a local
            up, depth = up.parent, depth + 1
    if how is not None and how.startswith("field:"):
        name = node.child_by_field_name(how[6:])
        text = node_text(src, name).strip().strip("\"'") if name is not None else ""
    elif how is not None and how.startswith("child:"):
        name = next((c for c in node.named_children if c.type == how[6:]), None)
        text = node_text(src, name).strip().strip("[]").strip() if name is not None else ""
    elif how == "labels":  # HCL: resource "type" "name" {
        parts = []
        for child in node.named_children:
            if child.type in ("identifier", "string_lit"):
                name = name or child
                parts.append(node_text(src, child).strip().strip('"'))
            elif child.type == "block_start":
                break
        text = " ".join(parts)
    elif how == "elixir":
        target = node.child_by_field_name("target")
        word = node_text(src, target) if target is not None else ""
        if word not in ELIXIR_DEFS:
            return None
        kind = ELIXIR_DEFS[word]
        args = next((c for c in node.named_children if c.type == "arguments"), None)
        first = args.named_children[0] if args is not None and args.named_children else None
        if first is not None and first.type == "call" and first.child_by_field_name("target") is not None:
            first = first.child_by_field_name("target")
        if first is None:
            if word != "defstruct" or target is None:
                return None
            first, text = target, "__struct__"
        name = first
        text = text or node_text(src, first).strip()
    elif how == "text":
        name = node
        text = node_text(src, node).strip().split("\n", 1)[0][:120]
    elif lang == "markdown":
        heading = node.named_children[0] if node.named_children else None
        if heading is None or "heading" not in heading.type:
            return None
        name = heading
        text = node_text(src, heading).strip().lstrip("#").strip().split("\n", 1)[0]
    else:
        name = next(
            (c for c in node.named_children if c.type in ("bare_key", "dotted_key", "quoted_key")), None
        )
        text = node_text(src, name).strip() if name is not None else ""
    if (
        kind == "Function"
        and stack
        and stack[-1].kind in CONTAINERS | {"Interface", "Module"}
        and lang != "elixir"
    ):
        kind = "Method"
    if kind == "Variable" and name is not None and node_text(src, node).lstrip().startswith("const"):
        kind = "Constant"
    if name is None or not text:
        return None
    return Symbol(
        name=text,
        kind=kind,
        start=pos.char(node.start_point),
        end=pos.char(node.end_point),
        sel_start=pos.char(name.start_point),
        sel_end=pos.char(name.end_point),
        detail=detail_of(src, node, name, kind) if kind in CALLABLES and how not in ("elixir",) else "",
        start_byte=node.start_byte,
        end_byte=node.end_byte,
    )

"""Reading a definition node: its name node, its body and its ``detail`` (the text between the name
and the body: the signature)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .kinds import CALLABLES, CONTAINERS

if TYPE_CHECKING:
    from tree_sitter import Node

MAX_DETAIL = 160

_NAME_LEAVES = {
    "identifier",
    "type_identifier",
    "field_identifier",
    "property_identifier",
    "simple_identifier",
    "constant",
    "name",
    "word",
    "qualified_identifier",
    "destructor_name",
    "operator_name",
    "private_property_identifier",
    "namespace_identifier",
    "package_identifier",
    "scoped_identifier",
    "dot_index_expression",
    "method_index_expression",
    "scoped_type_identifier",
    "template_function",
    "type_constructor",
    "module_name",
    "symbol",
    "string_content",
    "bare_key",
    "dotted_key",
}
_BODY_WORDS = (
    "body",
    "block",
    "declaration_list",
    "compound_statement",
    "field_declaration_list",
    "enumerator_list",
    "class_body",
    "enum_body",
    "interface_body",
    "statement_block",
    "suite",
    "members",
    "object_type",
)


def node_text(src: bytes, node: Node) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


def name_node(node: Node) -> Node | None:
    named = node.child_by_field_name("name")
    if named is not None:
        if named.type in (
            "identifier",
            "type_identifier",
            "field_identifier",
            "property_identifier",
            "constant",
            "simple_identifier",
            "name",
        ):
            return named
        leaf = _leaf_name(named)
        return leaf or named
    declarator = node.child_by_field_name("declarator")
    if declarator is not None:
        return _leaf_name(declarator)
    left = node.child_by_field_name("left")
    if left is not None:
        return left if left.type in ("identifier", "constant", "simple_identifier") else None
    if node.type == "impl_item":
        return node.child_by_field_name("type")
    for child in node.named_children:
        if child.type in _NAME_LEAVES:
            return child
        if child.type.endswith("variable_declaration"):
            return _leaf_name(child)
        if any(w in child.type for w in _BODY_WORDS):
            break
    return None


def _leaf_name(node: Node, depth: int = 0) -> Node | None:
    if node.type in _NAME_LEAVES:
        return node
    if depth > 6:
        return None
    inner = node.child_by_field_name("declarator") or node.child_by_field_name("name")
    if inner is not None:
        return _leaf_name(inner, depth + 1)
    for child in node.named_children:
        if child.type in _NAME_LEAVES:
            return child
    return None


def contains_type(node: Node, wanted: str, depth: int = 0) -> bool:
    if node.type == wanted:
        return True
    if depth > 6:
        return False
    inner = node.child_by_field_name("declarator")
    return inner is not None and contains_type(inner, wanted, depth + 1)


def _body(node: Node) -> Node | None:
    body = node.child_by_field_name("body")
    if body is not None:
        return body
    for child in node.named_children:
        if any(w in child.type for w in _BODY_WORDS):
            return child
    return None


_SPACES = re.compile(r"\s+")


def detail_of(src: bytes, node: Node, name: Node, kind: str) -> str:
    value = node.child_by_field_name("value")
    if node.type == "variable_declarator" and value is not None and kind in CALLABLES:
        body = _body(value)
        raw = src[value.start_byte : body.start_byte if body is not None else value.end_byte]
        return _clean_detail(raw)
    if kind in CALLABLES or kind in CONTAINERS or kind in ("Interface", "Module", "Namespace", "Object"):
        body = _body(node)
        stop = body.start_byte if body is not None else node.end_byte
        start = name.end_byte if name.end_byte <= stop else node.start_byte
        if body is None:
            params = node.child_by_field_name("parameters")
            ret = node.child_by_field_name("return_type") or node.child_by_field_name("result")
            last = max((n.end_byte for n in (params, ret) if n is not None), default=0)
            if last and last > start:
                stop = last
        raw = src[start:stop]
        if body is None:
            raw = raw.split(b"\n", 1)[0] if kind in CONTAINERS else raw
    else:
        typ = node.child_by_field_name("type")
        if typ is not None and typ.start_byte >= name.end_byte:
            raw = src[typ.start_byte : typ.end_byte]
        elif value is not None and value.type in ("arrow_function", "function_expression", "function"):
            params = value.child_by_field_name("parameters") or value.child_by_field_name("parameter")
            raw = src[params.start_byte : params.end_byte] if params is not None else b""
        else:
            raw = b""
    return _clean_detail(raw)


def _clean_detail(raw: bytes) -> str:
    text = _SPACES.sub(" ", raw.decode("utf-8", errors="replace")).strip()
    text = text.removesuffix("=>").rstrip().rstrip("{:=;").rstrip()
    if len(text) > MAX_DETAIL:
        text = text[: MAX_DETAIL - 1] + "…"
    return text

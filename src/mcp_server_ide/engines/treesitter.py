"""Outlines of source files with tree-sitter, for every language ``tree-sitter-language-pack`` bundles.

``tree-sitter-language-pack==0.13.0`` ships its grammars compiled in the wheel (1.x downloads them
at run time, which fails offline), so an outline needs no server and no network.

How it works, for any grammar: the grammar's own node types are classified once per language by
the words in their names (``class_declaration`` -> Class, ``function_item`` -> Function,
``method_signature`` -> Method, ``const_spec`` -> Constant...), then one tree-sitter query over
exactly those types finds every candidate definition in C. Python only names them, nests them by
containment and writes a ``detail`` (the text between the name and the body: the signature).
Local variables inside functions are left out, as VS Code's outline does; nested functions and
classes stay. A few grammars whose structure is data rather than code (JSON, YAML, TOML, Markdown)
get their own small table (keys, tables, sections).

Positions are 0-based lines and UTF-16 code-unit characters, as VS Code and LSP count them.
Kinds are the names of VS Code's ``SymbolKind``.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

# File extensions (and a few exact names) to the language pack's names.
EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".ino": "arduino",
    ".cu": "cuda",
    ".cuh": "cuda",
    ".java": "java",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".scala": "scala",
    ".sc": "scala",
    ".cs": "csharp",
    ".fs": "fsharp",
    ".fsi": "fsharp_signature",
    ".rb": "ruby",
    ".rake": "ruby",
    ".php": "php",
    ".lua": "lua",
    ".luau": "luau",
    ".swift": "swift",
    ".m": "objc",
    ".mm": "objc",
    ".dart": "dart",
    ".ex": "elixir",
    ".exs": "elixir",
    ".erl": "erlang",
    ".hrl": "erlang",
    ".hs": "haskell",
    ".ml": "ocaml",
    ".mli": "ocaml_interface",
    ".elm": "elm",
    ".clj": "clojure",
    ".cljs": "clojure",
    ".el": "elisp",
    ".lisp": "commonlisp",
    ".scm": "scheme",
    ".rkt": "racket",
    ".jl": "julia",
    ".r": "r",
    ".R": "r",
    ".pl": "perl",
    ".pm": "perl",
    ".sh": "bash",
    ".bash": "bash",
    ".zsh": "bash",
    ".fish": "fish",
    ".ps1": "powershell",
    ".psm1": "powershell",
    ".zig": "zig",
    ".nim": "nim",
    ".v": "v",
    ".sv": "verilog",
    ".vhd": "vhdl",
    ".vhdl": "vhdl",
    ".sol": "solidity",
    ".gd": "gdscript",
    ".groovy": "groovy",
    ".gradle": "groovy",
    ".hx": "haxe",
    ".hack": "hack",
    ".d": "d",
    ".f90": "fortran",
    ".f95": "fortran",
    ".f": "fortran",
    ".pas": "pascal",
    ".ada": "ada",
    ".adb": "ada",
    ".ads": "ada",
    ".cob": "cobol",
    ".odin": "odin",
    ".gleam": "gleam",
    ".cairo": "cairo",
    ".purs": "purescript",
    ".tf": "terraform",
    ".hcl": "hcl",
    ".nix": "nix",
    ".proto": "proto",
    ".thrift": "thrift",
    ".graphql": "graphql",
    ".gql": "graphql",
    ".sql": "sql",
    ".css": "css",
    ".scss": "scss",
    ".html": "html",
    ".htm": "html",
    ".vue": "vue",
    ".svelte": "svelte",
    ".astro": "astro",
    ".xml": "xml",
    ".json": "json",
    ".jsonc": "json",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".ini": "ini",
    ".md": "markdown",
    ".markdown": "markdown",
    ".rst": "rst",
    ".tex": "latex",
    ".bib": "bibtex",
    ".cmake": "cmake",
    ".mk": "make",
    ".vim": "vim",
    ".wgsl": "wgsl",
    ".glsl": "glsl",
    ".hlsl": "hlsl",
    ".tcl": "tcl",
    ".smali": "smali",
    ".prisma": "prisma",
    ".kdl": "kdl",
    ".ron": "ron",
    ".typ": "typst",
    ".wat": "wat",
    ".wast": "wast",
    ".ll": "llvm",
    ".mojo": "python",
    ".star": "starlark",
    ".bzl": "starlark",
    ".jsonnet": "jsonnet",
    ".pony": "pony",
    ".rego": "rego",
    ".bicep": "bicep",
    ".apex": "apex",
    ".cls": "apex",
    ".janet": "janet",
    ".fnl": "fennel",
    ".clar": "clarity",
    ".capnp": "capnp",
    ".agda": "agda",
    ".tsv": "tsv",
    ".csv": "csv",
    ".psv": "psv",
}
NAMES: dict[str, str] = {
    "Makefile": "make",
    "makefile": "make",
    "GNUmakefile": "make",
    "Dockerfile": "dockerfile",
    "CMakeLists.txt": "cmake",
    "BUILD": "starlark",
    "WORKSPACE": "starlark",
    "meson.build": "meson",
    "requirements.txt": "requirements",
    ".gitignore": "gitignore",
    ".gitattributes": "gitattributes",
    "Rakefile": "ruby",
    "Gemfile": "ruby",
}

# VS Code's SymbolKind, by name (index + 1 is the LSP number).
SYMBOL_KINDS = (
    "File",
    "Module",
    "Namespace",
    "Package",
    "Class",
    "Method",
    "Property",
    "Field",
    "Constructor",
    "Enum",
    "Interface",
    "Function",
    "Variable",
    "Constant",
    "String",
    "Number",
    "Boolean",
    "Array",
    "Object",
    "Key",
    "Null",
    "EnumMember",
    "Struct",
    "Event",
    "Operator",
    "TypeParameter",
)

CONTAINERS = {"Class", "Struct", "Interface", "Object", "Enum"}
CALLABLES = {"Function", "Method", "Constructor", "Operator"}
MAX_DETAIL = 160

# Node types whose last word says "this declares something".
_DECL_SUFFIXES = {
    "declaration",
    "definition",
    "item",
    "specifier",
    "spec",
    "signature",
    "elem",
    "entry",
    "constant",
    "member",
    "variant",
    "case",
    "assignment",
    "element",
    "def",
    "statement",
    "declarator",
    "method",
}
# Words that make a node type anything but a named definition.
_SKIP_WORDS = {
    "import",
    "export",
    "use",
    "using",
    "parameter",
    "param",
    "parameters",
    "friend",
    "static_assert",
    "global",
    "extern",
    "attribute",
    "ambient",
    "template",
    "decorated",
    "anonymous",
    "lambda",
    "arrow",
    "expression",
    "literal",
    "catch",
    "for",
    "pattern",
    "generic",
    "augmented",
    "call",
    "access",
    "invocation",
    "include",
    "require",
    "package",
    "preproc_ifdef",
    "explicit",
    "alias_clause",
    "goto",
    "return",
    "if",
    "switch",
    "default",
    "class_static",
    "index",
    "labeled",
    "expression_statement",
    "field_initializer",
    "structured",
    "abstract_function",
    "abstract_pointer",
    "abstract_array",
    "type_parameter",
    "optional",
    "variadic",
    "implicit",
    "local_variable_type",
    "heritage",
    "await",
}
# Exact node types with a fixed meaning, checked before the word rules.
_EXACT: dict[str, str | None] = {
    "init_declaration": "Constructor",
    "deinit_declaration": "Method",
    "secondary_constructor": "Constructor",
    "variable_declarator": "Variable",
    "init_declarator": None,
    "function_declarator": None,
    "public_field_definition": "Property",
    "field_definition": "Property",
    "enumerator": "EnumMember",
    "impl_item": "Object",
    "mod_item": "Module",
    "internal_module": "Namespace",
    "module": "Module",
    "class": "Class",
    "method": "Method",
    "singleton_method": "Method",
    "singleton_class": "Class",
    "declaration": "Variable",
    "preproc_def": "Constant",
    "preproc_function_def": "Function",
    "type_spec": "TypeParameter",
    "union_item": "Struct",
    "static_item": "Variable",
    "type_item": "TypeParameter",
    "macro_definition": "Function",
    "local_function_statement": "Function",
    "lexical_declaration": None,
    "variable_declaration": None,
    "var_declaration": None,
    "const_declaration": None,
    "type_declaration": None,
    "local_declaration_statement": None,
    "short_var_declaration": "Variable",
    "let_declaration": "Variable",
    "assignment": "Variable",
    "enum_assignment": "EnumMember",
    "construct_signature": "Constructor",
    "object_declaration": "Object",
    "object_definition": "Object",
    "val_definition": "Variable",
    "var_definition": "Variable",
    "property_element": "Property",
    "const_element": "Constant",
    "enum_constant": "EnumMember",
    "field_declaration": "Field",
    "namespace_definition": "Namespace",
    "namespace_declaration": "Namespace",
    "file_scoped_namespace_declaration": "Namespace",
    "module_declaration": "Module",
    "operator_declaration": "Operator",
    "conversion_operator_declaration": "Operator",
    "event_declaration": "Event",
    "event_field_declaration": "Event",
    "indexer_declaration": "Property",
    "delegate_declaration": "Function",
    "destructor_declaration": "Method",
    "typealias_declaration": "TypeParameter",
    "type_alias_declaration": "TypeParameter",
    "type_alias": "TypeParameter",
    "type_definition": "TypeParameter",
    "alias_declaration": "TypeParameter",
    "constant_declaration": "Constant",
    "method_elem": "Method",
    "expression_statement": None,
    "return_statement": None,
    "call_signature": None,
    "index_signature": None,
    "protocol_function_declaration": "Method",
    "protocol_property_declaration": "Property",
    "class_heritage": None,
    "class_body": None,
    "enum_body": None,
    "field_declaration_list": None,
}
_WORD_KINDS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("constructor", "construct"), "Constructor"),
    (("interface", "protocol", "trait"), "Interface"),
    (("enum_member", "enum_entry", "enum_variant", "enum_case", "enum_constant"), "EnumMember"),
    (("enum",), "Enum"),
    (("struct", "union"), "Struct"),
    (("class", "record"), "Class"),
    (("impl",), "Object"),
    (("namespace",), "Namespace"),
    (("module", "mod"), "Module"),
    (("method",), "Method"),
    (("function", "func", "fn", "procedure", "subroutine", "macro", "sub"), "Function"),
    (("operator",), "Operator"),
    (("event",), "Event"),
    (("typedef", "typealias", "type"), "TypeParameter"),
    (("property",), "Property"),
    (("field",), "Field"),
    (("const", "constant"), "Constant"),
    (("var", "val", "variable", "let", "static", "assignment"), "Variable"),
)
# Specifiers (C/C++ struct_specifier...) name a type only when they have a body.
_NEEDS_BODY_SUFFIXES = ("specifier",)
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
# Data formats: node type -> (kind, field holding the name, whether to keep nesting).
_DATA_TABLES: dict[str, dict[str, tuple[str, str | None]]] = {
    "json": {"pair": ("Property", "field:key")},
    "yaml": {"block_mapping_pair": ("Key", "field:key"), "flow_pair": ("Key", "field:key")},
    "toml": {"table": ("Module", None), "table_array_element": ("Array", None), "pair": ("Property", None)},
    "markdown": {"section": ("String", None)},
    "rst": {"section": ("String", "child:title")},
    "ini": {"section": ("Module", "child:section_name"), "setting": ("Property", "child:setting_name")},
    "properties": {"property": ("Property", "child:key")},
    # Grammars whose node names the generic rules cannot read.
    "proto": {
        "message": ("Struct", "child:message_name"),
        "service": ("Interface", "child:service_name"),
        "rpc": ("Method", "child:rpc_name"),
        "enum": ("Enum", "child:enum_name"),
        "enum_field": ("EnumMember", "child:identifier"),
        "field": ("Field", "child:identifier"),
    },
    "zig": {
        "FnProto": ("Function", "field:function"),
        "VarDecl": ("Variable", "field:variable_type_function"),
        "ContainerField": ("Field", "field:field_member"),
    },
    "tcl": {"procedure": ("Function", "field:name")},
    "hcl": {"block": ("Module", "labels"), "attribute": ("Property", "child:identifier")},
    "terraform": {"block": ("Module", "labels"), "attribute": ("Property", "child:identifier")},
    "elixir": {"call": ("Function", "elixir")},
    "dockerfile": {"from_instruction": ("Module", "text")},
}
_ELIXIR_DEFS = {
    "defmodule": "Module",
    "def": "Function",
    "defp": "Function",
    "defmacro": "Function",
    "defmacrop": "Function",
    "defprotocol": "Interface",
    "defimpl": "Object",
    "defstruct": "Struct",
    "defguard": "Function",
    "defdelegate": "Function",
    "defexception": "Struct",
}


@dataclass
class Symbol:
    name: str
    kind: str
    start: tuple[int, int]
    end: tuple[int, int]
    sel_start: tuple[int, int]
    sel_end: tuple[int, int]
    detail: str = ""
    children: list[Symbol] = field(default_factory=list)
    start_byte: int = 0
    end_byte: int = 0

    def to_seed(self) -> dict[str, Any]:
        """The seed's shape: ``{name, kind, range, text, detail, children?}``."""
        out: dict[str, Any] = {
            "name": self.name,
            "kind": self.kind,
            "range": {
                "startLine": self.start[0],
                "startCharacter": self.start[1],
                "endLine": self.end[0],
                "endCharacter": self.end[1],
            },
            "selectionRange": {
                "startLine": self.sel_start[0],
                "startCharacter": self.sel_start[1],
                "endLine": self.sel_end[0],
                "endCharacter": self.sel_end[1],
            },
            "text": self.name,
            "detail": self.detail,
        }
        if self.children:
            out["children"] = [c.to_seed() for c in self.children]
        return out


def language_for(path: str | Path) -> str | None:
    """The language pack's name for a file, from its name or extension; None when none fits."""
    p = Path(path)
    if p.name in NAMES:
        return NAMES[p.name]
    lang = EXTENSIONS.get(p.suffix) or EXTENSIONS.get(p.suffix.lower())
    if lang is None and p.suffix.lower() == ".dockerfile":
        return "dockerfile"
    return lang if lang in supported_languages() else None


@lru_cache(maxsize=1)
def supported_languages() -> frozenset[str]:
    import typing

    import tree_sitter_language_pack as pack

    return frozenset(typing.get_args(pack.SupportedLanguage))


_parsers: dict[tuple[str, int], Any] = {}
_parsers_lock = threading.Lock()


def _parser(lang: str) -> Any:
    """One parser per (language, thread): tree-sitter parsers are not thread-safe."""
    key = (lang, threading.get_ident())
    parser = _parsers.get(key)
    if parser is None:
        from tree_sitter_language_pack import get_parser

        parser = get_parser(lang)  # type: ignore[arg-type]
        with _parsers_lock:
            _parsers[key] = parser
    return parser


@dataclass(frozen=True)
class _Plan:
    query: Any
    kinds: dict[str, str | None]
    data: dict[str, tuple[str, str | None]] | None


def classify(node_type: str) -> str | None:
    """The SymbolKind a node type of any grammar declares, or None if it declares nothing named."""
    if node_type in _EXACT:
        return _EXACT[node_type]
    words = node_type.split("_")
    if len(words) < 2 or words[-1] not in _DECL_SUFFIXES:
        return None
    if any(w in _SKIP_WORDS for w in words) or any(s in node_type for s in _SKIP_WORDS if "_" in s):
        return None
    if words[-1] == "declarator":
        return None
    if words[-1] == "statement" and not ({"function", "class", "method"} & set(words)):
        return None
    head = words[:-1]
    joined = "_".join(words)
    for keys, kind in _WORD_KINDS:
        for key in keys:
            if ("_" in key and key in joined) or key in head:
                return kind
    if words[-1] in ("constant",):
        return "Constant"
    return None


@cache
def _plan(lang: str) -> _Plan | None:
    from tree_sitter import Query
    from tree_sitter_language_pack import get_language

    language = get_language(lang)  # type: ignore[arg-type]
    data = _DATA_TABLES.get(lang)
    kinds: dict[str, str | None] = {}
    for i in range(language.node_kind_count):
        if not language.node_kind_is_named(i) or not language.node_kind_is_visible(i):
            continue
        name = language.node_kind_for_id(i)
        if not name or name in kinds:
            continue
        if data is not None:
            if name in data:
                kinds[name] = data[name][0]
            continue
        kind = classify(name)
        if kind is not None:
            kinds[name] = kind
    if not kinds:
        return None
    source = "[" + " ".join(f"({t})" for t in sorted(kinds)) + "] @def"
    try:
        query = Query(language, source)
    except Exception:
        # A type the query language will not take (rare): try them one by one and keep the good ones.
        good = []
        for t in sorted(kinds):
            try:
                Query(language, f"({t}) @def")
                good.append(t)
            except Exception:
                kinds.pop(t, None)
        if not good:
            return None
        query = Query(language, "[" + " ".join(f"({t})" for t in good) + "] @def")
    return _Plan(query=query, kinds=kinds, data=data)


class _Positions:
    """Byte (row, column) points to (line, UTF-16 character)."""

    def __init__(self, src: bytes) -> None:
        self.src = src
        self._lines: list[bytes] | None = None

    def char(self, point: tuple[int, int]) -> tuple[int, int]:
        row, col = point
        if col == 0:
            return row, 0
        if self._lines is None:
            self._lines = self.src.split(b"\n")
        line = self._lines[row] if row < len(self._lines) else b""
        prefix = line[:col]
        if prefix.isascii():
            return row, col
        text = prefix.decode("utf-8", errors="replace")
        return row, len(text.encode("utf-16-le")) // 2


def outline(text: str | bytes, lang: str) -> list[Symbol]:
    """The nested symbols of ``text`` in language ``lang`` (a language pack name)."""
    from tree_sitter import QueryCursor

    plan = _plan(lang)
    if plan is None:
        return []
    src = text.encode("utf-8") if isinstance(text, str) else text
    tree = _parser(lang).parse(src)
    captures = QueryCursor(plan.query).captures(tree.root_node)
    nodes = captures.get("def", [])
    nodes.sort(key=lambda n: (n.start_byte, -n.end_byte))
    pos = _Positions(src)
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


# ----------------------------------------------------------------------------- naming


def _text(src: bytes, node: Any) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


def _name_node(node: Any) -> Any | None:
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


def _leaf_name(node: Any, depth: int = 0) -> Any | None:
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


def _contains_type(node: Any, wanted: str, depth: int = 0) -> bool:
    if node.type == wanted:
        return True
    if depth > 6:
        return False
    inner = node.child_by_field_name("declarator")
    return inner is not None and _contains_type(inner, wanted, depth + 1)


def _body(node: Any) -> Any | None:
    body = node.child_by_field_name("body")
    if body is not None:
        return body
    for child in node.named_children:
        if any(w in child.type for w in _BODY_WORDS):
            return child
    return None


_SPACES = re.compile(r"\s+")


def _detail(src: bytes, node: Any, name: Any, kind: str) -> str:
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


def _code_symbol(
    node: Any, kind: str | None, src: bytes, pos: _Positions, parent: Symbol | None, stack: list[Symbol]
) -> Symbol | None:
    if kind is None:
        return None
    ntype = node.type
    if ntype.endswith(_NEEDS_BODY_SUFFIXES) and node.child_by_field_name("body") is None:
        return None
    in_callable = any(s.kind in CALLABLES for s in stack)
    if kind in ("Variable", "Constant", "Field", "Property") and in_callable:
        return None  # locals are not part of an outline
    name = _name_node(node)
    if name is None:
        return None
    name_text = _text(src, name).strip()
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
        if declarator is not None and _contains_type(declarator, "function_declarator"):
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
            name_text = f"impl {_text(src, trait)} for {name_text}"
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
        start=pos.char(tuple(start)),
        end=pos.char(tuple(end)),
        sel_start=pos.char(tuple(name.start_point)),
        sel_end=pos.char(tuple(name.end_point)),
        detail=_detail(src, node, name, kind),
        start_byte=node.start_byte,
        end_byte=node.end_byte,
    )


def _data_symbol(
    node: Any, spec: tuple[str, str | None], src: bytes, pos: _Positions, lang: str, stack: list[Symbol]
) -> Symbol | None:
    kind, how = spec
    name: Any | None = None
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
        text = _text(src, name).strip().strip("\"'") if name is not None else ""
    elif how is not None and how.startswith("child:"):
        name = next((c for c in node.named_children if c.type == how[6:]), None)
        text = _text(src, name).strip().strip("[]").strip() if name is not None else ""
    elif how == "labels":  # HCL: resource "type" "name" {
        parts = []
        for child in node.named_children:
            if child.type in ("identifier", "string_lit"):
                name = name or child
                parts.append(_text(src, child).strip().strip('"'))
            elif child.type == "block_start":
                break
        text = " ".join(parts)
    elif how == "elixir":
        target = node.child_by_field_name("target")
        word = _text(src, target) if target is not None else ""
        if word not in _ELIXIR_DEFS:
            return None
        kind = _ELIXIR_DEFS[word]
        args = next((c for c in node.named_children if c.type == "arguments"), None)
        first = args.named_children[0] if args is not None and args.named_children else None
        if first is not None and first.type == "call" and first.child_by_field_name("target") is not None:
            first = first.child_by_field_name("target")
        if first is None:
            if word != "defstruct":
                return None
            first, text = target, "__struct__"
        name = first
        text = text or _text(src, first).strip()
    elif how == "text":
        name = node
        text = _text(src, node).strip().split("\n", 1)[0][:120]
    elif lang == "markdown":
        heading = node.named_children[0] if node.named_children else None
        if heading is None or "heading" not in heading.type:
            return None
        name = heading
        text = _text(src, heading).strip().lstrip("#").strip().split("\n", 1)[0]
    else:
        name = next(
            (c for c in node.named_children if c.type in ("bare_key", "dotted_key", "quoted_key")), None
        )
        text = _text(src, name).strip() if name is not None else ""
    if (
        kind == "Function"
        and stack
        and stack[-1].kind in CONTAINERS | {"Interface", "Module"}
        and lang != "elixir"
    ):
        kind = "Method"
    if kind == "Variable" and name is not None and _text(src, node).lstrip().startswith("const"):
        kind = "Constant"
    if name is None or not text:
        return None
    return Symbol(
        name=text,
        kind=kind,
        start=pos.char(tuple(node.start_point)),
        end=pos.char(tuple(node.end_point)),
        sel_start=pos.char(tuple(name.start_point)),
        sel_end=pos.char(tuple(name.end_point)),
        detail=_detail(src, node, name, kind) if kind in CALLABLES and how not in ("elixir",) else "",
        start_byte=node.start_byte,
        end_byte=node.end_byte,
    )


def identifier_at(text: str, lang: str | None, line: int, character: int) -> tuple[int, int, int] | None:
    """The identifier on ``line`` at or nearest to ``character``: ``(line, start, end)`` in UTF-16 units.

    A caller's position a little off the identifier (on the space before it, on the ``(`` after it)
    snaps to the closest identifier on the same line; None when the line has none.
    """
    lines = text.split("\n")
    if line < 0 or line >= len(lines):
        return None
    row = lines[line]
    best: tuple[int, int, int] | None = None
    for m in _IDENT.finditer(row):
        a = _utf16_len(row[: m.start()])
        b = a + _utf16_len(m.group(0))
        if a <= character < b:
            dist = 0.0
        elif character == b:
            dist = 0.5  # just after a name (on its `(`): that name, unless another starts right here
        else:
            dist = float(a - character if character < a else character - b)
        if m.group(0) in _KEYWORDS:
            dist += 1.5
        score = (dist, 0)
        if best is None or score < best[0]:
            best = (score, a, b)  # type: ignore[assignment]
    if best is None:
        return None
    return line, best[1], best[2]  # type: ignore[index]


_IDENT = re.compile(r"[^\W\d]\w*|\$\w*", re.UNICODE)
_KEYWORDS = {
    "def",
    "class",
    "function",
    "const",
    "let",
    "var",
    "return",
    "import",
    "from",
    "export",
    "async",
    "await",
    "new",
    "public",
    "private",
    "protected",
    "static",
    "self",
    "this",
    "fn",
    "func",
    "pub",
    "if",
    "else",
    "for",
    "while",
    "in",
    "of",
    "as",
    "is",
    "not",
    "and",
    "or",
    "lambda",
    "interface",
    "type",
}


def _utf16_len(s: str) -> int:
    return len(s) if s.isascii() else len(s.encode("utf-16-le")) // 2

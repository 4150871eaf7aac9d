"""What a node type declares: VS Code's SymbolKind names, the word rules that classify the node
types of any grammar (``class_declaration`` -> Class, ``function_item`` -> Function...), and the
small per-language tables for grammars whose structure is data (JSON, YAML, TOML...) or that the
word rules cannot read."""

from __future__ import annotations

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
# Data formats: node type -> (kind, field holding the name, whether to keep nesting).
DATA_TABLES: dict[str, dict[str, tuple[str, str | None]]] = {
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
ELIXIR_DEFS = {
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

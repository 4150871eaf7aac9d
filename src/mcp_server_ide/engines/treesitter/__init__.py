"""Outlines of source files with tree-sitter, for every language ``tree-sitter-language-pack`` bundles.

``tree-sitter-language-pack==0.13.0`` ships its grammars compiled in the wheel (1.x downloads them
at run time, which fails offline), so an outline needs no server and no network.

How it works, for any grammar: the grammar's own node types are classified once per language by
the words in their names (``class_declaration`` -> Class, ``function_item`` -> Function,
``method_signature`` -> Method, ``const_spec`` -> Constant...), then one tree-sitter query over
exactly those types finds every candidate definition in C. Python only names them, nests them by
containment and writes a ``detail`` (the text between the name and the body: the signature).
A few grammars whose structure is data rather than code (JSON, YAML, TOML, Markdown) get their own
small table (keys, tables, sections).

Positions are 0-based lines and UTF-16 code-unit characters, as VS Code and LSP count them.
Kinds are the names of VS Code's ``SymbolKind``. Nothing here imports tree-sitter until a file is
parsed (stdio start-up stays light).

Modules: ``languages`` (file name -> grammar), ``kinds`` (node type -> SymbolKind), ``parsers``
(parsers per thread, the query plan per language), ``nodes`` (a node's name, body and detail),
``outlines`` (the outline of a text or file), ``symbols`` (Symbol), ``positions`` (bytes -> UTF-16),
``identifiers`` (the identifier at a position).
"""

from .identifiers import identifier_at
from .kinds import SYMBOL_KINDS
from .languages import language_for, supported_languages
from .outlines import outline, outline_file
from .parsers import parser_for
from .positions import Positions
from .symbols import Symbol

__all__ = [
    "SYMBOL_KINDS",
    "Positions",
    "Symbol",
    "identifier_at",
    "language_for",
    "outline",
    "outline_file",
    "parser_for",
    "supported_languages",
]

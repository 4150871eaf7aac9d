"""Parsers (one per language and thread) and each language's outline plan: the one query that
finds every candidate definition, built once per language from the grammar's own node types."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from .kinds import DATA_TABLES, classify

if TYPE_CHECKING:
    from tree_sitter import Parser, Query

_parsers: dict[tuple[str, int], Parser] = {}
_parsers_lock = threading.Lock()


def parser_for(lang: str) -> Parser:
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
class Plan:
    query: Query
    kinds: dict[str, str | None]
    data: dict[str, tuple[str, str | None]] | None


@cache
def plan_for(lang: str) -> Plan | None:
    """The outline plan of a language (cached), or None when its grammar declares nothing named."""
    from tree_sitter import Query
    from tree_sitter_language_pack import get_language

    language = get_language(lang)  # type: ignore[arg-type]
    data = DATA_TABLES.get(lang)
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
    return Plan(query=query, kinds=kinds, data=data)

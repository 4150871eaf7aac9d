"""Code intelligence for the code tools: symbols, references, definitions, refactors, problems, formatting.

Engines used: tree-sitter for outlines and for snapping a position to the nearest identifier;
the workspace's language servers (:mod:`..lsp`) for definition, references, rename, diagnostics and
TS/JS formatting and extraction; rope for Python extraction (and rename when no server can);
ruff for Python lint and format. Multi-file results go through :mod:`..multiedit`.

Cross-file answers are never partial in silence: they wait for the server to load the project
(:meth:`LanguageServer.wait_ready` plus the adapter's probe) and carry ``partial: true`` and a
``reason`` when the wait ran out or the server cannot see the whole project. A rename is refused
rather than applied from a partial view.

- :mod:`.query`: the steps every query shares (the file, its server made ready, positions, partial marks).
- :mod:`.outline`: ``symbols``, the tree-sitter outline refined by an idle server.
- :mod:`.navigation`: ``references`` (text matches without a server; ``grouped_references``, the compact
  shape) and ``definition``.
- :mod:`.refactoring`: ``refactor``, which picks :mod:`.rename` or :mod:`.extract` and previews or applies.
- :mod:`.rename`: the server's rename, rope for Python; the rule for a new name.
- :mod:`.shorthand`: references and renames followed through ``module.exports = { name }`` to the importers.
- :mod:`.extract`: extract function/variable (rope for Python, the server's code actions for TS/JS).
- :mod:`.problems`: ``problems`` from ruff, the server's diagnostics, or tree-sitter syntax errors.
- :mod:`.ruff`: running ruff on a file's text (check and format).
- :mod:`.formatting`: ``format_plan`` and ``format_file``.
"""

from __future__ import annotations

from .formatting import format_file, format_plan
from .navigation import definition, grouped_references, lean_definition, references
from .outline import symbols
from .problems import problems
from .refactoring import refactor

__all__ = [
    "definition",
    "format_file",
    "format_plan",
    "grouped_references",
    "lean_definition",
    "problems",
    "refactor",
    "references",
    "symbols",
]

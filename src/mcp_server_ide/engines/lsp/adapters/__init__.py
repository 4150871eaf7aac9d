"""One adapter per language server: how to find and start it, and what to tell it.

An adapter knows nothing of threads or JSON-RPC; :mod:`..server` runs it. Built-in adapters:
``python`` (basedpyright), ``typescript`` (typescript-language-server + tsserver from
typescript@6), and the servers named in configuration (gopls, clangd, rust-analyzer when they
are on PATH and run, plus anything in the user's ``lsp.json``; see :mod:`.configured`).
"""

from __future__ import annotations

from .base import Adapter, Unavailable
from .configured import configured_adapters
from .python import PythonAdapter
from .typescript import TypeScriptAdapter


def all_adapters() -> list[Adapter]:
    """Every adapter this machine can offer, built-ins first (a configured one may replace them)."""
    adapters: dict[str, Adapter] = {"python": PythonAdapter(), "typescript": TypeScriptAdapter()}
    for adapter in configured_adapters():
        adapters[adapter.language] = adapter
    return list(adapters.values())


__all__ = ["Adapter", "PythonAdapter", "TypeScriptAdapter", "Unavailable", "all_adapters"]

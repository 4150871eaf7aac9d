"""Modules imported on first use, so stdio start-up imports only what a first call needs."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class LazyModule:
    """Stands for a module until one of its attributes is read; then imports it (thread-safe:
    ``importlib.import_module`` holds the import lock)."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attr)

"""The SDK imported without what a stdio server never runs (~12 MB of resident memory, and time).

``import mcp`` loads the whole SDK: its HTTP server stack, its OAuth, its clients. Most of that is
bound at import (class bases, ``from x import Y``) and has to load; four imports do not:

- **optional imports** the libraries themselves guard with ``except ImportError``: uvicorn (and
  click, watchfiles, multiprocessing) for ``sse_starlette``'s graceful drain of a *uvicorn* server;
  rich for the SDK's log handler (``configure_logging``; the CLI has set up logging before, so
  ``logging.basicConfig`` drops that handler anyway); python-multipart for starlette's form parsing.
  Here those importers are told the module is not installed (:data:`OPTIONAL`); any other importer,
  a plugin included, gets the real module.
- **cryptography**, which ``mcp.server.request_state`` imports to seal 2026-era ``requestState``
  (AES-GCM): that module gets placeholders (:data:`DEFERRED`), and the server a codec that builds
  the SDK's own ``AESGCMRequestStateCodec`` at the first seal or unseal
  (:func:`request_state_security`). Any use of a placeholder imports cryptography for real and
  puts the real names back where the placeholders were (:func:`resolve`).

Only the stdio door asks for this (``cli``); the HTTP doors and the hosted service import the SDK
as it is. When the SDK no longer imports the way this module expects, the lean import fails and
the SDK is imported again in full (logged, nothing else changes). ``MCP_IDE_LEAN_IMPORTS=0`` turns
it off. Standard library only: it runs before the SDK loads.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import logging
import os
import sys
import threading
from collections.abc import Sequence
from types import FrameType, ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server.mcpserver import RequestStateSecurity

log = logging.getLogger(__name__)

ENV_SWITCH = "MCP_IDE_LEAN_IMPORTS"
SDK_MODULE = "mcp.server.mcpserver"
"""What the server imports from the SDK (``import mcp`` loads everything else with it)."""
OPTIONAL: dict[str, frozenset[str]] = {
    "uvicorn": frozenset({"sse_starlette.sse"}),
    "rich": frozenset({"mcp.server.mcpserver.utilities.logging"}),
    "python_multipart": frozenset({"starlette.formparsers", "starlette.requests"}),
    "multipart": frozenset({"starlette.formparsers", "starlette.requests"}),
}
"""Top-level module -> the importers told it is not installed (each guards the import)."""
DEFERRED_BY = "mcp.server.request_state"
DEFERRED: dict[str, tuple[str, ...]] = {
    "cryptography.exceptions": ("InvalidTag",),
    "cryptography.hazmat.primitives.ciphers.aead": ("AESGCM",),
    "cryptography.hazmat.primitives.hashes": ("SHA256",),
    "cryptography.hazmat.primitives.kdf.hkdf": ("HKDF",),
}
"""Module -> the names :data:`DEFERRED_BY` takes from it, given placeholders until first used."""
_PACKAGES = frozenset(name.rsplit(".", k)[0] for name in DEFERRED for k in range(1, name.count(".") + 1))
_IMPORT_MACHINERY = frozenset(
    {"importlib._bootstrap", "importlib._bootstrap_external", "importlib", __name__}
)

_lock = threading.RLock()
_placeholders: list[Placeholder] = []
_deferring = False
_finder: _Finder | None = None


def enabled_by_environment() -> bool:
    return os.environ.get(ENV_SWITCH, "1").strip().lower() not in ("0", "false", "no", "off")


class Placeholder:
    """Stands for ``module.name`` in :data:`DEFERRED_BY` until used: a call or an attribute read
    imports the real module (:func:`resolve`) and goes to the real object."""

    def __init__(self, module: str, name: str) -> None:
        self.module = module
        self.name = name

    def real(self) -> Any:
        resolve()
        return getattr(importlib.import_module(self.module), self.name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.real()(*args, **kwargs)

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):  # introspection (copy, inspect.unwrap) imports nothing
            raise AttributeError(attr)
        return getattr(self.real(), attr)

    def __repr__(self) -> str:
        return f"<deferred {self.module}.{self.name}>"


class _PlaceholderModule(ModuleType):
    """A deferred module while :data:`DEFERRED_BY` imports from it: its known names are placeholders;
    any other name is missing (the import fails, and the SDK is imported in full)."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name not in DEFERRED.get(self.__name__, ()):
            raise AttributeError(name)
        with _lock:
            placeholder = Placeholder(self.__name__, name)
            _placeholders.append(placeholder)
        setattr(self, name, placeholder)
        return placeholder


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        top = fullname.partition(".")[0]
        optional_for = OPTIONAL.get(top)
        if optional_for is None and not (_deferring and top == "cryptography"):
            return None
        importer = _importer(sys._getframe(1))
        if optional_for is not None and importer in optional_for:
            raise ModuleNotFoundError(f"No module named {fullname!r} (not loaded over stdio)", name=fullname)
        if _deferring and importer == DEFERRED_BY and (fullname in DEFERRED or fullname in _PACKAGES):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=fullname in _PACKAGES)
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = _PlaceholderModule(spec.name)
        if spec.submodule_search_locations is not None:
            module.__path__ = []
        return module

    def exec_module(self, module: ModuleType) -> None:
        return None


def _importer(frame: FrameType | None) -> str | None:
    """The module whose code runs the import (the first frame outside the import machinery)."""
    while frame is not None:
        name = frame.f_globals.get("__name__")
        if name not in _IMPORT_MACHINERY:
            return name
        frame = frame.f_back
    return None


def import_sdk() -> None:
    """Import the SDK leanly (see the module docstring); in full when off or when that fails."""
    global _deferring, _finder
    if not enabled_by_environment() or SDK_MODULE in sys.modules:
        return
    if _finder is None:
        _finder = _Finder()
        sys.meta_path.insert(0, _finder)
    _deferring = "cryptography" not in sys.modules
    try:
        importlib.import_module(SDK_MODULE)
    except Exception as exc:
        log.warning("the lean SDK import failed (%s: %s); importing it in full", type(exc).__name__, exc)
        _undo()
        importlib.import_module(SDK_MODULE)
    finally:
        _deferring = False
        for name in (*DEFERRED, *_PACKAGES):  # a later `import cryptography` gets the real one
            if isinstance(sys.modules.get(name), _PlaceholderModule):
                del sys.modules[name]


def _undo() -> None:
    global _finder
    if _finder is not None:
        sys.meta_path.remove(_finder)
        _finder = None
    with _lock:
        _placeholders.clear()
    for name in [n for n in sys.modules if n == "mcp" or n.startswith("mcp.")]:
        del sys.modules[name]
    for name in (*DEFERRED, *_PACKAGES):
        if isinstance(sys.modules.get(name), _PlaceholderModule):
            del sys.modules[name]


def deferred() -> bool:
    """True when the SDK holds placeholders for cryptography (the server then needs
    :func:`request_state_security`)."""
    with _lock:
        return bool(_placeholders)


def resolve() -> None:
    """Import what was deferred and put the real names wherever a placeholder was bound."""
    with _lock:
        if not _placeholders:
            return
        real = {id(p): getattr(importlib.import_module(p.module), p.name) for p in _placeholders}
        for module in list(sys.modules.values()):
            namespace = getattr(module, "__dict__", None)
            if not isinstance(namespace, dict):
                continue
            for key, value in list(namespace.items()):
                if type(value) is Placeholder and id(value) in real:
                    namespace[key] = real[id(value)]
        _placeholders.clear()


class DeferredCodec:
    """The SDK's own ``AESGCMRequestStateCodec`` under a key made now, built at its first use (the
    SDK's default, ``RequestStateSecurity.ephemeral()``, builds it with the server)."""

    def __init__(self) -> None:
        self._key = os.urandom(32)
        self._codec: Any = None

    def _real(self) -> Any:
        with _lock:
            if self._codec is None:
                resolve()
                from mcp.server.mcpserver import AESGCMRequestStateCodec

                self._codec = AESGCMRequestStateCodec([self._key])
            return self._codec

    def seal(self, payload: bytes) -> str:
        return self._real().seal(payload)

    def unseal(self, token: str) -> bytes:
        return self._real().unseal(token)


def request_state_security() -> RequestStateSecurity | None:
    """What ``MCPServer(request_state_security=...)`` takes: the SDK's default (None) unless
    cryptography was deferred, then the same policy with :class:`DeferredCodec`."""
    if not deferred():
        return None
    from mcp.server.mcpserver import RequestStateSecurity

    return RequestStateSecurity(codec=DeferredCodec())

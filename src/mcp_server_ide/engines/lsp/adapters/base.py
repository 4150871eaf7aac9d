"""What every language adapter provides."""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar, Protocol


class Unavailable(Exception):
    """The server for a language cannot run here; the message says why and what to do."""


def env_float(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, "") or default)
    except ValueError:
        return default


class RunningServer(Protocol):
    """What an adapter's :meth:`Adapter.probe` uses of a started :class:`..server.LanguageServer`."""

    root: Path
    generation: int
    """Counts the server's starts: what an adapter told one process, the next one does not know."""

    def request(self, method: str, params: object, timeout: float = 60.0, *, typed: bool = True) -> Any: ...


@dataclass(frozen=True)
class Launch:
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    """Added to a scrubbed copy of our environment."""


class Adapter(ABC):
    """A language server for some file extensions."""

    language: str = ""
    """Our key for the server (one server per workspace and language)."""
    server_name: str = ""
    extensions: Mapping[str, str] = MappingProxyType({})
    """File extension -> LSP languageId (a class's own table; a configured adapter's, per instance)."""
    ready_log: ClassVar[tuple[str, str] | None] = None
    """(busy, ready) regexes over ``window/logMessage`` for servers that announce project loading only there:
    the server counts as loading from its start (or a *busy* line) until a *ready* line."""
    client_requests: ClassVar[tuple[str, ...]] = ()
    """Server -> client requests of this server's own (non-LSP) that we accept with a null answer."""
    trusted: bool = True
    """Set from the workspace policy: an untrusted workspace's own programs (its virtualenv) are never run."""
    node: bool = False
    """A node.js server: gets ``--max-old-space-size`` from the memory cap."""

    @abstractmethod
    def launch(self, root: Path) -> Launch:
        """How to start the server for a workspace root; raises :class:`Unavailable`."""

    def initialization_options(self, root: Path) -> Any:
        return None

    def settings(self, root: Path, section: str | None) -> Any:
        """The answer to ``workspace/configuration`` for one section (None: everything)."""
        return None

    def settings_for(self, root: Path, section: str | None, scope: Path | None) -> Any:
        """The same for one document (``scope``, inside ``root``) when the server names one."""
        return self.settings(root, section)

    def language_id(self, path: Path) -> str:
        return self.extensions.get(path.suffix.lower(), self.language)

    def handles(self, path: Path) -> bool:
        return path.suffix.lower() in self.extensions

    def completeness(self, root: Path, path: Path) -> str | None:
        """Why a cross-file answer for ``path`` may miss files (None when the server sees the whole project)."""
        return None

    def project_view(self, server: RunningServer, path: Path) -> str | None:
        """Give the server the whole project of ``path`` where it would not see it by itself.

        Runs before every query on ``path`` (cheap when nothing changed); returns why the view stays
        partial, or None.
        """
        return None

    def probe(self, server: RunningServer, path: Path) -> str | None:
        """Make sure the server has loaded the project of ``path`` (a request it must finish first).

        Returns why answers may be partial, or None. Runs after :meth:`LanguageServer.wait_ready`.
        """
        return self.completeness(server.root, path)

    def memory_cap_mb(self) -> int:
        return int(env_float("MCP_IDE_LSP_MEMORY_MB", 3072))

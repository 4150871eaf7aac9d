"""A whole-project view for tsserver where no ``tsconfig.json``/``jsconfig.json`` gives one.

Without a config tsserver puts each open file in an inferred project that holds only the open
files and what they import, so a rename or a reference search misses every file that imports
the symbol but is not open. :class:`ProjectView` hands tsserver an *external project*
(``openExternalProject``, the protocol's way for a host to name a project's files itself) that
lists every JS/TS source file under the root the ignore rules keep, outside folders that have a
config of their own. Nothing is written into the workspace. The list is walked again before each
query and sent again only when it changed (or the server restarted).

Past ``MCP_IDE_TS_PROJECT_MAX_FILES`` files (default 5000) no project is sent and answers stay
marked partial, with a reason naming the cap.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path
from typing import Any

CONFIG_NAMES = ("tsconfig.json", "jsconfig.json")
SOURCE_SUFFIXES = (".ts", ".mts", ".cts", ".tsx", ".js", ".mjs", ".cjs", ".jsx")
DEFAULT_MAX_FILES = 5000
OVER_CAP_RECHECK = 60.0
"""Seconds an over-the-cap count is trusted before the root is walked again (a project that large
is walked on every query otherwise, only to say its view is partial)."""
PROJECT_NAME = ".mcp-server-ide.project"
"""The external project's name under the root: a name only, never a file (and not a config name,
which tsserver would try to read)."""

COMPILER_OPTIONS: dict[str, Any] = {
    # What typescript-language-server gives inferred projects, so answers match a single open file's.
    "module": "preserve",
    "moduleResolution": "bundler",
    "target": "es2022",
    "jsx": "react-jsx",
    "allowImportingTsExtensions": True,
    "allowJs": True,
    "allowNonTsExtensions": True,
    "allowSyntheticDefaultImports": True,
    "resolveJsonModule": True,
    "strict": True,
    "noEmit": True,
    "maxNodeModuleJsDepth": 0,
}


def max_files() -> int:
    try:
        return max(0, int(os.environ.get("MCP_IDE_TS_PROJECT_MAX_FILES", "") or DEFAULT_MAX_FILES))
    except ValueError:
        return DEFAULT_MAX_FILES


def covered_by_config(root: Path, path: Path) -> bool:
    """Whether a tsconfig.json/jsconfig.json in ``path``'s folder or one above it (up to ``root``) covers it."""
    folder = path.parent
    while True:
        if any((folder / name).exists() for name in CONFIG_NAMES):
            return True
        if folder == root or folder.parent == folder:
            return False
        folder = folder.parent


def source_files(root: Path) -> list[str]:
    """Every JS/TS source file under ``root`` the ignore rules keep (``node_modules``, ``dist``,
    ``.gitignore``d files skipped), outside folders with a config of their own; relative, sorted."""
    from ...search.files import list_files

    paths = list_files(root).paths
    configured = tuple(
        p[: -len(name)] for p in paths for name in CONFIG_NAMES if p == name or p.endswith("/" + name)
    )
    if "" in configured:  # a config at the root covers everything
        return []
    out = [p for p in paths if p.endswith(SOURCE_SUFFIXES) and not (configured and p.startswith(configured))]
    out.sort()
    return out


def over_cap_reason(count: int, cap: int) -> str:
    return (
        f"no tsconfig.json or jsconfig.json covers this file and the project has {count} JS/TS files, more "
        f"than the {cap} a whole-project view without one covers (MCP_IDE_TS_PROJECT_MAX_FILES), so tsserver "
        "searched only the open files and what they import; add a tsconfig.json/jsconfig.json at the project "
        "root for whole-project answers"
    )


class ProjectView:
    """The external project one adapter sent to its server, and why there is none when there is not."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sent: tuple[int, tuple[str, ...]] | None = None
        """(server generation, files) of the last project sent."""
        self.reason: str | None = None
        """Why the last view was partial (over the cap), or None."""
        self._over_cap = -1
        self._over_cap_until = 0.0

    def project_name(self, root: Path) -> str:
        return str(root / PROJECT_NAME)

    def ensure(self, server: Any, path: Path) -> str | None:
        """Send (or refresh) the external project when ``path`` has no config; why the view stays partial."""
        root: Path = server.root
        if covered_by_config(root, path):
            return None
        cap = max_files()
        if self.reason is not None and self._over_cap == cap and time.monotonic() < self._over_cap_until:
            return self.reason
        files = source_files(root)
        with self._lock:
            if len(files) > cap:
                self.reason = over_cap_reason(len(files), cap)
                self._over_cap, self._over_cap_until = cap, time.monotonic() + OVER_CAP_RECHECK
                if self._sent is not None:
                    self._close(server, root)
                return self.reason
            self.reason = None
            key = (int(getattr(server, "generation", 0)), tuple(files))
            if self._sent == key:
                return None
            from lsprotocol import types as lsp

            server.request(
                "workspace/executeCommand",
                lsp.ExecuteCommandParams(
                    command="typescript.tsserverRequest",
                    arguments=[
                        "openExternalProject",
                        {
                            "projectFileName": self.project_name(root),
                            "rootFiles": [{"fileName": str(root / rel)} for rel in files],
                            "options": COMPILER_OPTIONS,
                            "typeAcquisition": {"enable": False},
                        },
                    ],
                ),
                timeout=120,
            )
            self._sent = key
        return None

    def _close(self, server: Any, root: Path) -> None:
        from lsprotocol import types as lsp

        self._sent = None
        with contextlib.suppress(Exception):  # the server forgets it on its next restart anyway
            server.request(
                "workspace/executeCommand",
                lsp.ExecuteCommandParams(
                    command="typescript.tsserverRequest",
                    arguments=["closeExternalProject", {"projectFileName": self.project_name(root)}],
                ),
                timeout=30,
            )

    def is_whole(self, server: Any) -> bool:
        """Whether the project last sent is current for this server process."""
        sent = self._sent
        return sent is not None and sent[0] == int(getattr(server, "generation", 0)) and self.reason is None

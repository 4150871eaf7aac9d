"""Warming a workspace after start: what its first outline and first cross-file query will need.

Without it, a session's first ``get_symbols_in_file`` pays ~0.5 s of imports (the code engine,
``lsprotocol``, the grammar package) and its first ``find_references`` the start of a language
server and its loading of the project (1-3 s). :func:`start` does that work in the background:

- it looks at up to ``SCAN_LIMIT`` files of the workspace (skipping ``.git``, ``node_modules``,
  ``dist``, build and hidden folders) and counts them by language;
- on one daemon thread, it imports the code engine and loads the grammars of the ``GRAMMARS``
  most common languages, then, when the most common language with a language server has at least
  ``SERVER_SHARE`` of the counted source files, starts that one server (never one that would have
  to be installed first, and never in an untrusted workspace), lets it load the project and asks
  it one references query. The idle watchdog stops it like any server if no call uses it for
  ``MCP_IDE_LSP_IDLE`` seconds.

The thread keeps its ordinary priority: a niced thread holding the import lock of a module the
session's first call also needs makes that call wait on the slowest thread of the machine (priority
inversion), and a server started from it would run niced for its whole life (children inherit it).
The work is done in the order a session needs it (the grammars, then, ``SERVER_DELAY`` later, the
server, whose start takes a core for a second or two); while the grammars load, the interpreter
switches threads every ``SWITCH_INTERVAL`` so calls served meanwhile are not held up by imports.

Nothing here fails a call: a warm-up that cannot happen is logged at debug level and skipped.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..workspace import Workspace

log = logging.getLogger(__name__)

SCAN_LIMIT = 5000
GRAMMARS = 3
SERVER_SHARE = 0.2
SETTLE_SECONDS = 10.0
EXAMPLE_MAX_BYTES = 200_000
SERVER_DELAY = 1.0
"""Seconds between the grammars and the server's start: the calls a session makes right after its
handshake then do not share the machine with a language server starting."""
SWITCH_INTERVAL = 0.0005
"""The interpreter's switch interval while the grammars load (default 5 ms): a call served on the
event loop meanwhile waits at most this long each time it needs the interpreter back."""
SKIP_DIRS = frozenset({"node_modules", "dist", "build", "target", "venv", "__pycache__", "site-packages"})
DATA_LANGUAGES = frozenset(
    {"json", "yaml", "toml", "markdown", "csv", "tsv", "psv", "xml", "html", "css", "ini", "requirements"}
    | {"gitignore", "gitattributes", "make", "dockerfile", "cmake"}
)
"""Languages that say little about what a project is written in (they never pick the language server)."""


@dataclass
class Census:
    """What a bounded look at a workspace found: file counts by language, one file of each."""

    counts: Counter[str] = field(default_factory=Counter)
    example: dict[str, Path] = field(default_factory=dict)
    """Each language's largest file under ``EXAMPLE_MAX_BYTES`` (likely to define and use things)."""
    _sizes: dict[str, int] = field(default_factory=dict)

    def note(self, lang: str, path: Path, size: int) -> None:
        self.counts[lang] += 1
        if size <= EXAMPLE_MAX_BYTES and size > self._sizes.get(lang, -1):
            self._sizes[lang] = size
            self.example[lang] = path

    def most_common(self, n: int | None = None) -> list[str]:
        return [lang for lang, _ in self.counts.most_common(n)]

    def source_files(self) -> int:
        return sum(c for lang, c in self.counts.items() if lang not in DATA_LANGUAGES)


def census(root: Path, limit: int = SCAN_LIMIT) -> Census:
    """Count up to ``limit`` files under ``root`` by tree-sitter language (by name; nothing is read)."""
    from .treesitter.languages import EXTENSIONS, NAMES

    found = Census()
    seen = 0
    stack = [root]
    while stack and seen < limit:
        folder = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in SKIP_DIRS:
                        stack.append(Path(entry.path))
                    continue
                if not entry.is_file(follow_symlinks=False):
                    continue
            except OSError:
                continue
            seen += 1
            name = entry.name
            suffix = os.path.splitext(name)[1]
            lang = NAMES.get(name) or EXTENSIONS.get(suffix) or EXTENSIONS.get(suffix.lower())
            if lang is not None:
                try:
                    size = entry.stat(follow_symlinks=False).st_size
                except OSError:
                    continue
                found.note(lang, Path(entry.path), size)
            if seen >= limit:
                break
    return found


def start(
    workspace: Callable[[], Workspace],
    *,
    language_server: bool = True,
    settled: Callable[[], bool] | None = None,
    timeout: float = 90.0,
) -> threading.Thread:
    """Warm the workspace on background threads; gives the coordinating thread.

    ``workspace()`` is asked when each part begins. With ``settled``, the warm-up first waits (up to
    ``SETTLE_SECONDS``) until it is true (the client's roots adopted); if it never is, only the
    grammars are warmed. ``language_server=False`` never starts one."""
    thread = threading.Thread(
        target=_run, args=(workspace, language_server, settled, timeout), name="mcp-ide-warm", daemon=True
    )
    thread.start()
    return thread


def _run(
    workspace: Callable[[], Workspace],
    language_server: bool,
    settled: Callable[[], bool] | None,
    timeout: float,
) -> None:
    began = time.monotonic()
    try:
        if settled is not None and not _wait(settled):
            language_server = False
        found = census(workspace().root)
        log.debug("warm-up: files by language %s", dict(found.counts.most_common(8)))
        if found.counts:
            _warm_grammars(found)  # first: a session's first outline needs nothing else
            if language_server:
                time.sleep(SERVER_DELAY)
                _warm_server(workspace(), found, timeout)
    except Exception:
        log.debug("warm-up failed", exc_info=True)
    finally:
        log.debug("warm-up: done in %.2f s", time.monotonic() - began)


def _wait(settled: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + SETTLE_SECONDS
    while not settled():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _warm_grammars(found: Census) -> None:
    interval = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL)  # the event loop gets the interpreter back sooner
    try:
        from . import code  # noqa: F401  (the engine every code tool imports first)
        from .treesitter.warm import warm

        warmed = warm(found.most_common(GRAMMARS))
        log.debug("warm-up: grammars loaded: %s", warmed)
    except Exception:
        log.debug("warming the grammars failed", exc_info=True)
    finally:
        sys.setswitchinterval(interval)


def _warm_server(ws: Workspace, found: Census, timeout: float) -> None:
    if not ws.policy.trusted:
        return
    from .lsp import servers

    manager = servers(ws)
    sources = found.source_files()
    for lang in found.most_common():
        if lang in DATA_LANGUAGES:
            continue
        path = found.example.get(lang)
        if path is None or manager.adapter_for(path) is None:
            continue
        if found.counts[lang] < SERVER_SHARE * sources:
            return
        server = manager.warm(path, timeout)
        if server is not None:
            log.debug("warm-up: %s loaded the project", server.adapter.server_name)
        return

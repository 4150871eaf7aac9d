"""Dynamic tool discovery: tool groups appear when the workspace supports them.

A tool declares what it needs with ``@tool(..., requires=("git",))`` (or a language name such
as ``"python"``, ``"typescript"``). ``tools/list`` shows a tool only when the caller's workspace
has every feature it requires; calling a hidden tool answers why it is unavailable. When the
features change (``git init`` by a tool or by the person, the first ``.py`` file, new client
roots) every client gets ``notifications/tools/list_changed`` (2025 era: on its connection,
advertised with ``tools.listChanged``; 2026 era: on ``subscriptions/listen`` streams).

Features are re-checked after every tool call that may write and every few seconds while clients
are connected. A re-check reads the workspace again (a bounded scan for languages) only when a
folder that scan read has changed since, calling ``stat`` on those folders (a file made, deleted
or renamed changes its folder's ctime): an idle server lists no folder.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
from mcp.shared.subscriptions import ToolsListChanged
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
)

from ..registry import ToolSpec
from ..workspace import Workspace
from . import lowlevel
from .clients import clients
from .state import state_of

if TYPE_CHECKING:
    from mcp.server import MCPServer
    from mcp.server.context import HandlerResult

    from ..runner import ToolRunner
    from ..server import ServerOptions, WorkspaceFor
    from .lowlevel import Handler, Previous, RequestContext

log = logging.getLogger(__name__)

POLL_SECONDS = 3.0
CACHE_SECONDS = 2.0
SCAN_LIMIT = 3000
SCAN_SKIP = frozenset(
    {".git", "node_modules", "dist", "__pycache__", ".venv", "venv", ".tox", "build", "target"}
)

LANGUAGES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # language: (marker files at a root, file extensions)
    "python": (("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt"), (".py", ".pyi")),
    "typescript": (("tsconfig.json",), (".ts", ".tsx", ".mts", ".cts")),
    "javascript": (("package.json", "jsconfig.json"), (".js", ".jsx", ".mjs", ".cjs")),
    "rust": (("Cargo.toml",), (".rs",)),
    "go": (("go.mod",), (".go",)),
    "java": (("pom.xml", "build.gradle", "build.gradle.kts"), (".java",)),
    "c": (("CMakeLists.txt", "Makefile"), (".c", ".h")),
    "cpp": ((), (".cpp", ".cc", ".cxx", ".hpp")),
    "ruby": (("Gemfile",), (".rb",)),
    "php": (("composer.json",), (".php",)),
}


RACY_NS = 2_000_000_000
"""A folder changed this close before a scan may change again within the same tick of its
filesystem's clock, unseen in its stamp: the next re-check reads the workspace again."""

Stamp = tuple[int, int]
"""A folder's (inode, ctime in ns); (0, 0) when it cannot be read."""


def _stamp(path: str) -> Stamp:
    try:
        st = os.stat(path)
    except OSError:
        return (0, 0)
    return (st.st_ino, st.st_ctime_ns)


@dataclass(frozen=True)
class Scan:
    """The features of a workspace and the folders read to find them, each with its stamp."""

    features: frozenset[str]
    roots: tuple[Path, ...]
    folders: tuple[tuple[str, Stamp], ...]
    racy: bool
    """A folder changed within :data:`RACY_NS` before the scan."""

    def current(self, ws: Workspace) -> bool:
        """True while no folder the scan read has changed (one ``stat`` a folder, no listing)."""
        if self.racy or tuple(ws.roots) != self.roots:
            return False
        return all(_stamp(path) == stamp for path, stamp in self.folders)


def detect(ws: Workspace) -> Scan:
    """The features of a workspace: ``git`` when it is a repository, plus its languages."""
    started = time.time_ns()
    found: set[str] = set()
    folders: list[tuple[str, Stamp]] = []
    for root in ws.roots:  # every root stamped, also one the scan below does not reach
        folders.append((str(root), _stamp(str(root))))
        if (root / ".git").exists():  # the repository the git engine uses: the root's own
            found.add("git")
        for lang, (markers, _exts) in LANGUAGES.items():
            if any((root / m).exists() for m in markers):
                found.add(lang)
    by_ext = {ext: lang for lang, (_m, exts) in LANGUAGES.items() for ext in exts}
    seen = 0
    for root in ws.roots:
        stack = [str(root)]
        while stack and seen < SCAN_LIMIT:
            folder = stack.pop()
            if folder != str(root):  # stamped before its listing: a change during it shows
                folders.append((folder, _stamp(folder)))
            try:
                with os.scandir(folder) as it:
                    for entry in it:
                        seen += 1
                        if entry.is_dir(follow_symlinks=False):
                            if entry.name not in SCAN_SKIP and not entry.name.startswith("."):
                                stack.append(entry.path)
                        else:
                            lang = by_ext.get(os.path.splitext(entry.name)[1])
                            if lang:
                                found.add(lang)
            except OSError:
                continue
    racy = any(ctime > started - RACY_NS for _path, (_ino, ctime) in folders)
    return Scan(frozenset(found), tuple(ws.roots), tuple(folders), racy)


class Features:
    """Per-workspace service: the features, checked at most every CACHE_SECONDS (``fresh``: now),
    the workspace read again only when a folder the last scan read has changed."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._lock = threading.Lock()
        self._at = -math.inf
        self._scan: Scan | None = None

    def get(self, fresh: bool = False) -> frozenset[str]:
        with self._lock:
            due = fresh or time.monotonic() - self._at > CACHE_SECONDS
            if due:
                self._at = time.monotonic()
            if self._scan is None or (due and not self._scan.current(self.ws)):
                self._scan = detect(self.ws)
            return self._scan.features

    def follow_roots(self, roots: list[Path]) -> bool:
        """Stays; the features are of every root, so the next :meth:`get` detects them again."""
        with self._lock:
            self._at = -math.inf
            self._scan = None
        return True


def missing(spec: ToolSpec, features: frozenset[str]) -> list[str]:
    return [r for r in spec.requires if r not in features]


def unavailable_text(name: str, needs: list[str]) -> str:
    what = ", ".join(needs)
    hint = "run `git init` (or open a repository)" if "git" in needs else f"add {what} files to the workspace"
    lead = "Git not available" if "git" in needs else "unavailable"
    return f"{lead}: {name} needs a workspace with {what} (rule: tools appear when the workspace supports them); {hint}"


def install(
    server: MCPServer, runner: ToolRunner, workspace_for: WorkspaceFor, options: ServerOptions
) -> None:
    from mcp.server.mcpserver import Context

    registry = clients(server)
    gated = any(s.requires for s in runner.specs.values())
    shown_last: frozenset[str] | None = None
    poller: asyncio.Task[None] | None = None

    def ws_of(ctx: RequestContext) -> Workspace:
        return workspace_for(Context(request_context=ctx, mcp_server=server))

    async def features_of(ws: Workspace, fresh: bool = False) -> frozenset[str]:
        return await anyio.to_thread.run_sync(lambda: ws.service(Features).get(fresh))

    def visible(features: frozenset[str]) -> frozenset[str]:
        return frozenset(n for n, s in runner.specs.items() if not missing(s, features))

    async def recheck(ws: Workspace) -> None:
        nonlocal shown_last
        now = visible(await features_of(ws, fresh=True))
        if shown_last is not None and now != shown_last:
            log.info("workspace features changed; announcing tools/list_changed")
            registry.broadcast(ToolsListChanged())
        shown_last = now

    def ensure_poller(ws: Workspace) -> None:
        nonlocal poller
        if poller is not None and not poller.done():
            return

        async def poll() -> None:
            while registry.connected():
                await anyio.sleep(POLL_SECONDS)
                try:
                    await recheck(ws)
                except Exception:
                    log.debug("feature re-check failed", exc_info=True)

        with contextlib.suppress(RuntimeError):
            poller = asyncio.get_running_loop().create_task(poll())

    def list_tools(previous: Previous) -> Handler[PaginatedRequestParams]:
        assert previous is not None, "the SDK serves tools/list"

        async def handler(ctx: RequestContext, params: PaginatedRequestParams | None) -> HandlerResult:
            nonlocal shown_last
            result = await previous(ctx, params)
            if not gated:
                return result
            result = lowlevel.expect(ListToolsResult, result)
            ws = ws_of(ctx)
            features = await features_of(ws)
            shown = visible(features)
            shown_last = shown
            ensure_poller(ws)
            return result.model_copy(
                update={"tools": [t for t in result.tools if t.name in shown or t.name not in runner.specs]}
            )

        return handler

    def call_tool(previous: Previous) -> Handler[CallToolRequestParams]:
        assert previous is not None, "the SDK serves tools/call"

        async def handler(ctx: RequestContext, params: CallToolRequestParams) -> HandlerResult:
            spec = runner.specs.get(params.name)
            ws = None
            if gated and spec is not None and spec.requires:
                ws = ws_of(ctx)
                needs = missing(spec, await features_of(ws))
                if needs:
                    return CallToolResult(
                        content=[TextContent(type="text", text=unavailable_text(spec.name, needs))],
                        is_error=True,
                    )
            try:
                return await previous(ctx, params)
            finally:
                # A read-only tool cannot change the workspace's features: skip the re-check (a
                # scan of up to SCAN_LIMIT entries) on the hot path of reads, searches and listings.
                if gated and not (spec is not None and spec.read_only):
                    try:
                        await recheck(ws or ws_of(ctx))
                    except Exception:
                        log.debug("feature re-check failed", exc_info=True)

        return handler

    lowlevel.advertise_list_changed(server)
    lowlevel.replace_request(server, "tools/list", PaginatedRequestParams, list_tools)
    lowlevel.replace_request(server, "tools/call", CallToolRequestParams, call_tool)
    state_of(server).recheck_tools = recheck

"""Builds the MCP server (the SDK's ``MCPServer``) from the tool table.

Only translation happens here: every tool, resource and prompt comes from the registry and
its extension points; no tool is named in this module.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import Context, MCPServer

from . import __version__
from .call import Call, grants_of
from .runner import ToolRunner, enabled_specs
from .workspace import Workspace

if TYPE_CHECKING:
    from .workspaces import LocalWorkspaces

log = logging.getLogger(__name__)

INSTRUCTIONS = """\
mcp-server-ide gives you an IDE over one workspace folder.

Paths: `pathInProject` (and `path` for project_fs_*) is relative to the workspace root; an absolute path \
inside the root also works, and `/workspace/...` means the root. Paths that leave the root (`..`, symlinks \
out) are refused. Answers use the host's own path separators.

Lines: file tools count lines from 1 (`startLine`, `endLine`, breakpoints); `find_references`, \
`refactor_code_at_location` and symbol ranges count `line`/`character` from 0, as VS Code does.

Reading: `get_file_text_by_path` returns the whole file with its `hash`; for big files use \
`project_fs_read` with `startLine`/`endLine` (reads over 200 KB keep the head and the tail with a \
`…[N bytes truncated]…` marker and `truncated: true`; never write truncated text back).

Editing: prefer `replace_specific_text` / `project_fs_edit` (exact old text; fails, changing nothing, when \
it matches 0 or several times) over rewriting whole files. Pass `expectedHash` (from a read) to refuse an \
edit when the file changed under you. Encodings, BOMs, CRLF line endings and file modes are kept. \
`.git`, `node_modules` and the configured protected paths are never written.

Search: `search_in_files_content` and `find_files_by_name_substring` honour .gitignore and skip .git, \
node_modules and dist; results are capped, with `truncated` and a total count.
"""


@dataclass
class ServerOptions:
    """How the server is built (``--tools``, ``--read-only``, ``--plugin``...)."""

    tools: list[str] | None = None
    """A ``--tools`` selection: names or categories, ``-name`` removes (None: every tool)."""
    read_only: bool = False
    structured_content: bool = False
    """Publish output schemas and send ``structuredContent`` beside the text (``--structured-content``)."""
    plugins: list[str] = field(default_factory=list)
    """The ``--plugin`` modules."""
    workspaces: LocalWorkspaces | None = None
    """The local workspaces, when there are: with no ``--workspace`` their roots follow the client's."""
    extra: dict[str, object] = field(default_factory=dict)
    """Anything else, for plugins (the server reads nothing here)."""


McpContext = Context[Any, Any]
"""A request's ``Context``; the SDK makes it generic in the server's lifespan and transport request
types, which the surface does not depend on."""

WorkspaceFor = Callable[[McpContext], Workspace]
"""The workspace a request acts on, from its ``Context`` (local mode: always the one workspace)."""


class SessionReporter:
    """Reports progress, log messages and confirmations through the caller's MCP session."""

    def __init__(self, ctx: McpContext) -> None:
        self.ctx = ctx

    async def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        from .surface.progress import reported

        reported()
        try:
            await self.ctx.report_progress(done, total, message)
        except Exception:  # a client that went away must not fail the work
            log.debug("progress notification failed", exc_info=True)

    async def log(self, level: str, message: str) -> None:
        from .surface.logs import as_level, wanted

        known = as_level(level)
        if known is None or not wanted(self.ctx, known):
            return
        try:
            await self.ctx.log(known, message)
        except Exception:
            log.debug("log notification failed", exc_info=True)

    async def confirm(self, message: str) -> bool | None:
        from .engines.confirm import ask_through_elicitation

        return await ask_through_elicitation(self.ctx, message)


def build_server(
    workspace_for: WorkspaceFor, options: ServerOptions | None = None
) -> tuple[MCPServer, ToolRunner]:
    """The MCP server and the tool runner every other door shares."""
    from . import extensions, registry, sdkimport
    from .surface import lowlevel

    options = options or ServerOptions()
    registry.load_builtin_tools()
    for module in options.plugins:
        registry.load_plugin(module)

    def make_call(ctx: McpContext, tool: str, arguments: dict[str, Any]) -> Call:
        from .surface.lowlevel import session_key

        session_id = session_key(ctx)
        return Call(
            workspace=workspace_for(ctx),
            door="mcp",
            reporter=SessionReporter(ctx),
            tool=tool,
            arguments=arguments,
            session_id=session_id,
            structured=options.structured_content,
            grants=grants_of(ctx),
            on_session_end=(lambda callback: lowlevel.on_connection_close(ctx, callback))
            if session_id
            else None,
        )

    runner = ToolRunner(
        enabled_specs(options.tools, options.plugins),
        make_call,
        read_only=options.read_only,
        structured=options.structured_content,
        cache_listing=not options.plugins,  # a plugin's effect on the listing has no key: see toolcache
    )
    server = MCPServer(
        name="mcp-server-ide",
        title="IDE",
        description="An IDE for AI assistants: files, search, code intelligence, git, terminals and run configurations.",
        instructions=INSTRUCTIONS,
        version=__version__,
        request_state_security=sdkimport.request_state_security(),  # None: the SDK's default
    )
    lowlevel.use_tool_table(server, runner.sdk)  # built lazily: see runner.LazyTools
    extensions.apply_all(server, runner, workspace_for, options)
    return server, runner

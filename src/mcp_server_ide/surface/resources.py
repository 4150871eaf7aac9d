"""Resources: the workspace's files (``file://``), a template for any workspace path, and a few
context resources an assistant wants (git status, problems, the active editor).

- ``resources/list`` is paged: the context resources and any plugin resources come first, then
  the files in path order, :data:`PAGE_SIZE` at a time, with a ``nextCursor``. A page is found
  by walking the tree in sorted order from the cursor, skipping whole folders that sort before
  it, so page N costs about one page of work even on a 100k-file tree (``.git``,
  ``node_modules``, ``dist`` and tool caches are skipped; folders deeper than :data:`MAX_DEPTH`
  are not entered).
- ``resources/templates/list`` gives one ``file:///<root>/{+path}`` template per workspace root;
  ``completion/complete`` on its ``path`` offers the entries of the folder typed so far.
- ``resources/read`` of a file URI goes through the sandbox like every tool path: text files
  come back as text (``text/*`` or their own MIME type), other files as base64 blobs with
  their MIME type. Reading a file counts as reading it for the session (see ``engines/reads``).
- Other URIs go to the SDK's own resources (plugins, ``ui://`` apps...).
"""

from __future__ import annotations

import base64
import json
import mimetypes
import os
import posixpath
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

import anyio
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    BlobResourceContents,
    ListResourcesResult,
    ListResourceTemplatesResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    TextResourceContents,
)

from ..engines import reads, sandbox, textio
from ..registry import ToolFailure
from ..workspace import Workspace
from . import lowlevel
from .completion import completer, ranked

if TYPE_CHECKING:
    from mcp.server import MCPServer
    from mcp.server.context import HandlerResult

    from ..runner import ToolRunner
    from ..server import ServerOptions, WorkspaceFor
    from .lowlevel import Handler, Previous, RequestContext

PAGE_SIZE = 200
MAX_BLOB_BYTES = 8 * 1024 * 1024
SKIP_DIRS = frozenset(
    {
        ".git",
        "node_modules",
        "dist",
        "__pycache__",
        ".venv",
        ".tox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
    }
)
TEXT_MIME_FALLBACK = "text/plain"
EXTRA_TEXT_TYPES = {
    ".py": "text/x-python",
    ".ts": "text/x-typescript",
    ".tsx": "text/x-typescript",
    ".md": "text/markdown",
    ".toml": "application/toml",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".rs": "text/x-rust",
    ".go": "text/x-go",
}


# ----------------------------------------------------------------------------- context resources


@dataclass(frozen=True)
class ContextResource:
    uri: str
    name: str
    title: str
    description: str
    mime_type: str
    read: Callable[[Workspace], str]
    """Runs in a worker thread; returns the text."""
    watch: Callable[[Workspace, Callable[[], None]], Callable[[], None]] | None = None
    """Its own change feed: ``watch(ws, notify)`` calls ``notify()`` when the resource changed and
    returns the function that stops it. Without one, any workspace file change counts as a change."""
    touched: Callable[[Workspace, Path], None] | None = None
    """Told of every workspace file change while it is subscribed (its feed may refresh on it)."""


CONTEXT: dict[str, ContextResource] = {}


def context_resource(
    uri: str,
    *,
    name: str,
    title: str,
    description: str,
    mime_type: str = "text/plain",
    watch: Callable[[Workspace, Callable[[], None]], Callable[[], None]] | None = None,
    touched: Callable[[Workspace, Path], None] | None = None,
) -> Callable[[Callable[[Workspace], str]], Callable[[Workspace], str]]:
    def register(fn: Callable[[Workspace], str]) -> Callable[[Workspace], str]:
        CONTEXT[uri] = ContextResource(uri, name, title, description, mime_type, fn, watch, touched)
        return fn

    return register


@context_resource(
    "ide://git/status",
    name="git-status",
    title="Git status",
    description="The branch and the changed, staged and untracked files of the workspace (git status --porcelain).",
)
def _git_status(ws: Workspace) -> str:
    from ..engines.git import query as gitquery

    if not gitquery.is_repo(ws):
        return "not a git repository"
    out = gitquery.status(ws)
    if not out.ok:
        return f"git status failed: {out.error}"
    return out.text or "clean"


@context_resource(
    "ide://workspace/problems",
    name="problems",
    title="Problems",
    description="The workspace's problems as JSON: the last get_project_problems run merged with what "
    "get_file_problems and the running language servers found since, grouped by file.",
    mime_type="application/json",
    watch=lambda ws, notify: _problems_engine().watch(ws, notify),
    touched=lambda ws, path: _problems_engine().touched(ws, path),
)
def _problems(ws: Workspace) -> str:
    return json.dumps(_problems_engine().workspace_problems(ws), separators=(",", ":"))


def _problems_engine() -> Any:
    from ..engines import problems  # lazy: loads the language tooling

    return problems


@context_resource(
    "ide://editor/active",
    name="active-editor",
    title="Active editor",
    description="The file open in the editor now: its path, selection and text, as JSON.",
    mime_type="application/json",
)
def _active_editor(ws: Workspace) -> str:
    try:
        from ..engines.editor import editor_for
    except ImportError:
        return json.dumps({"activeFile": None, "note": "no editor model in this build"})
    doc = editor_for(ws).active()
    if doc is None:
        return json.dumps({"activeFile": None, "openFiles": []})
    state = editor_for(ws).state()
    sel = doc.selection
    return json.dumps(
        {
            "activeFile": _rel_display(ws, doc.path),
            "openFiles": [_rel_display(ws, p) for p in state.open],
            "selection": {
                "start": {"line": sel.start.line, "character": sel.start.character},
                "end": {"line": sel.end.line, "character": sel.end.character},
            },
            "text": doc.text,
        },
        indent=1,
    )


def _rel_display(ws: Workspace, path: Path) -> str:
    for root in ws.roots:
        try:
            return path.relative_to(root).as_posix()
        except ValueError:
            continue
    return path.name


# ----------------------------------------------------------------------------- file URIs


def file_uri(path: Path, ws: Workspace | None = None) -> str:
    """A file's URI; in a hosted project, under ``/workspace`` (never the folder it lives in on the host)."""
    if ws is not None and ws.policy.hosted:
        from ..hostpaths import shown_path

        return Path(shown_path(str(path), str(ws.root))).as_uri()
    return path.as_uri()


def template_for(root: Path, ws: Workspace | None = None) -> str:
    return file_uri(root, ws).rstrip("/") + "/{+path}"


def host_path_of_uri(ws: Workspace, uri: str) -> str:
    """The path a file URI names, with a hosted project's ``/workspace`` mapped back to its folder."""
    path = path_of_uri(uri)
    if ws.policy.hosted:
        from ..hostpaths import host_path

        return host_path(path, str(ws.root))
    return path


def path_of_uri(uri: str) -> str:
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        raise ValueError("not a local file URI")
    return unquote(parsed.path)


def _shown(ws: Workspace, text: str) -> str:
    if not ws.policy.hosted:
        return text
    from ..hostpaths import masked_text

    return masked_text(text, str(ws.root))


def mime_for(name: str, is_text: bool) -> str:
    ext = os.path.splitext(name)[1].lower()
    if is_text and ext in EXTRA_TEXT_TYPES:
        return EXTRA_TEXT_TYPES[ext]
    guessed, _ = mimetypes.guess_type(name)
    if guessed:
        return guessed
    return TEXT_MIME_FALLBACK if is_text else "application/octet-stream"


def read_file_resource(ws: Workspace, uri: str) -> TextResourceContents | BlobResourceContents:
    """Read a ``file://`` resource through the sandbox (runs in a worker thread)."""
    try:
        host_path = host_path_of_uri(ws, uri)
    except ValueError:
        raise ResourceError(f"not a workspace file URI: {uri}") from None
    try:
        resolved = sandbox.resolve(ws, host_path)
        data, _mode = textio.read_bytes(resolved, limit=MAX_BLOB_BYTES)
    except ToolFailure as exc:
        raise ResourceError(_shown(ws, str(exc))) from None
    reads.note_read(ws, resolved.rel)
    name = resolved.path.name
    if not _binary_ext(name):
        try:
            tf = textio.read_text(resolved)
            return TextResourceContents(uri=uri, text=tf.text, mime_type=mime_for(name, True))
        except ToolFailure:
            pass
    return BlobResourceContents(
        uri=uri, blob=base64.b64encode(data).decode(), mime_type=mime_for(name, False)
    )


# ----------------------------------------------------------------------------- paged listing


MAX_DEPTH = 64
"""Folders nested deeper than this are not listed (their files stay readable by URI)."""


def _skip(name: str) -> bool:
    return name in SKIP_DIRS or sandbox.is_temp_name(name)


_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def iter_files(
    root: Path, after: tuple[str, ...] | None = None, max_depth: int = MAX_DEPTH
) -> Iterator[tuple[str, ...]]:
    """Files under ``root`` as path-part tuples, in sorted order, strictly after ``after``. Each folder
    is opened from its parent's descriptor without following links (a folder swapped for a link out
    mid-walk cannot list a folder outside); a link is listed by its own name when it points inside.
    Folders more than ``max_depth`` deep are not entered (a 2,000-deep tree once failed with "maximum
    recursion depth exceeded"), so at most ``max_depth`` descriptors are open at once."""

    def walk(
        parent: int | None, name: str, prefix: tuple[str, ...], after: tuple[str, ...] | None
    ) -> Iterator[tuple[str, ...]]:
        try:
            fd = (
                os.open(root, _FOLDER_FLAGS)
                if parent is None
                else os.open(name, _FOLDER_FLAGS, dir_fd=parent)
            )
        except OSError:
            return
        try:
            try:
                with os.scandir(fd) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError:
                return
            yield from entries_of(fd, entries, prefix, after)
        finally:
            os.close(fd)

    def entries_of(
        fd: int, entries: list[os.DirEntry[str]], prefix: tuple[str, ...], after: tuple[str, ...] | None
    ) -> Iterator[tuple[str, ...]]:
        depth = len(prefix) + 1
        for entry in entries:
            if _skip(entry.name):
                continue
            parts = (*prefix, entry.name)
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = entry.is_file(follow_symlinks=False)
                if entry.is_symlink():
                    real = os.path.realpath(os.path.join(root, *parts))
                    if not (real == str(root) or real.startswith(str(root) + os.sep)):
                        continue
                    is_file = os.path.isfile(real)
            except OSError:
                continue
            sub_after = None
            if after is not None:
                head = after[:depth]
                if parts < head:
                    continue
                if parts == head:
                    if is_dir and len(after) > depth:
                        sub_after = after
                    else:
                        continue
            if is_dir:
                if depth < max_depth:
                    yield from walk(fd, entry.name, parts, sub_after)
            elif is_file:
                yield parts

    yield from walk(None, "", (), after)


def _encode_cursor(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode()).decode()


def _decode_cursor(cursor: str) -> dict[str, Any]:
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        if isinstance(data, dict):
            return data
    except (ValueError, TypeError):
        pass
    raise MCPError(
        code=INVALID_PARAMS, message="invalid cursor (pass the nextCursor of the previous page as it is)"
    )


def files_page(
    ws: Workspace, cursor: dict[str, Any] | None, size: int = PAGE_SIZE
) -> tuple[list[Resource], str | None]:
    roots = ws.roots
    index = int((cursor or {}).get("r", 0))
    after = tuple((cursor or {}).get("a") or ()) or None
    out: list[Resource] = []
    last: tuple[int, tuple[str, ...]] = (index, ())
    while index < len(roots):
        root = roots[index]
        for parts in iter_files(root, after):
            if len(out) == size:
                return out, _encode_cursor({"r": last[0], "a": list(last[1])})
            path = root.joinpath(*parts)
            rel = "/".join(parts)
            shown = rel if index == 0 else f"{root.name}/{rel}"
            out.append(
                Resource(
                    uri=file_uri(path, ws),
                    name=shown,
                    title=parts[-1],
                    mime_type=mime_for(parts[-1], not _binary_ext(parts[-1])),
                )
            )
            last = (index, parts)
        index += 1
        after = None
    return out, None


def _binary_ext(name: str) -> bool:
    guessed, _ = mimetypes.guess_type(name)
    return bool(guessed) and not (
        guessed.startswith("text/") or guessed.endswith(("json", "xml", "javascript", "yaml", "toml"))
    )


# ----------------------------------------------------------------------------- completion of paths


@completer("resource", "file", "path")
def complete_path(ws: Workspace, value: str, chosen: dict[str, str]) -> list[str]:
    """Entries of the folder typed so far: ``src/ma`` offers ``src/main.py``, ``src/magic/``."""
    folder, _, partial = value.rpartition("/")
    try:
        resolved = sandbox.resolve(ws, folder or ".")
    except ToolFailure:
        return []
    if not resolved.path.is_dir():
        return []
    prefix = f"{folder}/" if folder else ""
    names: list[str] = []
    try:
        # Reached beneath the root without following links: a folder swapped for a link out since
        # resolve() cannot make this list a folder outside.
        listing = sandbox.open_listing(resolved.root, resolved.rel)
    except OSError:
        return []
    try:
        with os.scandir(listing) as it:
            for entry in it:
                if _skip(entry.name) and entry.name != partial:
                    continue
                suffix = "/" if entry.is_dir(follow_symlinks=False) else ""
                names.append(prefix + entry.name + suffix)
    except OSError:
        return []
    finally:
        os.close(listing)
    names.sort(key=lambda n: (not n.endswith("/"), n))
    return ranked(names, value) if value else names


# ----------------------------------------------------------------------------- install


def install(
    server: MCPServer, runner: ToolRunner, workspace_for: WorkspaceFor, options: ServerOptions
) -> None:
    from mcp.server.mcpserver import Context

    def ws_of(ctx: RequestContext) -> Workspace:
        return workspace_for(Context(request_context=ctx, mcp_server=server))

    def list_resources(previous: Previous) -> Handler[PaginatedRequestParams]:
        async def handler(ctx: RequestContext, params: PaginatedRequestParams | None) -> ListResourcesResult:
            ws = ws_of(ctx)
            cursor = _decode_cursor(params.cursor) if params is not None and params.cursor else None
            first: list[Resource] = []
            if cursor is None:
                first = [
                    Resource(
                        uri=c.uri,
                        name=c.name,
                        title=c.title,
                        description=c.description,
                        mime_type=c.mime_type,
                    )
                    for c in CONTEXT.values()
                ]
                if previous is not None:
                    first.extend(lowlevel.expect(ListResourcesResult, await previous(ctx, params)).resources)
            page, next_cursor = await anyio.to_thread.run_sync(files_page, ws, cursor)
            return ListResourcesResult(resources=first + page, next_cursor=next_cursor)

        return handler

    def list_templates(previous: Previous) -> Handler[PaginatedRequestParams]:
        async def handler(
            ctx: RequestContext, params: PaginatedRequestParams | None
        ) -> ListResourceTemplatesResult:
            ws = ws_of(ctx)
            templates = [
                ResourceTemplate(
                    uri_template=template_for(root, ws),
                    name=f"file-{root.name}" if i else "file",
                    title=f"Workspace file ({root.name})",
                    description=f"Any file under the workspace root '{root.name}'; `path` is relative to it "
                    "(completion offers the entries of the folder typed so far).",
                )
                for i, root in enumerate(ws.roots)
            ]
            if previous is not None:
                previous_result = await previous(ctx, params)
                templates.extend(
                    lowlevel.expect(ListResourceTemplatesResult, previous_result).resource_templates
                )
            return ListResourceTemplatesResult(resource_templates=templates)

        return handler

    def read_resource(previous: Previous) -> Handler[ReadResourceRequestParams]:
        async def handler(ctx: RequestContext, params: ReadResourceRequestParams) -> HandlerResult:
            uri = str(params.uri)
            if uri.startswith("file:"):
                ws = ws_of(ctx)
                try:
                    contents = await anyio.to_thread.run_sync(read_file_resource, ws, uri)
                except ResourceError as exc:
                    raise MCPError(code=INVALID_PARAMS, message=str(exc), data={"uri": uri}) from None
                return ReadResourceResult(contents=[contents])
            if uri in CONTEXT:
                ws = ws_of(ctx)
                item = CONTEXT[uri]
                text = await anyio.to_thread.run_sync(item.read, ws)
                return ReadResourceResult(
                    contents=[TextResourceContents(uri=uri, text=text, mime_type=item.mime_type)]
                )
            if previous is None:
                raise MCPError(code=INVALID_PARAMS, message=f"Unknown resource: {uri}", data={"uri": uri})
            return await previous(ctx, params)

        return handler

    lowlevel.replace_request(server, "resources/list", PaginatedRequestParams, list_resources)
    lowlevel.replace_request(server, "resources/templates/list", PaginatedRequestParams, list_templates)
    lowlevel.replace_request(server, "resources/read", ReadResourceRequestParams, read_resource)


def resolve_relative(ws: Workspace, rel: str) -> str:
    """The file URI of a root-relative path (for prompts that embed files)."""
    resolved = sandbox.resolve(ws, posixpath.normpath(rel))
    return file_uri(resolved.path, ws)

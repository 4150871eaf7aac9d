"""Prompts (VS Code shows them as ``/mcp.<server>.<prompt>`` slash commands), with argument
completion from the workspace itself: real paths, branch names, symbols and test names.

- ``review_changes``: the working tree's diff against HEAD (or a branch) to review.
- ``explain_symbol``: a symbol's definition with its file, to explain.
- ``fix_failing_test``: a test's source (and the code it imports) to make it pass.
- ``commit_message``: the staged diff and recent subjects, to write a commit message.

Each prompt embeds what it talks about as context (diffs as text, files as ``resource``
content), so the assistant starts with the facts instead of fetching them.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Annotated

import anyio
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.prompts.base import UserMessage
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    EmbeddedResource,
    GetPromptRequestParams,
    TextContent,
    TextResourceContents,
)
from pydantic import Field

from ..engines import sandbox, textio
from ..lazy import LazyModule
from ..registry import ToolFailure
from ..workspace import Workspace
from . import lowlevel
from .completion import completer, ranked
from .icons import icon

if TYPE_CHECKING:
    from mcp.server import MCPServer
    from mcp.server.context import HandlerResult

    from ..engines.git import query as gitquery
    from ..runner import ToolRunner
    from ..server import ServerOptions, WorkspaceFor
    from .lowlevel import Handler, Previous, RequestContext
else:
    gitquery = LazyModule("mcp_server_ide.engines.git.query")

MAX_DIFF = 120_000
SKIP = frozenset({".git", "node_modules", "dist", "__pycache__", ".venv", "venv", ".tox", "build"})
SOURCE_EXTS = frozenset({".py", ".ts", ".tsx", ".js", ".jsx", ".go", ".rs", ".java", ".rb", ".c", ".cpp", ".h", ".cs", ".php", ".kt", ".swift"})  # fmt: skip
TEST_FILE = re.compile(r"(^test_.*\.py$|_test\.py$|\.test\.[jt]sx?$|\.spec\.[jt]sx?$|_test\.go$)")
TEST_NAME = re.compile(
    r"^\s*(?:async\s+)?def\s+(test\w*)|^\s*(?:it|test)\(\s*['\"]([^'\"]+)['\"]|^func\s+(Test\w+)", re.M
)


# ----------------------------------------------------------------------------- workspace facts


def walk_files(ws: Workspace, limit: int = 20000) -> list[str]:
    """The workspace's files (relative), each folder reached beneath the root without following
    links (a folder swapped for a link out mid-walk cannot bring in names from outside)."""
    out: list[str] = []
    stack = [""]
    while stack and len(out) < limit:
        prefix = stack.pop()
        try:
            fd = sandbox.open_listing(ws.root, prefix.rstrip("/"))
        except OSError:
            continue
        try:
            with os.scandir(fd) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        finally:
            os.close(fd)
        for e in entries:
            if e.name in SKIP or sandbox.is_temp_name(e.name):
                continue
            rel = prefix + e.name
            if e.is_dir(follow_symlinks=False):
                stack.append(rel + "/")
            elif e.is_file(follow_symlinks=False):
                out.append(rel)
    return out


def symbols_in(ws: Workspace, rel: str) -> list[tuple[str, int]]:
    """Top-level and nested symbol names of a file with their 0-based start line."""
    try:
        resolved = sandbox.resolve(ws, rel)
        text = textio.read_text(resolved).text
    except ToolFailure:
        return []
    try:
        from ..engines import treesitter

        found = treesitter.outline_file(resolved.path, text)
    except Exception:
        found = None
    out: list[tuple[str, int]] = []
    if found:
        stack = list(found)
        while stack:
            s = stack.pop(0)
            out.append((s.name, s.start[0]))
            stack.extend(s.children)
        return out
    for m in re.finditer(
        r"^\s*(?:export\s+)?(?:async\s+)?(?:def|class|function|func|fn|interface|type|struct)\s+(\w+)",
        text,
        re.M,
    ):
        out.append((m.group(1), text.count("\n", 0, m.start())))
    return out


def tests_in(text: str) -> list[str]:
    return [next(g for g in m.groups() if g) for m in TEST_NAME.finditer(text)]


# ----------------------------------------------------------------------------- completion


@completer("prompt", "explain_symbol", "path")
@completer("prompt", "fix_failing_test", "path")
@completer("prompt", "review_changes", "path")
def complete_path(ws: Workspace, value: str, chosen: dict[str, str]) -> list[str]:
    files = walk_files(ws)
    return ranked(files, value)


@completer("prompt", "explain_symbol", "symbol")
def complete_symbol(ws: Workspace, value: str, chosen: dict[str, str]) -> list[str]:
    path = chosen.get("path")
    files = (
        [path] if path else [f for f in walk_files(ws, 4000) if os.path.splitext(f)[1] in SOURCE_EXTS][:400]
    )
    names: list[str] = []
    for rel in files:
        names.extend(name for name, _ in symbols_in(ws, rel))
    return ranked(names, value)


@completer("prompt", "fix_failing_test", "test")
def complete_test(ws: Workspace, value: str, chosen: dict[str, str]) -> list[str]:
    path = chosen.get("path")
    files = [path] if path else [f for f in walk_files(ws) if TEST_FILE.search(os.path.basename(f))][:300]
    out: list[str] = []
    for rel in files:
        try:
            text = textio.read_text(sandbox.resolve(ws, rel)).text
        except ToolFailure:
            continue
        out.extend(f"{rel}::{name}" for name in tests_in(text))
    return ranked(out, value)


@completer("prompt", "review_changes", "base")
def complete_branch(ws: Workspace, value: str, chosen: dict[str, str]) -> list[str]:
    return ranked(gitquery.branches(ws), value) if gitquery.is_repo(ws) else []


# ----------------------------------------------------------------------------- prompts


def _file_resource(ws: Workspace, rel: str) -> EmbeddedResource:
    resolved = sandbox.resolve(ws, rel)
    tf = textio.read_text(resolved)
    from .resources import file_uri, mime_for

    return EmbeddedResource(
        type="resource",
        resource=TextResourceContents(
            uri=file_uri(resolved.path, ws), text=tf.text, mime_type=mime_for(resolved.path.name, True)
        ),
    )


def install(
    server: MCPServer, runner: ToolRunner, workspace_for: WorkspaceFor, options: ServerOptions
) -> None:
    @server.prompt(title="Review working-tree changes", icons=icon("git"))
    async def review_changes(
        ctx: Context,  # the SDK finds the context parameter by this annotation at run time
        path: Annotated[str, Field(description="Only changes under this file or folder (optional).")] = "",
        base: Annotated[
            str, Field(description="Compare with this branch or commit instead of HEAD (optional).")
        ] = "",
    ) -> list[UserMessage]:
        """Review the uncommitted changes of the workspace (staged and unstaged) for bugs, risks and style."""
        ws = workspace_for(ctx)
        diff = await anyio.to_thread.run_sync(_diff_for_review, ws, path, base)
        ask = (
            "Review these changes as a careful senior engineer. List real problems first (bugs, missing "
            "error handling, security, behaviour changes), each with file and line, then smaller suggestions. "
            "Say plainly when something looks fine."
        )
        return [UserMessage(ask), UserMessage(TextContent(type="text", text=diff))]

    @server.prompt(title="Explain a symbol", icons=icon("code"))
    async def explain_symbol(
        ctx: Context,
        symbol: Annotated[str, Field(description="The function, class or variable to explain.")],
        path: Annotated[
            str, Field(description="The file that defines it (completion offers workspace files).")
        ] = "",
    ) -> list[UserMessage]:
        """Explain what a symbol does, how it is used and what to watch out for when changing it."""
        ws = workspace_for(ctx)
        found = await anyio.to_thread.run_sync(_find_symbol, ws, symbol, path)
        messages = [
            UserMessage(
                f"Explain `{symbol}`: what it does, its inputs and outputs, side effects, how it is used in this "
                "workspace (use find_references if you can), and what could break if it changes."
            )
        ]
        if found:
            rel, line = found
            messages.append(UserMessage(_file_resource(ws, rel)))
            messages.append(UserMessage(f"`{symbol}` is defined in {rel} at line {line + 1}."))
        else:
            messages.append(
                UserMessage(f"(`{symbol}` was not found by name; search the workspace for it first.)")
            )
        return messages

    @server.prompt(title="Fix a failing test", icons=icon("debug"))
    async def fix_failing_test(
        ctx: Context,
        test: Annotated[
            str, Field(description="The test, as path::name (completion offers the workspace's tests).")
        ],
        path: Annotated[str, Field(description="The test file, when `test` is only a name (optional).")] = "",
        failure: Annotated[str, Field(description="The failure output, if you have it (optional).")] = "",
    ) -> list[UserMessage]:
        """Find out why a test fails and fix the code (or the test, when the test is wrong)."""
        ws = workspace_for(ctx)
        rel, _, name = test.partition("::") if "::" in test else (path, "", test)
        messages = [
            UserMessage(
                f"The test `{name or test}` fails. Run it, read the failure, find the root cause in the code under "
                "test, and fix it with the smallest correct change. Change the test only if the test itself is "
                "wrong, and say why. Run the test again to confirm."
            )
        ]
        if rel:
            try:
                messages.append(UserMessage(_file_resource(ws, rel)))
            except ToolFailure as exc:
                messages.append(UserMessage(f"(could not read {rel}: {exc})"))
        if failure:
            messages.append(UserMessage(TextContent(type="text", text=f"Failure output:\n{failure}")))
        return messages

    @server.prompt(title="Write a commit message", icons=icon("git"))
    async def commit_message(
        ctx: Context,
        style: Annotated[
            str, Field(description="Conventions to follow, e.g. 'conventional commits' (optional).")
        ] = "",
    ) -> list[UserMessage]:
        """Write a commit message for the staged changes, in the repository's own style."""
        ws = workspace_for(ctx)
        diff, subjects = await anyio.to_thread.run_sync(_staged_and_history, ws)
        ask = (
            "Write a commit message for the staged changes below: a subject line of at most 72 characters in "
            "the imperative mood, a blank line, then a short body saying what changed and why."
        )
        if style:
            ask += f" Follow this convention: {style}."
        if subjects:
            ask += " Recent subjects, for the repository's style:\n" + "\n".join(f"- {s}" for s in subjects)
        return [UserMessage(ask), UserMessage(TextContent(type="text", text=diff))]

    lowlevel.replace_request(server, "prompts/get", GetPromptRequestParams, _refusing_bad_requests)


def _refusing_bad_requests(previous: Previous) -> Handler[GetPromptRequestParams]:
    """The SDK's prompts/get, with an unknown name or bad arguments answered as invalid params: the
    SDK raises ValueError there, which its dispatcher logs with a traceback before answering."""

    async def handler(ctx: RequestContext, params: GetPromptRequestParams) -> HandlerResult:
        assert previous is not None  # the SDK always has prompts/get
        try:
            return await previous(ctx, params)
        except ValueError as exc:
            message = str(exc)
            if message.startswith("Unknown prompt"):
                message += " (prompts/list names the prompts)"
            raise MCPError(code=INVALID_PARAMS, message=message) from None

    return handler


def _diff_for_review(ws: Workspace, path: str, base: str) -> str:
    if not gitquery.is_repo(ws):
        return "(the workspace is not a git repository: there are no tracked changes to review)"
    args = ["diff", "--no-ext-diff", "--no-textconv", "--stat", "--patch"]
    if base:
        if base.startswith("-"):
            return "(invalid base: a branch or commit name cannot start with '-')"
        args += ["--end-of-options", base]
    elif gitquery.run(ws, "rev-parse", "--verify", "--quiet", "HEAD").ok:
        args.append("HEAD")
    else:
        args.append("--cached")
    if path:
        try:
            args += ["--", sandbox.resolve(ws, path).rel or "."]
        except ToolFailure as exc:
            return f"({exc})"
    out = gitquery.run(ws, *args, max_output=MAX_DIFF)
    if not out.ok:
        return f"(git diff failed: {out.error})"
    untracked = [p for p in gitquery.changed_paths(ws) if p and not out.text.count(p)]
    text = out.text or "(no changes)"
    if out.truncated:
        text += "\n…[diff truncated]"
    if untracked:
        text += "\nUntracked or otherwise changed files not in the diff:\n" + "\n".join(untracked[:200])
    return text


def _staged_and_history(ws: Workspace) -> tuple[str, list[str]]:
    if not gitquery.is_repo(ws):
        return "(the workspace is not a git repository)", []
    out = gitquery.staged_diff(ws, MAX_DIFF)
    text = out.text if out.ok else f"(git diff --cached failed: {out.error})"
    if out.ok and not text.strip():
        text = "(nothing is staged: stage changes with git add first)"
    if out.truncated:
        text += "\n…[diff truncated]"
    return text, gitquery.recent_subjects(ws)


def _find_symbol(ws: Workspace, symbol: str, path: str) -> tuple[str, int] | None:
    files = [path] if path else [f for f in walk_files(ws, 6000) if os.path.splitext(f)[1] in SOURCE_EXTS]
    for rel in files:
        for name, line in symbols_in(ws, rel):
            if name == symbol:
                return rel, line
    return None

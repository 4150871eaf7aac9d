"""Drafting text with the client's own model (MCP sampling): a commit message for the staged changes."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field
from typing_extensions import TypedDict

from ..call import current
from ..lazy import LazyModule
from ..registry import ToolFailure, tool

gitquery = LazyModule("mcp_server_ide.engines.git.query")
peer = LazyModule("mcp_server_ide.engines.peer")

MAX_DIFF = 60_000


class CommitDraft(TypedDict):
    message: str
    model: str
    stagedFiles: int
    diffTruncated: bool


@tool(
    "git",
    title="Draft commit message",
    read_only=True,
    requires=("git",),
    example={"style": "conventional commits"},
    errors=("nothing staged", "the client offers no sampling", "not a git repository"),
)
async def draft_commit_message(
    style: Annotated[str, Field(description="E.g. 'conventional commits'.")] = "",
    maxTokens: Annotated[int, Field(ge=50, le=4000)] = 400,
) -> CommitDraft:
    """Draft a message for the staged changes with the client's own model (MCP sampling). Commits nothing."""
    import anyio

    ws = current().workspace
    if not gitquery.is_repo(ws):
        raise ToolFailure(
            "not a git repository: there is nothing to commit (git init first)", kind="unavailable"
        )
    diff = await anyio.to_thread.run_sync(lambda: gitquery.staged_diff(ws, MAX_DIFF))
    if not diff.ok:
        raise ToolFailure(f"git diff --cached failed: {diff.error}", kind="unavailable")
    if not diff.text.strip():
        raise ToolFailure(
            "nothing is staged (rule: the draft describes staged changes); stage files with git add first",
            kind="conflict",
        )
    files = sum(1 for line in diff.text.splitlines() if line.startswith("diff --git "))
    subjects = await anyio.to_thread.run_sync(gitquery.recent_subjects, ws)
    system = (
        "You write git commit messages. Answer with the message only: a subject line of at most 72 characters "
        "in the imperative mood, a blank line, then a short body saying what changed and why."
    )
    if style:
        system += f" Follow this convention: {style}."
    prompt = (
        "Recent subjects in this repository:\n"
        + "\n".join(subjects[:10])
        + "\n\nStaged changes:\n"
        + diff.text
    )
    if diff.truncated:
        prompt += "\n…[diff truncated]"
    result = await peer.sample(prompt, max_tokens=maxTokens, system_prompt=system, temperature=0.2)
    message = peer.text_of(result).strip()
    if not message:
        raise ToolFailure("the client's model returned no text", kind="unavailable")
    return CommitDraft(message=message, model=result.model, stagedFiles=files, diffTruncated=diff.truncated)

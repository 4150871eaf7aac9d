"""Elicitation, sampling, roots and list_changed, each with a client that supports it and one that
does not, on both protocol eras (2025-11-25 handshake: server-to-client requests mid-call;
2026-07-28: InputRequiredResult and a retry)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import anyio
import pytest
from mcp_types import CreateMessageResult, ElicitResult, ListRootsResult, Root, TextContent

from mcp_server_ide.server import ServerOptions
from mcp_server_ide.workspace import Policy

from .support.results import payload

pytestmark = pytest.mark.anyio

ERAS = ["legacy", "2026-07-28"]


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@e.st", "-c", "user.name=T", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


# ----------------------------------------------------------------------------- elicitation


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("answer", ["accept", "decline"])
async def test_overwriting_an_unread_file_asks_the_person(ws_path, mcp, mode, answer):
    (ws_path / "a.py").write_text("old\n")
    asked: list[str] = []

    async def elicit(ctx, params):
        asked.append(params.message)
        return ElicitResult(action=answer, content={"confirm": True} if answer == "accept" else None)

    async with mcp(ws_path, mode=mode, elicitation_callback=elicit) as client:
        result = await client.call_tool("rewrite_file_content", {"pathInProject": "a.py", "text": "new\n"})
    assert asked == ["Overwrite 'a.py'? The assistant has not read this file in this session."]
    if answer == "accept":
        assert not result.is_error
        assert (ws_path / "a.py").read_text() == "new\n"
    else:
        assert result.is_error and "declined" in result.content[0].text
        assert (ws_path / "a.py").read_text() == "old\n"


@pytest.mark.parametrize("mode", ERAS)
async def test_a_file_read_in_this_session_is_overwritten_without_asking(ws_path, mcp, mode):
    (ws_path / "a.py").write_text("old\n")

    async def elicit(ctx, params):
        raise AssertionError("must not ask")

    async with mcp(ws_path, mode=mode, elicitation_callback=elicit) as client:
        await client.call_tool("get_file_text_by_path", {"pathInProject": "a.py"})
        result = await client.call_tool("rewrite_file_content", {"pathInProject": "a.py", "text": "new\n"})
        assert not result.is_error
        # A new file is no risk: nothing to ask either.
        assert not (
            await client.call_tool("rewrite_file_content", {"pathInProject": "b.py", "text": "x"})
        ).is_error


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("policy", ["refuse", "allow"])
async def test_without_elicitation_the_seed_contract_holds(ws_path, mcp, mode, policy):
    # A client that cannot ask the person keeps the seed's rewrite semantics whatever the policy.
    (ws_path / "a.py").write_text("old\n")
    async with mcp(ws_path, mode=mode, policy=Policy(confirm_policy=policy)) as client:
        result = await client.call_tool("rewrite_file_content", {"pathInProject": "a.py", "text": "new\n"})
    assert not result.is_error
    assert (ws_path / "a.py").read_text() == "new\n"


@pytest.mark.parametrize("policy", ["refuse", "allow"])
async def test_confirm_policy_decides_when_elicitation_fails(ws_path, mcp, policy):
    # engines/confirm: when the person cannot be asked (the client errors), --confirm-policy decides.
    (ws_path / "a.py").write_text("old\n")

    async def broken(ctx, params):
        raise RuntimeError("no UI")

    async with mcp(
        ws_path, mode="legacy", policy=Policy(confirm_policy=policy), elicitation_callback=broken
    ) as client:
        result = await client.call_tool("rewrite_file_content", {"pathInProject": "a.py", "text": "new\n"})
    assert result.is_error == (policy == "refuse")


# ----------------------------------------------------------------------------- sampling


def staged_repo(root: Path) -> None:
    git(root, "init", "-q")
    (root / "app.py").write_text("print('v1')\n")
    git(root, "add", "app.py")
    git(root, "commit", "-qm", "Add app")
    (root / "app.py").write_text("print('v2')\n")
    git(root, "add", "app.py")


@pytest.mark.parametrize("mode", ERAS)
async def test_draft_commit_message_uses_the_clients_model(ws_path, mcp, mode):
    staged_repo(ws_path)
    prompts: list[str] = []

    async def sample(ctx, params):
        prompts.append(params.messages[0].content.text)
        return CreateMessageResult(
            role="assistant",
            content=TextContent(type="text", text="Print v2\n\nBump the greeting."),
            model="m1",
        )

    async with mcp(ws_path, mode=mode, sampling_callback=sample) as client:
        result = await client.call_tool("draft_commit_message", {})
    assert not result.is_error, result.content[0].text
    assert payload(result)["message"] == "Print v2\n\nBump the greeting."
    assert payload(result)["model"] == "m1"
    assert "-print('v1')" in prompts[0] and "Add app" in prompts[0]


@pytest.mark.parametrize("mode", ERAS)
async def test_draft_commit_message_without_sampling_fails_clearly(ws_path, mcp, mode):
    staged_repo(ws_path)
    async with mcp(ws_path, mode=mode) as client:
        if mode == "legacy":
            result = await client.call_tool("draft_commit_message", {})
            assert result.is_error
            assert "does not offer sampling" in result.content[0].text
        else:  # 2026-07-28: the request declared no sampling capability -> -32021
            with pytest.raises(Exception, match="sampling"):
                await client.call_tool("draft_commit_message", {})


# ----------------------------------------------------------------------------- roots


async def test_roots_become_the_workspace_and_list_changed_is_followed(tmp_path, monkeypatch):
    from mcp import Client

    from mcp_server_ide.server import build_server
    from mcp_server_ide.workspaces import LocalWorkspaces

    start = tmp_path / "start"
    first = tmp_path / "first"
    second = tmp_path / "second"
    for folder in (start, first, second):
        folder.mkdir()
    (first / "one.txt").write_text("1")
    (second / "two.txt").write_text("2")
    monkeypatch.chdir(start)
    workspaces = LocalWorkspaces(None, Policy())
    server, _ = build_server(workspaces.for_context, ServerOptions(workspaces=workspaces))
    roots = [Root(uri=first.as_uri(), name="first")]
    notes: list[str] = []

    async def list_roots(ctx):
        return ListRootsResult(roots=roots)

    async def handler(message):
        notes.append(type(message).__name__)

    async with Client(
        server, mode="legacy", list_roots_callback=list_roots, message_handler=handler
    ) as client:
        with anyio.move_on_after(5):
            while workspaces.workspace.root != first.resolve():
                await anyio.sleep(0.05)
        assert workspaces.workspace.roots == [first.resolve()]
        assert (
            payload(await client.call_tool("get_file_text_by_path", {"pathInProject": "one.txt"}))["content"]
            == "1"
        )
        roots.append(Root(uri=second.as_uri(), name="second"))
        await client.send_roots_list_changed()
        with anyio.move_on_after(5):
            while len(workspaces.workspace.roots) < 2:
                await anyio.sleep(0.05)
        assert workspaces.workspace.roots == [first.resolve(), second.resolve()]
        # Multi-root: a path starting with another root's folder name resolves there.
        read = await client.call_tool("get_file_text_by_path", {"pathInProject": "second/two.txt"})
        assert payload(read)["content"] == "2"
        assert "ToolListChangedNotification" in notes
    workspaces.close()


async def test_a_client_without_roots_keeps_the_starting_folder(tmp_path, monkeypatch):
    from mcp import Client

    from mcp_server_ide.server import build_server
    from mcp_server_ide.workspaces import LocalWorkspaces

    monkeypatch.chdir(tmp_path)
    workspaces = LocalWorkspaces(None, Policy())
    server, _ = build_server(workspaces.for_context, ServerOptions(workspaces=workspaces))
    async with Client(server, mode="legacy") as client:
        await client.list_tools()
        await anyio.sleep(0.2)
    assert workspaces.workspace.roots == [tmp_path.resolve()]
    workspaces.close()


# ----------------------------------------------------------------------------- dynamic tools


async def test_git_tools_appear_with_a_repository_and_list_changed_is_sent(ws_path, mcp):
    notes: list[str] = []

    async def handler(message):
        notes.append(type(message).__name__)

    async with mcp(ws_path, mode="legacy", message_handler=handler) as client:
        assert client.server_capabilities.tools.list_changed is True
        names = {t.name for t in (await client.list_tools()).tools}
        assert "draft_commit_message" not in names
        hidden = await client.call_tool("draft_commit_message", {})
        assert hidden.is_error and "git init" in hidden.content[0].text
        git(ws_path, "init", "-q")  # by the person, outside the server
        with anyio.move_on_after(10):
            while "ToolListChangedNotification" not in notes:
                await anyio.sleep(0.1)
        assert "ToolListChangedNotification" in notes
        names = {t.name for t in (await client.list_tools()).tools}
        assert "draft_commit_message" in names


async def test_2026_clients_hear_tool_changes_on_their_listen_stream(ws_path, mcp):
    async with mcp(ws_path, mode="2026-07-28") as client:
        await client.list_tools()
        async with client.listen(tools_list_changed=True) as sub:
            got: list[str] = []

            async def read() -> None:
                async for event in sub:
                    got.append(type(event).__name__)

            async with anyio.create_task_group() as tg:
                tg.start_soon(read)
                git(ws_path, "init", "-q")
                # A tool call that may change the workspace re-checks its features at its end.
                await client.call_tool("create_new_file_with_text", {"pathInProject": "n.txt", "text": "x"})
                with anyio.move_on_after(5):
                    while not got:
                        await anyio.sleep(0.05)
                tg.cancel_scope.cancel()
        assert got == ["ToolsListChanged"]

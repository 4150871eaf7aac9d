"""A change of the client's roots keeps the state of the roots still there (craft issue, bug 8):
the editor model, resource subscriptions' disk events, the files a session has read, the git
repository, rope's project, in-process action work and the detected features, through an MCP client
session that announces its roots and says when they change (2025-era roots; the real server)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio
import mcp_types
import pytest

from .support.gitrepo import Git, flat_status, isolated_git
from .support.roots import RootsClient, call, roots_session

pytestmark = pytest.mark.anyio


def _folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *names: str) -> list[Path]:
    """Fresh folders (resolved), and the current folder moved to one that is none of them."""
    start = tmp_path / "start"
    start.mkdir()
    monkeypatch.chdir(start)
    out = []
    for name in names:
        (tmp_path / name).mkdir()
        out.append((tmp_path / name).resolve())
    return out


async def _breakpoints(client: Any) -> list[dict[str, Any]]:
    return await call(client, "get_debugger_breakpoints")


async def test_editor_of_a_root_that_stays_survives_and_a_new_primary_root_has_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp_server_ide.engines.editor import service
    from mcp_server_ide.engines.editor.headless import HeadlessEditor
    from mcp_server_ide.workspace import Workspace

    first, second, elsewhere = _folders(tmp_path, monkeypatch, "first", "second", "elsewhere")
    (first / "a.py").write_text("one = 1\ntwo = 2\nthree = 3\n")
    (second / "b.py").write_text("bee = 1\n")
    peer = RootsClient([second])
    async with roots_session(peer) as (client, workspaces):
        ws = workspaces.workspace
        await call(client, "open_file_in_editor", {"pathInProject": "b.py"})

        await peer.change(client, [first])
        assert (await call(client, "get_editor_state"))["openFiles"] == []  # the first root's editor
        await call(client, "open_file_in_editor", {"pathInProject": "a.py", "startLine": 2, "endLine": 2})
        await call(client, "toggle_debugger_breakpoint", {"pathInProject": "a.py", "line": 3})
        # A live editor linked to the workspace (a stand-in for the VS Code bridge, which does not
        # exist yet: the headless model of another folder, a real backend).
        editors = ws.service(service.Editor)
        live = HeadlessEditor(Workspace.open(elsewhere))
        editors.use(live)
        editors.use(None)
        model = editors.headless

        # A root is added: the editor is the same, open file, selection and breakpoints included.
        await peer.change(client, [first, second])
        assert ws.service(service.Editor) is editors and editors.headless is model
        state = await call(client, "get_editor_state")
        assert state["activeFile"] == str(first / "a.py") and state["openFiles"] == [str(first / "a.py")]
        assert state["selection"]["text"] == "two = 2"
        assert await _breakpoints(client) == [{"path": str(first / "a.py"), "line": 3}]

        # Reordered with a live editor linked: the link stays (it is the person's editor, whatever
        # its folders); the headless model is the new primary root's.
        editors.use(live)
        await peer.change(client, [second, first])
        assert ws.service(service.Editor) is editors and editors.backend is live
        editors.use(None)
        state = await call(client, "get_editor_state")
        assert state["openFiles"] == [str(second / "b.py")], state
        assert await _breakpoints(client) == []

        # Only the second root: still its editor; back to the first root: its editor as it was.
        await peer.change(client, [second])
        assert (await call(client, "get_editor_state"))["openFiles"] == [str(second / "b.py")]
        await peer.change(client, [first])
        assert (await call(client, "get_editor_state"))["activeFile"] == str(first / "a.py")
        assert await _breakpoints(client) == [{"path": str(first / "a.py"), "line": 3}]
    live.shutdown()


async def _updated(peer: RootsClient, target: Path, seconds: float = 20) -> None:
    """Change ``target`` on disk until the server says it was updated (the watcher may take a moment
    to start watching: each write is a fresh change, so no timing is assumed)."""
    uri = target.as_uri()

    def seen() -> bool:
        return any(str(getattr(getattr(m, "params", None), "uri", "")) == uri for m in peer.messages)

    peer.messages.clear()
    with anyio.fail_after(seconds):
        n = 0
        while not seen():
            n += 1
            target.write_text(f"changed on disk {n}\n")
            with anyio.move_on_after(0.5):
                while not seen():
                    await anyio.sleep(0.02)


async def test_resource_subscriptions_keep_getting_disk_changes_after_a_roots_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = _folders(tmp_path, monkeypatch, "first", "second")
    kept, added = first / "notes.txt", second / "other.txt"
    kept.write_text("one\n")
    added.write_text("one\n")
    peer = RootsClient([first])
    async with roots_session(peer) as (client, _):
        await client.subscribe_resource(kept.as_uri())
        await _updated(peer, kept)

        await peer.change(client, [first, second])
        await _updated(peer, kept)  # the subscription made before the change
        await client.subscribe_resource(added.as_uri())
        await _updated(peer, added)  # a file of the new root

        await peer.change(client, [second])
        await _updated(peer, added)


async def test_a_file_read_before_a_roots_change_is_still_read_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = _folders(tmp_path, monkeypatch, "first", "second")
    (first / "seen.txt").write_text("old\n")
    asked: list[str] = []

    async def elicit(context: Any, params: Any) -> Any:
        asked.append(params.message)
        return mcp_types.ElicitResult(action="accept", content={"confirm": True})

    peer = RootsClient([first])
    async with roots_session(peer, elicitation_callback=elicit) as (client, _):
        await call(client, "get_file_text_by_path", {"pathInProject": "seen.txt"})
        await peer.change(client, [first, second])
        await call(client, "rewrite_file_content", {"pathInProject": "seen.txt", "text": "new\n"})
        assert asked == []  # read in this session: overwritten without asking
        assert (first / "seen.txt").read_text() == "new\n"


async def _changed(client: Any) -> list[str]:
    """The paths ``get_project_vcs_status`` names (each one a MODIFICATION)."""
    status = flat_status(await call(client, "get_project_vcs_status"))
    assert all(c["type"] == "MODIFICATION" for c in status), status
    return [c["pathInProject"] for c in status]


async def test_git_rope_actions_and_features_follow_the_primary_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp_server_ide.engines.actions.work import ActionWork
    from mcp_server_ide.engines.git import Repo
    from mcp_server_ide.engines.journal import Journal
    from mcp_server_ide.engines.pyrefactor import RopeService
    from mcp_server_ide.surface.discovery import Features

    isolated_git(monkeypatch, tmp_path / "home")
    first, second = _folders(tmp_path, monkeypatch, "first", "second")
    (second / "go.mod").write_text("module second\n")  # a feature only the second root has
    for root, name in ((first, "a.py"), (second, "b.py")):
        git = Git(root)
        git("init", "-q")
        (root / name).write_text("x = 1\n")
        git("add", ".")
        git("commit", "-q", "-m", f"add {name}")
        (root / name).write_text("x = 2\n")
    peer = RootsClient([first])
    async with roots_session(peer) as (client, workspaces):
        ws = workspaces.workspace
        assert await _changed(client) == ["a.py"]
        repo, rope, features = ws.service(Repo), ws.service(RopeService), ws.service(Features)
        work, journal = ws.service(ActionWork), ws.service(Journal)
        release = threading.Event()
        running = work.spawn("Long work", lambda: release.wait(30))
        try:
            # A root is added: the first root's repository and rope project stay; the work runs on.
            await peer.change(client, [first, second])
            assert await _changed(client) == ["a.py"]
            assert ws.service(Repo) is repo and ws.service(RopeService) is rope
            assert ws.service(Journal) is journal
            assert ws.service(ActionWork) is work and not running.stop.is_set()
            assert ws.service(Features) is features and "go" in features.get()  # detected again
            indicators = await call(client, "get_progress_indicators")
            assert "Long work" in str(indicators), indicators

            # The second root becomes the only one: its repository, its rope project.
            await peer.change(client, [second])
            assert await _changed(client) == ["b.py"]
            assert ws.service(Repo) is not repo and ws.service(Repo).root == second
            assert ws.service(RopeService) is not rope
            assert Path(ws.service(RopeService).project.address) == second
            assert ws.service(Journal) is not journal and ws.service(Journal).root == second
        finally:
            release.set()

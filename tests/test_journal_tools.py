"""The change journal's tools, through a real MCP client session: list, undo, checkpoints, restore, diff, keep.

Acceptance (issue 7): a scripted session of 50 mixed edits through several tools, then a restore to a
checkpoint leaves every file byte-identical; an undo over a file changed outside the server is refused
and changes nothing.
"""

from __future__ import annotations

import os
import random
import stat
from pathlib import Path
from typing import Any

import pytest

from mcp_server_ide.workspace import Policy

from .support.results import data

pytestmark = pytest.mark.anyio


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every regular file under root: its bytes and permission bits."""
    out: dict[str, tuple[bytes, int]] = {}
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in files:
            path = Path(folder) / name
            out[path.relative_to(root).as_posix()] = (path.read_bytes(), stat.S_IMODE(path.stat().st_mode))
    return out


async def call(client: Any, name: str, args: dict[str, Any]) -> Any:
    result = await client.call_tool(name, args)
    assert not result.is_error, f"{name}({args}) failed: {result.content[0].text}"
    return data(result)


async def fails(client: Any, name: str, args: dict[str, Any]) -> str:
    result = await client.call_tool(name, args)
    assert result.is_error, f"{name}({args}) should have failed: {result.content[0].text}"
    return result.content[0].text


def seed_files(root: Path) -> None:
    """Files written by hand before the server starts (not in the journal): odd encodings and modes."""
    (root / "src").mkdir()
    (root / "src" / "app.py").write_bytes(b"def main():\n    return 1\n")
    (root / "crlf.txt").write_bytes(b"alpha\r\nbeta\r\ngamma\r\n")
    (root / "bom.txt").write_bytes(b"\xef\xbb\xbfwith bom\nline 2\n")
    (root / "latin1.txt").write_bytes("caf\xe9 cr\xe8me\n".encode("latin-1"))
    (root / "run.sh").write_bytes(b"#!/bin/sh\necho hi\n")
    os.chmod(root / "run.sh", 0o755)
    (root / "untouched.md").write_bytes(b"# never edited\n")


async def mixed_edits(client: Any, rng: random.Random, count: int, tag: str) -> None:
    """``count`` edits chosen at random over several tools and files (some create new files)."""
    files = ["src/app.py", "crlf.txt", "bom.txt", "latin1.txt", "run.sh"]
    created: list[str] = []
    for i in range(count):
        kind = rng.choice(["rewrite", "append", "replace", "lines", "create", "undo"])
        target = rng.choice(files + created)
        word = f"{tag}{i}"
        if kind == "rewrite":
            # As an assistant would: read before replacing (the server asks to confirm a blind overwrite).
            await call(client, "get_file_text_by_path", {"pathInProject": target})
            await call(
                client,
                "rewrite_file_content",
                {"pathInProject": target, "text": f"rewritten {word}\nsecond\n"},
            )
        elif kind == "append":
            await call(client, "append_file_content", {"pathInProject": target, "text": f"{word}\n"})
        elif kind == "replace":
            text = (await call(client, "get_file_text_by_path", {"pathInProject": target}))["content"]
            first = text.splitlines()[0] if text else ""
            if first:
                await call(
                    client,
                    "replace_specific_text",
                    {
                        "pathInProject": target,
                        "searchText": first,
                        "replaceText": f"{first} {word}",
                        "replaceAll": True,
                    },
                )
        elif kind == "lines":
            await call(
                client,
                "replace_file_content_at_position",
                {"pathInProject": target, "startLine": 1, "endLine": 0, "content": f"# {word}\n"},
            )
        elif kind == "create":
            path = f"new/{tag}/{word}.txt"
            await call(
                client, "create_new_file_with_text", {"pathInProject": path, "text": f"created {word}\n"}
            )
            created.append(path)
        else:
            await call(client, "undo_changes", {"last": rng.randint(1, 2)})


async def test_fifty_mixed_edits_then_restore_is_byte_identical(mcp: Any, ws_path: Path) -> None:
    seed_files(ws_path)
    rng = random.Random(7)
    async with mcp(ws_path) as client:
        # Some journaled history before the checkpoint, so the checkpoint has files to snapshot.
        await mixed_edits(client, rng, 10, "pre")
        at_checkpoint = snapshot(ws_path)
        info = await call(client, "create_checkpoint", {"name": "base", "description": "before the session"})
        assert info["name"] == "base" and info["changesSince"] == 0

        await mixed_edits(client, rng, 50, "e")
        after_edits = snapshot(ws_path)
        assert after_edits != at_checkpoint

        listed = await call(client, "list_recent_changes", {"limit": 200, "includeDiff": False})
        tools_used = {c["tool"] for c in listed["changes"]}
        assert {"rewrite_file_content", "append_file_content", "create_new_file_with_text"} <= tools_used

        diff = await call(client, "diff_since_checkpoint", {"name": "base"})
        assert diff["files"], "the edits must show in the diff since the checkpoint"
        assert all(f["diff"] for f in diff["files"])
        assert any(f["status"] == "added" for f in diff["files"])

        restored = await call(client, "restore_checkpoint", {"name": "base"})
        assert restored["checkpoint"] == "base" and restored["restored"]
        assert snapshot(ws_path) == at_checkpoint  # bytes and modes; created files are gone

        empty = await call(client, "diff_since_checkpoint", {"name": "base"})
        assert empty["files"] == []

        # The restore is journaled: undoing it brings the session's end state back, byte for byte.
        await call(client, "undo_changes", {"last": len(restored["restored"])})
        assert snapshot(ws_path) == after_edits

        # Restoring to 'start' (before the journal's first change) gives back the hand-written files.
        await call(client, "restore_checkpoint", {"name": "start"})
        start = snapshot(ws_path)
        assert start["crlf.txt"][0] == b"alpha\r\nbeta\r\ngamma\r\n"
        assert start["bom.txt"][0] == b"\xef\xbb\xbfwith bom\nline 2\n"
        assert start["latin1.txt"][0] == "caf\xe9 cr\xe8me\n".encode("latin-1")
        assert start["run.sh"] == (b"#!/bin/sh\necho hi\n", 0o755)
        assert not (ws_path / "new").exists() or not any((ws_path / "new").rglob("*.txt"))


async def test_undo_over_outside_change_is_refused_and_changes_nothing(mcp: Any, ws_path: Path) -> None:
    async with mcp(ws_path, policy=Policy(confirm_policy="allow")) as client:
        await call(client, "create_new_file_with_text", {"pathInProject": "a.txt", "text": "a1\n"})
        await call(client, "create_new_file_with_text", {"pathInProject": "b.txt", "text": "b1\n"})
        await call(client, "rewrite_file_content", {"pathInProject": "a.txt", "text": "a2\n"})
        await call(client, "rewrite_file_content", {"pathInProject": "b.txt", "text": "b2\n"})
        (ws_path / "a.txt").write_bytes(b"a2 edited by hand\n")
        before = snapshot(ws_path)
        journal_size = (await call(client, "list_recent_changes", {"includeDiff": False}))["total"]

        message = await fails(client, "undo_changes", {"last": 4})
        assert "conflict" in message and "a.txt" in message and "outside" in message
        assert snapshot(ws_path) == before  # b.txt's undo was not done either
        assert (await call(client, "list_recent_changes", {"includeDiff": False}))["total"] == journal_size

        # The change to b.txt alone can be undone; a.txt's only with force.
        undone = await call(client, "undo_changes", {"last": 1})
        assert undone["files"] == ["b.txt"] and (ws_path / "b.txt").read_bytes() == b"b1\n"
        message = await fails(client, "undo_changes", {"last": 1})
        assert "a.txt" in message
        assert (ws_path / "a.txt").read_bytes() == b"a2 edited by hand\n"
        forced = await call(client, "undo_changes", {"last": 1, "force": True})
        assert forced["files"] == ["a.txt"] and (ws_path / "a.txt").read_bytes() == b"a1\n"

        # Restore refuses the same way.
        await call(client, "create_checkpoint", {"name": "cp"})
        await call(client, "rewrite_file_content", {"pathInProject": "b.txt", "text": "b3\n"})
        (ws_path / "b.txt").write_bytes(b"b3 by hand\n")
        message = await fails(client, "restore_checkpoint", {"name": "cp"})
        assert "conflict" in message and "b.txt" in message
        assert (ws_path / "b.txt").read_bytes() == b"b3 by hand\n"
        diff = await call(client, "diff_since_checkpoint", {"name": "cp"})
        assert [f["path"] for f in diff["files"]] == ["b.txt"] and diff["files"][0]["changedOutside"] is True


async def test_undo_of_a_single_change_and_redo(mcp: Any, ws_path: Path) -> None:
    async with mcp(ws_path) as client:
        await call(client, "create_new_file_with_text", {"pathInProject": "x/new.txt", "text": "hello\n"})
        os.chmod(ws_path / "x" / "new.txt", 0o640)
        await call(client, "append_file_content", {"pathInProject": "x/new.txt", "text": "more\n"})
        page = await call(client, "list_recent_changes", {"limit": 1})
        change = page["changes"][0]
        assert change["action"] == "modified" and "+more" in change["diff"]
        assert page["nextBeforeId"] == 2
        older = await call(client, "list_recent_changes", {"limit": 1, "beforeId": page["nextBeforeId"]})
        assert older["changes"][0]["action"] == "created" and older.get("nextBeforeId") is None

        # Undoing the creation while a later change exists is refused with the reason.
        message = await fails(client, "undo_changes", {"changeId": 1})
        assert "#2" in message and (ws_path / "x" / "new.txt").exists()

        await call(client, "undo_changes", {"last": 2})
        assert not (ws_path / "x" / "new.txt").exists()
        listed = await call(client, "list_recent_changes", {"limit": 10, "includeDiff": False})
        by_id = {c["id"]: c for c in listed["changes"]}
        assert by_id[1]["undone"] and by_id[2]["undone"]
        delete = next(c for c in listed["changes"] if c["kind"] == "undo" and c["undoes"] == 1)
        assert delete["action"] == "deleted"

        # Undo of the undo re-creates the file byte for byte, with its mode.
        await call(client, "undo_changes", {"changeId": delete["id"]})
        assert (ws_path / "x" / "new.txt").read_bytes() == b"hello\n"
        assert stat.S_IMODE((ws_path / "x" / "new.txt").stat().st_mode) == 0o640

        message = await fails(client, "undo_changes", {"changeId": 99})
        assert "not found" in message


async def test_undoing_or_restoring_a_creation_takes_away_the_folders_it_made(
    mcp: Any, ws_path: Path
) -> None:
    """Folders a write made for a new file go with it on undo and restore, when empty; folders that
    were there before, or that hold anything else, stay."""
    (ws_path / "mine").mkdir()  # made by hand before the server wrote anything
    async with mcp(ws_path) as client:
        await call(client, "create_new_file_with_text", {"pathInProject": "new/deep/x.txt", "text": "x\n"})
        await call(client, "create_new_file_with_text", {"pathInProject": "mine/y.txt", "text": "y\n"})
        await call(client, "undo_changes", {"last": 2})
        assert not (ws_path / "new").exists()
        assert (ws_path / "mine").is_dir()  # not made by the server: it stays

        # Redo (undo of the undo) makes the folders again; a later undo takes them away again.
        listed = await call(client, "list_recent_changes", {"limit": 10, "includeDiff": False})
        undo = next(c for c in listed["changes"] if c["kind"] == "undo" and c["undoes"] == 1)
        await call(client, "undo_changes", {"changeId": undo["id"]})
        assert (ws_path / "new" / "deep" / "x.txt").read_bytes() == b"x\n"

        await call(client, "create_checkpoint", {"name": "before-pkg"})
        await call(client, "create_new_file_with_text", {"pathInProject": "pkg/sub/a.py", "text": "a\n"})
        await call(client, "create_new_file_with_text", {"pathInProject": "pkg/b.py", "text": "b\n"})
        await call(client, "create_new_file_with_text", {"pathInProject": "gone/c.py", "text": "c\n"})
        (ws_path / "gone" / "notes.txt").write_text("by hand\n")  # other hands put a file there
        await call(client, "restore_checkpoint", {"name": "before-pkg", "force": True})
    assert not (ws_path / "pkg").exists()  # both made for the new files, empty again: removed
    assert (ws_path / "gone" / "notes.txt").read_text() == "by hand\n"  # holds a file: stays
    assert not (ws_path / "gone" / "c.py").exists()
    assert (ws_path / "new" / "deep" / "x.txt").exists()  # made before the checkpoint: untouched


async def test_keep_changes_moves_the_checkpoint(mcp: Any, ws_path: Path) -> None:
    async with mcp(ws_path, policy=Policy(confirm_policy="allow")) as client:
        await call(client, "create_new_file_with_text", {"pathInProject": "k.txt", "text": "v1\n"})
        await call(client, "create_new_file_with_text", {"pathInProject": "u.txt", "text": "u1\n"})
        await call(client, "create_checkpoint", {"name": "review"})
        await call(client, "rewrite_file_content", {"pathInProject": "k.txt", "text": "v2\n"})
        await call(client, "rewrite_file_content", {"pathInProject": "u.txt", "text": "u2\n"})
        kept = await call(client, "keep_changes", {"name": "review", "paths": ["k.txt"]})
        assert kept["kept"] == ["k.txt"]
        diff = await call(client, "diff_since_checkpoint", {})  # the newest checkpoint
        assert [f["path"] for f in diff["files"]] == ["u.txt"]
        await call(client, "restore_checkpoint", {"name": "review", "paths": ["u.txt"]})
        assert (ws_path / "u.txt").read_bytes() == b"u1\n" and (ws_path / "k.txt").read_bytes() == b"v2\n"
        listed = await call(client, "list_checkpoints", {})
        assert [c["name"] for c in listed] == ["review"]
        message = await fails(client, "restore_checkpoint", {"name": "nope"})
        assert "no checkpoint named" in message


async def test_journal_paths_go_through_the_sandbox(mcp: Any, ws_path: Path) -> None:
    async with mcp(ws_path) as client:
        message = await fails(client, "list_recent_changes", {"path": "../../etc/passwd"})
        assert "outside the workspace" in message
        message = await fails(client, "restore_checkpoint", {"name": "start", "paths": ["/etc/passwd"]})
        assert "outside the workspace" in message


def test_journal_records_every_door_and_survives_a_restart(http_server: Any, ws_path: Path) -> None:
    import httpx

    def rest(server: Any, tool: str, **args: Any) -> httpx.Response:
        return httpx.post(f"{server.url}/mcp/{tool}", json=args, timeout=30)

    first = http_server(ws_path)
    assert (
        rest(first, "create_new_file_with_text", pathInProject="r.txt", text="one\r\ntwo\r\n").status_code
        == 200
    )
    assert (
        rest(
            first, "replace_specific_text", pathInProject="r.txt", searchText="two", replaceText="2"
        ).status_code
        == 200
    )
    first.stop()

    second = http_server(ws_path)
    page = rest(second, "list_recent_changes", limit=5).json()["status"]
    assert [(c["tool"], c["door"]) for c in page["changes"]] == [
        ("replace_specific_text", "rest"),
        ("create_new_file_with_text", "rest"),
    ]
    assert "-two\n+2\n" in page["changes"][0]["diff"]
    assert rest(second, "undo_changes", last=1).status_code == 200
    assert (ws_path / "r.txt").read_bytes() == b"one\r\ntwo\r\n"
    # After undoing #2 the file holds what #1 wrote again, so #1 (its creation) can be undone: it is deleted.
    assert rest(second, "undo_changes", changeId=1).status_code == 200
    assert not (ws_path / "r.txt").exists()
    refused = rest(second, "undo_changes", changeId=1)
    assert refused.status_code == 409 and "already undone" in refused.json()["error"]


def test_two_servers_on_one_workspace_number_changes_uniquely(http_server: Any, ws_path: Path) -> None:
    """Two server processes editing one workspace in turn share one journal: every change gets its own
    id, each server lists the other's changes, and undoing an id (through either server) undoes that
    change. (Both servers have read the journal before the other writes: that is what went wrong.)"""
    import httpx

    def rest(server: Any, tool: str, **args: Any) -> Any:
        answer = httpx.post(f"{server.url}/mcp/{tool}", json=args, timeout=30).json()
        assert answer["error"] is None, f"{tool}({args}): {answer['error']}"
        return answer["status"]

    a, b = http_server(ws_path), http_server(ws_path)
    assert rest(a, "list_recent_changes")["changes"] == rest(b, "list_recent_changes")["changes"] == []
    rest(a, "create_new_file_with_text", pathInProject="shared.txt", text="one\n")
    rest(b, "replace_specific_text", pathInProject="shared.txt", searchText="one", replaceText="two")
    rest(a, "create_new_file_with_text", pathInProject="from_a.txt", text="a\n")
    rest(b, "create_new_file_with_text", pathInProject="from_b.txt", text="b\n")

    expected = [
        (4, "from_b.txt", "created"),
        (3, "from_a.txt", "created"),
        (2, "shared.txt", "modified"),
        (1, "shared.txt", "created"),
    ]
    for server in (a, b):
        page = rest(server, "list_recent_changes", includeDiff=False)
        assert [(c["id"], c["path"], c["action"]) for c in page["changes"]] == expected

    # Each undo goes through the server that did not make the change.
    assert rest(a, "undo_changes", changeId=2)["undone"][0]["path"] == "shared.txt"
    assert (ws_path / "shared.txt").read_bytes() == b"one\n"
    assert rest(b, "undo_changes", changeId=3)["undone"][0]["path"] == "from_a.txt"
    assert not (ws_path / "from_a.txt").exists()
    assert rest(a, "undo_changes", changeId=4)["undone"][0]["path"] == "from_b.txt"
    assert not (ws_path / "from_b.txt").exists()
    assert rest(b, "undo_changes", changeId=1)["undone"][0]["path"] == "shared.txt"
    assert not (ws_path / "shared.txt").exists()

    ids = [c["id"] for c in rest(a, "list_recent_changes", limit=50, includeDiff=False)["changes"]]
    assert ids == list(range(8, 0, -1))  # the four undos are #5..#8, whichever server wrote them
    undone = rest(b, "list_recent_changes", limit=50, includeDiff=False)["changes"]
    assert {c["id"]: c.get("undoneBy") for c in undone if c["id"] <= 4} == {2: 5, 3: 6, 4: 7, 1: 8}


def test_pruning_keeps_the_newest_entries_and_everything_they_need(ws_path: Path) -> None:
    """Past its limits the journal forgets its oldest entries, the checkpoints that depended on them
    and the stored bytes nothing kept refers to; what is kept still restores byte for byte, and a
    server starting later reads the pruned journal. (Engine level: the limits are not a user option.)"""

    from mcp_server_ide.engines import journal as engine
    from mcp_server_ide.engines import sandbox, textio
    from mcp_server_ide.workspace import Workspace

    ws = Workspace.open(ws_path)
    j = ws.service(engine.Journal)

    def write(name: str, text: str) -> None:
        resolved = sandbox.resolve_for_write(ws, name)
        before = resolved.path.read_bytes() if resolved.path.exists() else None
        with textio.file_lock(resolved.path):
            textio.write_file(ws, resolved, text.encode(), before=before, mode=None, make_parents=True)

    def blob_count() -> int:
        return sum(1 for shard in j.blobs.iterdir() for _ in shard.iterdir())

    try:
        for i in range(6):
            write("a.txt", f"v{i}\n")  # entries 1-6
        j.create_checkpoint("old")  # after entry 6
        write("b.txt", "b1\n")  # 7
        write("a.txt", "v6\n")  # 8
        j.create_checkpoint("new")  # after entry 8
        write("a.txt", "v7\n")  # 9
        assert blob_count() == 9  # v0..v7 and b1

        j.max_entries = 2
        assert j.prune() == (7, 1, 5)  # entries 1-7, checkpoint "old", blobs v0..v4
        assert [e.id for e in j.entries()] == [8, 9]
        assert [c.name for c in j.checkpoints()] == ["new"]
        assert blob_count() == 4  # v5 (before #8), v6, v7, b1 (checkpoint "new")
        assert j.prune() == (0, 0, 0)

        j.restore(j.checkpoint("new"))
        assert (ws_path / "a.txt").read_bytes() == b"v6\n" and (ws_path / "b.txt").read_bytes() == b"b1\n"
        start = {s.path: s.target for s in j.states(j.checkpoint(engine.START))}
        assert j.blob(start["a.txt"]) == b"v5\n"  # 'start' is now before the oldest change kept

        again = engine.Journal(ws)  # a server starting later on the same workspace
        assert [e.id for e in again.entries()] == [8, 9, 10]
        assert [c.name for c in again.checkpoints()] == ["new"]
    finally:
        ws.close()


def test_a_change_after_a_torn_line_is_kept(ws_path: Path) -> None:
    """A crash in the middle of writing a log line leaves half a line; the next change starts a line of
    its own, so a server reading the journal later still finds it. (Engine level: a crash is simulated
    by writing half a line into the log.)"""
    from mcp_server_ide.engines import journal as engine
    from mcp_server_ide.engines import sandbox, textio
    from mcp_server_ide.workspace import Workspace

    ws = Workspace.open(ws_path)
    j = ws.service(engine.Journal)

    def write(text: str) -> None:
        resolved = sandbox.resolve_for_write(ws, "a.txt")
        before = resolved.path.read_bytes() if resolved.path.exists() else None
        with textio.file_lock(resolved.path):
            textio.write_file(ws, resolved, text.encode(), before=before, mode=None)

    try:
        write("one\n")
        with open(j.log_path, "a", encoding="ascii") as log:
            log.write('{"id": 2, "time": 1.0, "tool": "creat')
        assert [e.id for e in j.entries()] == [1]
        write("two\n")
        assert [e.id for e in j.entries()] == [1, 2]
        later = engine.Journal(ws)
        assert [e.id for e in later.entries()] == [1, 2]
        later.close()
    finally:
        ws.close()

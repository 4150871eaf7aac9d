"""Files open in VS Code, through the bridge (engines/editor/bridge_files.py, engines/textio/buffers.py):
reads see an unsaved buffer and say so (and /mcp/status names VS Code's files), writes of such a file
go into the buffer (undoable there) and are journaled, files changed on disk are announced so clean
editors reload, and VS Code's diagnostics join the problems tools.

The extension's real bridge server (extension/src/protocol.ts) runs under node with
extension/test/peer_files.ts standing in for VS Code's documents (VS Code itself cannot run in the
default suite; the real proof is tests/e2e/test_vscode_files.py). The server is a real process, reached
through its REST door.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.apps_host import ESBUILD_VERSION
from tests.support.extension import EXTENSION
from tests.support.npm import npm_bin
from tests.test_editor_bridge import Peer, bridge_env, call, sock_dir  # noqa: F401  (sock_dir: a fixture)

EDITED = "edited in VS Code, unsaved"


@pytest.fixture(scope="module")
def files_peer_js(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("peer") / "peer_files.js"
    esbuild = npm_bin("esbuild", ESBUILD_VERSION, "esbuild")
    subprocess.run([str(esbuild), "test/peer_files.ts", "--bundle", "--platform=node", "--format=cjs",
                    f"--outfile={out}", "--log-level=warning"], cwd=EXTENSION, check=True, timeout=120)  # fmt: skip
    return out


@pytest.fixture
def peer(files_peer_js: Path, sock_dir: Path) -> Iterator[Peer]:  # noqa: F811
    p = Peer(files_peer_js, sock_dir / "bridge.sock").start()
    yield p
    p.kill()


def failure(server, tool: str, **args: object) -> str:
    answer = httpx.post(f"{server.url}/mcp/{tool}", json=args, timeout=30).json()
    assert answer["status"] is None, answer
    return str(answer["error"])


def test_a_read_sees_the_unsaved_buffer_and_says_so(http_server, ws_path: Path, peer: Peer) -> None:
    (ws_path / "a.py").write_text("alpha = 1\n")
    (ws_path / "b.py").write_text("beta = 1\n")
    server = http_server(ws_path, env=bridge_env(peer))
    peer.call("open", {"path": str(ws_path / "b.py")})  # open, clean: the file is what is read
    assert "buffer" not in call(server, "get_file_text_by_path", pathInProject="b.py")
    peer.call("open", {"path": str(ws_path / "a.py")})
    peer.call("type", {"path": str(ws_path / "a.py"), "text": "alpha = 'typed'\n"})
    read = call(server, "get_file_text_by_path", pathInProject="a.py")
    assert read["content"] == "alpha = 'typed'\n" and read["buffer"] == "unsaved", read
    fs_read = call(server, "project_fs_read", path="a.py")
    assert fs_read["content"] == "alpha = 'typed'\n" and fs_read["buffer"] == "unsaved", fs_read
    assert fs_read["hash"] == read["hash"]  # the hash of what saving the buffer would write
    assert (ws_path / "a.py").read_text() == "alpha = 1\n"
    # The JetBrains-style HTTP interface's status and initialize name VS Code's files:
    status = httpx.get(f"{server.url}/mcp/status", timeout=30).json()["result"]["environment"]
    assert status["activeFile"] == str(ws_path / "a.py")
    assert status["openFiles"] == [str(ws_path / "b.py"), str(ws_path / "a.py")]
    init = httpx.get(f"{server.url}/mcp/initialize", timeout=30).json()["result"]["environment"]
    assert init["activeFile"] == str(ws_path / "a.py")


def test_a_write_of_a_dirty_file_goes_into_its_buffer_undoably_and_is_journaled(
    http_server, ws_path: Path, peer: Peer
) -> None:
    (ws_path / "a.py").write_text("alpha = 1\nbeta = 2\n")
    server = http_server(ws_path, env=bridge_env(peer))
    path = str(ws_path / "a.py")
    peer.call("open", {"path": path})
    peer.call("type", {"path": path, "text": "alpha = 'typed'\nbeta = 2\n"})  # the person's unsaved text
    done = call(
        server, "replace_specific_text", pathInProject="a.py", searchText="beta = 2", replaceText="beta = 3"
    )
    assert done["buffer"] == EDITED, done
    assert peer.call("text", {"path": path}) == {"text": "alpha = 'typed'\nbeta = 3\n", "dirty": True}
    assert (ws_path / "a.py").read_text() == "alpha = 1\nbeta = 2\n"  # nothing under the person's feet
    changes = json.dumps(call(server, "list_recent_changes"))
    assert "a.py" in changes and "replace_specific_text" in changes  # journaled like any write
    # Ctrl+Z in the editor gives the person's text back:
    assert peer.call("undo", {"path": path}) == {"text": "alpha = 'typed'\nbeta = 2\n"}
    # A whole-file write made from a read of the buffer goes in too (one edit of the changed region):
    read = call(server, "get_file_text_by_path", pathInProject="a.py")
    done = call(server, "rewrite_file_content", pathInProject="a.py", text="alpha = 'typed'\nbeta = 4\n",
                expectedHash=read["hash"])  # fmt: skip
    assert done["buffer"] == EDITED, done
    assert peer.call("text", {"path": path})["text"] == "alpha = 'typed'\nbeta = 4\n"
    # The journal's undo acts on the buffer too:
    call(server, "undo_changes")
    assert peer.call("text", {"path": path})["text"] == "alpha = 'typed'\nbeta = 2\n"
    # The editor tools' edits of the unsaved buffer are journaled (and undone) the same way:
    call(server, "replace_current_file_text", text="gamma = 5\n")
    assert peer.call("text", {"path": path})["text"] == "gamma = 5\n"
    assert "replace_current_file_text" in json.dumps(call(server, "list_recent_changes"))
    call(server, "undo_changes")
    assert peer.call("text", {"path": path})["text"] == "alpha = 'typed'\nbeta = 2\n"
    assert (ws_path / "a.py").read_text() == "alpha = 1\nbeta = 2\n"


def test_a_stale_hash_or_a_delete_of_a_dirty_file_is_refused(http_server, ws_path: Path, peer: Peer) -> None:
    server = http_server(ws_path, env=bridge_env(peer))
    call(server, "create_new_file_with_text", pathInProject="a.py", text="alpha = 1\n")
    path = str(ws_path / "a.py")
    peer.call("open", {"path": path})
    disk_hash = call(server, "get_file_text_by_path", pathInProject="a.py")["hash"]
    peer.call("type", {"path": path, "text": "alpha = 'typed'\n"})
    # A write made from the file as it was before the person typed changes nothing:
    error = failure(server, "rewrite_file_content", pathInProject="a.py", text="x\n", expectedHash=disk_hash)
    assert "changed since it was read" in error, error
    # Undoing the creation would delete the file and throw the person's text away: refused, even forced.
    assert "changed" in failure(server, "undo_changes")
    error = failure(server, "undo_changes", force=True)
    assert "unsaved changes in VS Code" in error, error
    assert (ws_path / "a.py").read_text() == "alpha = 1\n"
    assert peer.call("text", {"path": path})["text"] == "alpha = 'typed'\n"


def test_files_a_tool_changed_on_disk_are_announced_to_the_editor(
    http_server, ws_path: Path, peer: Peer
) -> None:
    (ws_path / "b.py").write_text("beta = 1\n")
    server = http_server(ws_path, env=bridge_env(peer))
    path = str(ws_path / "b.py")
    peer.call("open", {"path": path})
    call(server, "replace_specific_text", pathInProject="b.py", searchText="1", replaceText="2")
    deadline = time.monotonic() + 20
    while [path] not in peer.call("changedFiles", {}):
        assert time.monotonic() < deadline, "VS Code was not told of the change"
        time.sleep(0.1)
    assert peer.call("text", {"path": path}) == {"text": "beta = 2\n", "dirty": False}


def test_vscode_diagnostics_join_the_problems_tools_without_duplicates(
    http_server, ws_path: Path, peer: Peer, tmp_path: Path
) -> None:
    (ws_path / "c.json").write_text('{"a": 1,, "b": 2}\n')
    server = http_server(ws_path, env=bridge_env(peer))
    own = call(server, "get_file_problems", pathInProject="c.json")["problems"]
    assert own and all(not p["source"].startswith("vscode") for p in own), own
    first = own[0]
    duplicate = {k: first[k] for k in ("severity", "line", "character", "endLine", "endCharacter", "message")}
    json_error = {"severity": "error", "line": 0, "character": 9, "endLine": 0, "endCharacter": 10,
                  "message": "Value expected", "source": "json", "code": "516"}  # fmt: skip
    outside = tmp_path / "elsewhere.json"
    peer.call("setDiagnostics", {"files": [
        {"path": str(ws_path / "c.json"), "problems": [json_error, {**duplicate, "source": "", "code": ""}]},
        {"path": str(outside), "problems": [json_error]},
    ]})  # fmt: skip
    found = call(server, "get_file_problems", pathInProject="c.json")
    from_vscode = [p for p in found["problems"] if p["source"].startswith("vscode")]
    assert from_vscode == [{**json_error, "source": "vscode/json"}], found
    assert "vscode/json" in found["sources"]
    project = call(server, "get_project_problems")
    files = {f["path"]: f["problems"] for f in project["files"]}
    assert set(files) == {"c.json"}, project  # the file outside the workspace is left out
    assert [p for p in files["c.json"] if p["source"] == "vscode/json"] == [
        {**json_error, "source": "vscode/json"}
    ]
    assert project["bySource"]["vscode/json"] == 1


def test_unsaved_text_the_files_encoding_cannot_hold_is_read_and_edited_as_utf8(
    http_server, ws_path: Path, peer: Peer
) -> None:
    (ws_path / "l.txt").write_bytes("caf\xe9\n".encode("cp1252"))
    server = http_server(ws_path, env=bridge_env(peer))
    path = str(ws_path / "l.txt")
    peer.call("open", {"path": path})
    peer.call("type", {"path": path, "text": "café 😀\n"})
    read = call(server, "get_file_text_by_path", pathInProject="l.txt")
    assert read["content"] == "café 😀\n" and read["buffer"] == "unsaved", read
    done = call(server, "replace_specific_text", pathInProject="l.txt", searchText="😀", replaceText="🙂 ok")
    assert done["buffer"] == EDITED
    assert peer.call("text", {"path": path})["text"] == "café 🙂 ok\n"  # the region after an astral character


def test_the_edit_sent_to_the_editor_is_only_the_changed_region() -> None:
    from mcp_server_ide.engines.editor.bridge_files import changed_region

    assert changed_region("a\nb😀c\nd\n", "a\nb😀X\nd\n") == (
        {"line": 1, "character": 2},
        {"line": 1, "character": 3},
        "X",
    )
    assert changed_region("same\n", "same\n") == (
        {"line": 1, "character": 0},
        {"line": 1, "character": 0},
        "",
    )
    assert changed_region("ab", "") == ({"line": 0, "character": 0}, {"line": 0, "character": 2}, "")


def test_a_write_made_from_a_buffer_discarded_meanwhile_is_refused(
    http_server, ws_path: Path, peer: Peer
) -> None:
    (ws_path / "a.py").write_text("alpha = 1\n")
    server = http_server(ws_path, env=bridge_env(peer))
    path = str(ws_path / "a.py")
    peer.call("open", {"path": path})
    peer.call("type", {"path": path, "text": "alpha = 'typed'\n"})
    # The person closes the tab ("Don't Save") while the tool's write is being made from their text:
    peer.call("discardAfterNextRead", {"path": path})
    error = failure(
        server, "replace_specific_text", pathInProject="a.py", searchText="alpha", replaceText="beta"
    )
    assert "saved or discarded meanwhile" in error, error
    assert (ws_path / "a.py").read_text() == "alpha = 1\n"  # the discarded text is not resurrected

"""The server's editor bridge (engines/editor/channel.py, bridge.py) against the extension's real bridge
server (extension/src/protocol.ts) on a real Unix socket.

Behind that server sits extension/test/peer.ts, a stand-in for VS Code's editor (one in-memory editor,
answering as src/handlers.ts does): VS Code itself cannot run in the default suite; the real proof is
tests/e2e/test_vscode.py. The server runs as a real process, reached through its REST door.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from mcp_server_ide.engines.editor.channel import Address, BridgeDown, Channel
from tests.support.apps_host import ESBUILD_VERSION
from tests.support.extension import EXTENSION
from tests.support.npm import node, npm_bin

TOKEN = "a" * 64


@pytest.fixture(scope="module")
def peer_js(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("peer") / "peer.js"
    esbuild = npm_bin("esbuild", ESBUILD_VERSION, "esbuild")
    subprocess.run([str(esbuild), "test/peer.ts", "--bundle", "--platform=node", "--format=cjs", f"--outfile={out}",
                    "--log-level=warning"], cwd=EXTENSION, check=True, timeout=120)  # fmt: skip
    return out


class Peer:
    def __init__(self, script: Path, socket_path: Path, token: str = TOKEN) -> None:
        self.script, self.socket_path, self.token = script, socket_path, token
        self.proc: subprocess.Popen[str] | None = None

    def start(self) -> Peer:
        self.proc = subprocess.Popen([str(node()), str(self.script), str(self.socket_path)], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=dict(os.environ, PEER_TOKEN=self.token))  # fmt: skip
        assert self.proc.stdout is not None
        assert self.proc.stdout.readline().strip() == "ready"
        return self

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)

    def call(self, method: str, params: dict[str, object]) -> object:
        """Act as the person in the stand-in editor (through the bridge protocol, like the server)."""
        return Channel(Address(str(self.socket_path), self.token)).call(method, params)


@pytest.fixture
def sock_dir() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="bridge-"))  # short: a socket path must fit in 108 bytes
    os.chmod(folder, 0o700)
    yield folder
    subprocess.run(["rm", "-rf", str(folder)], check=False)


@pytest.fixture
def peer(peer_js: Path, sock_dir: Path) -> Iterator[Peer]:
    p = Peer(peer_js, sock_dir / "bridge.sock").start()
    yield p
    p.kill()


def bridge_env(peer: Peer, token: str = TOKEN) -> dict[str, str]:
    return {"MCP_IDE_BRIDGE_SOCKET": str(peer.socket_path), "MCP_IDE_BRIDGE_TOKEN": token}


def call(server, tool: str, **args: object) -> object:
    answer = httpx.post(f"{server.url}/mcp/{tool}", json=args, timeout=30).json()
    assert answer["error"] is None, answer
    return answer["status"]


def test_editor_tools_answer_from_the_live_editor(http_server, ws_path: Path, peer: Peer) -> None:
    (ws_path / "a.py").write_text("alpha = 1\nbeta = 2\n")
    server = http_server(ws_path, env=bridge_env(peer))
    # The person opens a.py and selects "beta" in VS Code (the stand-in):
    peer.call("open", {"path": str(ws_path / "a.py"),
                       "selection": {"anchor": {"line": 1, "character": 0}, "active": {"line": 1, "character": 4}}})  # fmt: skip
    assert call(server, "get_open_in_editor_file_path") == str(ws_path / "a.py")
    assert call(server, "get_selected_in_editor_text") == "beta"
    # An unsaved edit in the editor is what the tools read:
    peer.call("type", {"text": "alpha = 1\nbeta = 2\ngamma = 3\n"})
    assert call(server, "get_open_in_editor_file_text") == "alpha = 1\nbeta = 2\ngamma = 3\n"
    assert (ws_path / "a.py").read_text() == "alpha = 1\nbeta = 2\n"


def test_edits_go_through_the_editor_and_a_clean_file_is_saved_and_journaled(
    http_server, ws_path: Path, peer: Peer
) -> None:
    (ws_path / "a.py").write_text("alpha = 1\nbeta = 2\n")
    server = http_server(ws_path, env=bridge_env(peer))
    peer.call("open", {"path": str(ws_path / "a.py"),
                       "selection": {"anchor": {"line": 1, "character": 0}, "active": {"line": 1, "character": 4}}})  # fmt: skip
    call(server, "replace_selected_text", text="BETA")
    assert json.dumps(peer.call("active", {})).count("BETA = 2") == 1
    assert (ws_path / "a.py").read_text() == "alpha = 1\nBETA = 2\n"  # the editor saved it
    assert call(server, "get_selected_in_editor_text") == ""  # the cursor is after the new text
    assert "a.py" in json.dumps(call(server, "list_recent_changes"))  # journaled like any write


def test_breakpoints_are_the_editors(http_server, ws_path: Path, peer: Peer) -> None:
    (ws_path / "a.py").write_text("alpha = 1\nbeta = 2\n")
    server = http_server(ws_path, env=bridge_env(peer))
    peer.call("toggleBreakpoint", {"path": str(ws_path / "a.py"), "line": 0})  # set by the person
    call(server, "toggle_debugger_breakpoint", pathInProject="a.py", line=2)
    listed = json.dumps(call(server, "get_debugger_breakpoints"))
    assert '"line":1' in listed.replace(" ", "") and '"line":2' in listed.replace(" ", "")
    assert peer.call("breakpoints", {}) == [
        {"path": str(ws_path / "a.py"), "line": 0},
        {"path": str(ws_path / "a.py"), "line": 1},
    ]


def test_a_wrong_or_missing_token_is_refused(peer: Peer) -> None:
    with pytest.raises(BridgeDown, match="refused"):
        Channel(Address(str(peer.socket_path), "b" * 64)).call("state")
    with socket.socket(socket.AF_UNIX) as raw:  # no hello at all: the first request is refused and cut off
        raw.settimeout(5)
        raw.connect(str(peer.socket_path))
        raw.sendall(b'{"id":1,"method":"active","params":{}}\n')
        answer = raw.recv(4096)
        assert b'"refused"' in answer and b'"text"' not in answer
        assert raw.recv(4096) == b""  # closed


def test_a_server_with_a_wrong_token_answers_from_the_headless_model(
    http_server, ws_path: Path, peer: Peer
) -> None:
    (ws_path / "a.py").write_text("alpha = 1\n")
    peer.call("open", {"path": str(ws_path / "a.py")})
    server = http_server(ws_path, env=bridge_env(peer, token="c" * 64))
    assert call(server, "get_open_in_editor_file_path") == ""  # headless: nothing open there


def test_a_dead_editor_falls_back_to_headless_and_comes_back(http_server, ws_path: Path, peer: Peer) -> None:
    (ws_path / "a.py").write_text("alpha = 1\n")
    (ws_path / "b.py").write_text("beta = 1\n")
    server = http_server(ws_path, env=bridge_env(peer))
    peer.call("open", {"path": str(ws_path / "a.py")})
    assert call(server, "get_open_in_editor_file_path") == str(ws_path / "a.py")
    peer.kill()
    assert call(server, "get_open_in_editor_file_path") == ""  # the headless model: no error
    call(server, "open_file_in_editor", pathInProject="b.py")  # served by the headless model
    assert call(server, "get_open_in_editor_file_path") == str(ws_path / "b.py")
    peer.start()  # the extension is back (same socket and token, as a restarted host has)
    peer.call("open", {"path": str(ws_path / "a.py")})
    deadline = time.monotonic() + 20
    while call(server, "get_open_in_editor_file_path") != str(ws_path / "a.py"):
        assert time.monotonic() < deadline, "the server did not reconnect to the editor"
        time.sleep(0.2)


def test_a_hung_editor_costs_one_deadline_then_answers_at_once(peer: Peer) -> None:
    channel = Channel(Address(str(peer.socket_path), TOKEN))
    assert channel.call("state")["active"] is None
    assert peer.proc is not None
    peer.proc.send_signal(signal.SIGSTOP)
    try:
        start = time.monotonic()
        with pytest.raises(BridgeDown):
            channel.call("state")
        assert time.monotonic() - start < 10  # the 1 s deadline, not a hang (a far bound: loaded machines)
        start = time.monotonic()
        with pytest.raises(BridgeDown, match="down"):
            channel.call("state")  # within the retry window: no wait at all
        assert time.monotonic() - start < 1.0  # less than one deadline
    finally:
        peer.proc.send_signal(signal.SIGCONT)


def test_an_edit_the_editor_does_not_confirm_is_never_made_again_by_the_headless_model(
    http_server, ws_path: Path, peer: Peer
) -> None:
    (ws_path / "a.py").write_text("alpha = 1\nbeta = 2\n")
    server = http_server(ws_path, env=bridge_env(peer))
    peer.call("open", {"path": str(ws_path / "a.py"),
                       "selection": {"anchor": {"line": 1, "character": 0}, "active": {"line": 1, "character": 4}}})  # fmt: skip
    assert call(server, "get_selected_in_editor_text") == "beta"
    peer.call("slowNextEdit", {})  # VS Code takes the edit but confirms it only after 6 s
    answer = httpx.post(f"{server.url}/mcp/replace_selected_text", json={"text": "BETA"}, timeout=30).json()
    assert answer["status"] is None and "did not confirm the edit" in answer["error"], answer
    deadline = time.monotonic() + 10
    while "BETA" not in (ws_path / "a.py").read_text():  # the editor applies it once it runs again
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert (ws_path / "a.py").read_text() == "alpha = 1\nBETA = 2\n"  # once, by the editor only


def test_editor_state_says_which_files_have_unsaved_changes(http_server, ws_path: Path, peer: Peer) -> None:
    (ws_path / "a.py").write_text("alpha = 1\n")
    server = http_server(ws_path, env=bridge_env(peer))
    peer.call("open", {"path": str(ws_path / "a.py")})
    assert "unsavedFiles" not in call(server, "get_editor_state")  # a field at its default is left out
    peer.call("type", {"text": "alpha = 2\n"})
    state = call(server, "get_editor_state")
    assert state["unsavedFiles"] == [str(ws_path / "a.py")]
    assert state["visibleFiles"] == [str(ws_path / "a.py")]


def test_a_tool_never_writes_under_unsaved_text_in_the_editor(http_server, ws_path: Path, peer: Peer) -> None:
    (ws_path / "a.py").write_text("alpha = 1\n")
    server = http_server(ws_path, env=bridge_env(peer))
    peer.call("open", {"path": str(ws_path / "a.py")})
    call(server, "rewrite_file_content", pathInProject="a.py", text="alpha = 0\n")  # clean: written
    assert (ws_path / "a.py").read_text() == "alpha = 0\n"
    peer.call("type", {"text": "alpha = 'the person typed this'\n"})  # unsaved in the editor
    answer = httpx.post(f"{server.url}/mcp/rewrite_file_content", json={"pathInProject": "a.py", "text": "x\n"},
                        timeout=30).json()  # fmt: skip
    assert answer["status"] is None and "unsaved changes in VS Code" in answer["error"], answer
    assert (ws_path / "a.py").read_text() == "alpha = 0\n"  # nothing written
    assert peer.call("active", {})["text"] == "alpha = 'the person typed this'\n"  # the person's text stays
    # Through the editor the edit joins the unsaved buffer instead (and is not saved for them):
    call(server, "replace_current_file_text", text="beta = 1\n")
    assert peer.call("active", {})["text"] == "beta = 1\n"
    assert (ws_path / "a.py").read_text() == "alpha = 0\n"

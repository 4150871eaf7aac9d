"""Only the person's own processes can drive the editor bridge (issue 15, acceptance 5).

The extension's real bridge server (extension/src/protocol.ts, run by extension/test/peer.ts) listens
where the extension puts it (``stableSocketPath``: this user's 0700 folder); another local user
(``nobody``, through ``setpriv``) cannot connect even holding the token, cannot read the token from a
server's environment, and a folder another user prepared is refused rather than used. Wrong or missing
tokens from this user are in tests/test_editor_bridge.py. Needs root (to become another user).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_server_ide.engines.editor.channel import Address, Channel
from tests import test_editor_bridge
from tests.support.npm import node
from tests.test_editor_bridge import TOKEN, call

NOBODY = 65534
SYSTEM_PYTHON = "/usr/bin/python3"  # readable by every user, unlike this venv's interpreter under /root

peer_js = test_editor_bridge.peer_js  # the fixture: extension/test/peer.ts bundled once

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None or not os.access(SYSTEM_PYTHON, os.X_OK),
    reason="needs root, setpriv and /usr/bin/python3 to act as another user",
)

CONNECT = """
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
try:
    s.connect(sys.argv[1])
except OSError as exc:
    print("refused:", type(exc).__name__, exc.strerror)
    sys.exit(0)
s.sendall(json.dumps({"id": 0, "method": "hello", "params": {"token": sys.argv[2]}}).encode() + b"\\n")
print("connected:", s.recv(4096).decode())
"""


def as_nobody(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, cwd="/",
    )  # fmt: skip


@pytest.fixture
def base() -> Iterator[Path]:
    """A stand-in for /tmp: a folder every user may enter (short, for the 108-byte socket path limit)."""
    folder = Path(tempfile.mkdtemp(prefix="ba-"))
    os.chmod(folder, 0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def start_peer(script: Path, base: Path) -> tuple[subprocess.Popen[str], Path]:
    proc = subprocess.Popen([str(node()), str(script), "window-key"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ, PEER_TOKEN=TOKEN, PEER_STABLE_BASE=str(base)))  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line.startswith("ready "):
        proc.kill()
        _, err = proc.communicate(timeout=10)
        raise AssertionError(f"the bridge did not listen: {line!r} {err[-2000:]}")
    return proc, Path(line.split(" ", 1)[1])


def test_another_user_cannot_reach_the_socket_even_with_the_token(peer_js: Path, base: Path) -> None:
    proc, sock = start_peer(peer_js, base)
    try:
        assert sock.parent == base / f"mcp-ide-{os.getuid()}"
        assert sock.parent.stat().st_mode & 0o777 == 0o700 and sock.stat().st_mode & 0o777 == 0o600
        # This user, with the token: answered.
        assert Channel(Address(str(sock), TOKEN)).call("state")["active"] is None
        # Another user, with the token: the folder stops it before any token check.
        done = as_nobody(SYSTEM_PYTHON, "-c", CONNECT, str(sock), TOKEN)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("refused: PermissionError"), done.stdout
    finally:
        proc.kill()
        proc.wait(10)


def test_a_socket_folder_another_user_prepared_is_refused(peer_js: Path, base: Path) -> None:
    """Someone creates /tmp/mcp-ide-<uid> first (to read or answer the bridge): the extension does not
    listen in it."""
    planted = base / f"mcp-ide-{os.getuid()}"
    planted.mkdir(mode=0o700)
    os.chown(planted, NOBODY, NOBODY)
    with pytest.raises(AssertionError, match="not a private folder of this user"):
        start_peer(peer_js, base)
    assert list(planted.iterdir()) == []


def test_another_user_cannot_read_the_token_from_a_server(
    http_server, ws_path: Path, peer_js: Path, base: Path
) -> None:
    """The token reaches the server in its environment only: not on its command line (which every user can
    read in /proc), and its environment is readable by its own user alone."""
    proc, sock = start_peer(peer_js, base)
    try:
        (ws_path / "a.py").write_text("alpha = 1\n")
        server = http_server(ws_path, env={"MCP_IDE_BRIDGE_SOCKET": str(sock), "MCP_IDE_BRIDGE_TOKEN": TOKEN})
        Channel(Address(str(sock), TOKEN)).call("open", {"path": str(ws_path / "a.py")})
        assert call(server, "get_open_in_editor_file_path") == str(ws_path / "a.py")  # it is connected
        pid = str(server.process.pid)
        cmdline = as_nobody("cat", f"/proc/{pid}/cmdline")
        assert cmdline.returncode == 0 and "--workspace" in cmdline.stdout and TOKEN not in cmdline.stdout
        environ = as_nobody("cat", f"/proc/{pid}/environ")
        assert environ.returncode != 0 and "Permission denied" in environ.stderr
        assert TOKEN not in environ.stdout
    finally:
        proc.kill()
        proc.wait(10)

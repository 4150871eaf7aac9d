"""The server's token stays out of reach of the commands it runs (issue 13, item 5; SECURITY.md §4).

Through the real HTTP door (``POST /mcp/run_command_on_background`` on a real server process), a
command reads the server's ``/proc/<pid>/environ`` and ``cmdline`` (its parent's, and the server's by
pid): the token is in neither, whether it came from ``MCP_IDE_TOKEN``, ``--token`` or ``--token-file``.
Run as another user than root, the server is not dumpable: its commands cannot read its environment
at all (any variable of it). The token options themselves are checked through the CLI.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

TOKEN = "tok-secret-5ab1e7a0c3"
SERVER_VAR = "SERVER_ONLY_SETTING"
"""A harmless variable of the server's environment that no command is given (not allow-listed)."""


def probe(pid: int) -> str:
    """A shell command printing the server's environ and cmdline, by $PPID and by pid."""
    return (
        "for f in /proc/$PPID/environ /proc/$PPID/cmdline "
        f"/proc/{pid}/environ /proc/{pid}/cmdline; do echo \"== $f\"; tr '\\0' ' ' < $f; echo; done 2>&1; "
        'echo "== ppid $PPID"'
    )


def run_through_rest(url: str, command: str) -> str:
    answer = httpx.post(
        f"{url}/mcp/run_command_on_background",
        json={"command": command},
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=60,
    ).json()
    assert answer["error"] is None, answer
    status = answer["status"]
    return status if isinstance(status, str) else str(status.get("stdout", status))


@pytest.mark.parametrize("source", ["env", "argv", "file"])
def test_commands_cannot_read_the_servers_token(http_server: Any, ws_path: Path, source: str) -> None:
    args: list[str] = []
    env = {SERVER_VAR: "visible-to-server-only"}
    if source == "env":
        env["MCP_IDE_TOKEN"] = TOKEN
    elif source == "argv":
        args = ["--token", TOKEN]
    else:
        token_file = ws_path.parent / "token"
        token_file.write_text(TOKEN + "\n")
        args = ["--token-file", str(token_file)]
    server = http_server(ws_path, *args, env=env)
    # The token is required (it was read) and never passed on.
    assert httpx.post(f"{server.url}/mcp/list_jobs", json={}, timeout=30).status_code == 401
    out = run_through_rest(server.url, probe(server.process.pid))
    assert "== /proc/" in out and "== ppid" in out, out
    assert TOKEN not in out, out
    assert "MCP_IDE_TOKEN" not in out, out
    if source == "argv":
        assert "--token" in server.log() and "prefer --token-file" in server.log()


def _nobody() -> tuple[int, int] | None:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return None
    return 65534, 65534


@pytest.fixture
def nobody_home() -> Iterator[Path]:
    """A folder outside root's private tmp, owned by ``nobody`` (the server's user in the next test)."""
    home = Path(tempfile.mkdtemp(prefix="mcp-ide-nobody-", dir="/tmp"))
    try:
        yield home
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_a_non_root_server_is_not_dumpable(nobody_home: Path) -> None:
    """As any user but root, the server's commands (same uid) cannot read its /proc environ at all."""
    ids = _nobody()
    if ids is None:
        pytest.skip("needs root and setpriv to start the server as another user")
    uid, gid = ids
    ws = nobody_home / "ws"
    ws.mkdir()
    for path in (nobody_home, ws):
        os.chown(path, uid, gid)
    nobody_home.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "MCP_IDE_")) and k != "HOME"}
    env.update(HOME=str(nobody_home), XDG_STATE_HOME=str(nobody_home / "state"))
    env.update({SERVER_VAR: "visible-to-server-only", "MCP_IDE_TOKEN": TOKEN})
    log_path = nobody_home / "server.log"
    argv = [sys.executable, "-m", "mcp_server_ide", "--http", "--port", "0", "--workspace", str(ws)]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", *argv],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
        )  # fmt: skip
    try:
        url = _wait_for_url(process, log_path)
        out = run_through_rest(url, probe(process.pid))
        assert out.count("Permission denied") >= 2, out  # both environ reads refused
        assert "visible-to-server-only" not in out and TOKEN not in out, out
    finally:
        process.terminate()
        process.wait(15)


def _wait_for_url(process: subprocess.Popen[bytes], log_path: Path, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log_path.read_text(errors="replace")
        found = re.search(r"listening on (http://\S+?)(/mcp)?\s", text)
        if found:
            return found.group(1)
        if process.poll() is not None:
            raise AssertionError(f"server exited early:\n{text}")
        time.sleep(0.05)
    raise AssertionError(f"server did not start:\n{log_path.read_text(errors='replace')}")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--token-file", "/nonexistent/token"], "--token-file /nonexistent/token: cannot read it"),
        (["--token", "a", "--token-file", "/etc/hostname"], "give one of --token and --token-file"),
        (["--token-file", "EMPTY"], "the file is empty"),
    ],
)
def test_bad_token_options_are_refused(tmp_path: Path, args: list[str], message: str) -> None:
    empty = tmp_path / "empty"
    empty.write_text("\n")
    args = [str(empty) if a == "EMPTY" else a for a in args]
    done = subprocess.run(
        [sys.executable, "-m", "mcp_server_ide", "--http", "--port", "0", "--workspace", str(tmp_path), *args],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 2 and message in done.stderr, done.stderr

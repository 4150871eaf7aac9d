"""deploy/scaleout.sh as an operator runs it: into a fresh data folder, with two workers; it starts its
own PostgreSQL cluster and Redis server (Debian's packages), the workers and HAProxy; one MCP session
through HAProxy; SIGTERM stops everything it started (no port left listening, PostgreSQL shut down).

Marker ``scaleout`` (own README command; ~1 min).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pytest

from tests.support.hosted import hosted_cli
from tests.support.net import ACCEPT, free_port, initialize
from tests.support.services import postgres_bin
from tests.support.system import require_system

pytestmark = pytest.mark.scaleout

SCRIPT = Path(__file__).resolve().parent.parent / "deploy" / "scaleout.sh"


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _two_free_ports() -> int:
    for _ in range(50):
        port = free_port()
        if port < 65000 and not _listening(port + 1):
            return port
    raise AssertionError("no two consecutive free ports")


def _wait_for(log: Path, text: str, process: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in log.read_text(errors="replace"):
            return
        if process.poll() is not None:
            break
        time.sleep(0.2)
    raise AssertionError(f"deploy/scaleout.sh did not say {text!r}:\n{log.read_text(errors='replace')}")


def test_the_script_serves_through_haproxy_and_stops_cleanly():
    require_system("haproxy", "haproxy")
    require_system("redis-server", "redis-server")
    if postgres_bin("initdb") is None:
        require_system("initdb", "postgresql")
    require_system("bwrap", "bubblewrap")
    # Not under pytest's 0700 folders: PostgreSQL runs as its own user when we are root.
    top = Path(tempfile.mkdtemp(prefix="mcp-ide-deploy-"))
    top.chmod(0o755)
    data = top / "data"
    ports = {
        "PORT": free_port(),
        "WORKER_PORT": _two_free_ports(),
        "REDIS_PORT": free_port(),
        "PG_PORT": free_port(),
    }
    env = {
        **os.environ,
        **{k: str(v) for k, v in ports.items()},
        "HOST": "127.0.0.1",
        "MCP_IDE": f"{shlex.quote(sys.executable)} -m mcp_server_ide",
    }
    env.pop("MCP_IDE_DATABASE", None)
    env.pop("MCP_IDE_REDIS", None)
    log = top / "script.log"
    with open(log, "wb") as out:
        script = subprocess.Popen(
            ["bash", str(SCRIPT), str(data), "2"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    every = [
        ports["PORT"],
        ports["WORKER_PORT"],
        ports["WORKER_PORT"] + 1,
        ports["REDIS_PORT"],
        ports["PG_PORT"],
    ]
    try:
        _wait_for(log, "scaleout: 2 workers behind", script, timeout=300)
        database = ("--database", f"postgresql://mcp@127.0.0.1:{ports['PG_PORT']}/postgres")

        def cli(*args: str) -> str:
            done = hosted_cli(data, *args, *database)
            assert done.returncode == 0, done.stderr
            return done.stdout.strip()

        cli("user", "add", "ops")
        token = cli("token", "create", "ops").split()[-1]
        project = json.loads(cli("project", "create", "ops", "site"))["id"]
        url = f"http://127.0.0.1:{ports['PORT']}/p/{project}/mcp"
        auth = {"Authorization": f"Bearer {token}", "Accept": ACCEPT}
        with httpx.Client(timeout=60) as http:
            r = http.post(url, json=initialize("2025-11-25", id=1), headers=auth)
            assert r.status_code == 200, r.text
            assert r.headers.get("x-mcp-ide-worker"), r.headers
            session = {
                **auth,
                "mcp-session-id": r.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-11-25",
            }
            done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            assert http.post(url, json=done, headers=session).status_code == 202
            call = {"name": "project_fs_write", "arguments": {"path": "hello.txt", "content": "hi\n"}}
            r = http.post(
                url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}, headers=session
            )
            assert r.status_code == 200 and '"isError":true' not in r.text, r.text
        assert (data / "projects" / project / "hello.txt").read_text() == "hi\n"

        script.send_signal(signal.SIGTERM)
        assert script.wait(120) == 0, log.read_text(errors="replace")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and any(_listening(p) for p in every):
            time.sleep(0.2)
        assert not [p for p in every if _listening(p)], log.read_text(errors="replace")
        assert not (data / "postgres" / "postmaster.pid").exists()  # PostgreSQL shut down, not left running
    finally:
        if script.poll() is None:
            os.killpg(script.pid, signal.SIGKILL)
            script.wait(30)
        pg_ctl = postgres_bin("pg_ctl")
        if pg_ctl and (data / "postgres" / "postmaster.pid").exists():  # the cluster runs on its own
            as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
            subprocess.run(
                [*as_postgres, pg_ctl, "-D", str(data / "postgres"), "-m", "immediate", "stop"],
                check=False,
                timeout=60,
            )
        shutil.rmtree(top, ignore_errors=True)

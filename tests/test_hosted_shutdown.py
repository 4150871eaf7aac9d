"""SIGTERM on a hosted worker: it drains and ends every project's sandboxed processes.

A real ``mcp-server-ide hosted`` process with a project running a job and a terminal (each in the
project's bubblewrap sandbox) and an open MCP session: after SIGTERM the worker exits and no
process of the project is left. (That a request in flight is let finish is
``test_hosted.py::test_sigterm_lets_a_running_request_finish_then_exits``.)
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import httpx

from tests.support.hosted import processes_naming, start_hosted
from tests.support.net import ACCEPT, initialize


def test_sigterm_ends_every_sandboxed_process_of_every_project(tmp_path: Path):
    from mcp_server_ide.hosted import tokens
    from mcp_server_ide.hosted.projects import HostedProjects
    from mcp_server_ide.hosted.sqlstore import SqlStore, sqlite_url
    from mcp_server_ide.workspace import Policy
    from tests.support.system import require_system

    require_system("bwrap", "bubblewrap")
    data = tmp_path / "data"
    data.mkdir()
    store = SqlStore(sqlite_url(data))
    user = store.add_user("jo")
    secret, _ = tokens.create(store, user.id, ("read", "write", "run"))
    project = HostedProjects(store, data, Policy(hosted=True)).create(user.id, "p")
    store.close()
    folder = data / "projects" / project.id
    service = start_hosted(data)
    try:
        auth = {"Authorization": f"Bearer {secret}"}
        url = f"{service.url}/p/{project.id}/mcp"
        with httpx.Client(headers=auth, timeout=300) as http:
            job = http.post(url + "/start_job", json={"command": "echo up; sleep 600"})
            assert job.status_code == 200, job.text
            out = http.post(
                url + "/get_job_output",
                json={"jobId": job.json()["status"]["jobId"], "untilPattern": "up", "waitMs": 60000},
            )
            assert "up" in out.text, out.text
            term = http.post(url + "/execute_terminal_command", json={"command": "sleep 600", "waitMs": 500})
            assert term.status_code == 200, term.text
            session = http.post(url, json=initialize("2025-11-25"), headers={"Accept": ACCEPT})
            assert session.status_code == 200 and session.headers.get("mcp-session-id"), session.text
        assert processes_naming(folder), "the job and the terminal run in the project's sandbox"
        service.process.send_signal(signal.SIGTERM)
        code = service.process.wait(120)
        assert code in (0, -signal.SIGTERM), code
        deadline = time.monotonic() + 60
        while processes_naming(folder) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not processes_naming(folder), "a sandboxed process outlived the worker"
    finally:
        service.stop()

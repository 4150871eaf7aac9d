"""Idle projects are evicted from a hosted worker and reopened on the next request.

A real ``mcp-server-ide hosted --idle-evict 2`` process: a project whose language server ran is
closed once idle (the server's processes are gone, the open-projects gauge drops), and the next
call reopens it and answers as before; a project with a running job is kept (its job still
answers); past ``--max-open-projects`` the least recently used idle project is closed.

Processes are found by the project's folder (unique to this test) in their command line.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.hosted import HostedService, processes_naming, start_hosted

MAIN = "from app.util import helper\n\n\ndef run() -> int:\n    return helper(2)\n"
UTIL = "def helper(x: int) -> int:\n    return x * 2\n"


def make_service(data: Path, *args: str) -> HostedService:
    from mcp_server_ide.hosted import tokens
    from mcp_server_ide.hosted.projects import HostedProjects
    from mcp_server_ide.hosted.sqlstore import SqlStore, sqlite_url
    from mcp_server_ide.workspace import Policy
    from tests.support.system import require_system

    require_system("bwrap", "bubblewrap")
    data.mkdir()
    store = SqlStore(sqlite_url(data))
    user = store.add_user("ivy")
    secret, _ = tokens.create(store, user.id, ("read", "write", "run"))
    hosted = HostedProjects(store, data, Policy(hosted=True))
    ids = {key: hosted.create(user.id, key).id for key in ("code", "job", "third")}
    store.close()
    folder = data / "projects" / ids["code"] / "src" / "app"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("")
    (folder / "main.py").write_text(MAIN)
    (folder / "util.py").write_text(UTIL)
    service = start_hosted(data, *args)
    service.tokens, service.projects = {"I": secret}, ids
    return service


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostedService]:
    service = make_service(tmp_path_factory.mktemp("evict") / "data", "--idle-evict", "2")
    try:
        yield service
    finally:
        service.stop()


def open_projects(service: HostedService) -> float:
    for line in httpx.get(service.url + "/metrics", timeout=60).text.splitlines():
        if line.startswith("mcp_ide_open_projects "):
            return float(line.split()[1])
    raise AssertionError("no mcp_ide_open_projects in /metrics")


def until(check, timeout: float = 120) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.2)
    return False


def definition(http: httpx.Client, service: HostedService) -> httpx.Response:
    return http.post(
        service.project_url("code", "/mcp/go_to_definition"),
        json={"pathInProject": "src/app/main.py", "line": 4, "character": 12},
    )


def test_an_idle_project_is_closed_with_its_language_server_and_reopened_on_the_next_call(service):
    folder = service.data / "projects" / service.projects["code"]
    with httpx.Client(headers=service.auth("I"), timeout=300) as http:
        first = definition(http, service)
        assert first.status_code == 200 and "util.py" in first.text, first.text
        assert processes_naming(folder), "the language server runs in the project's sandbox"
        assert until(lambda: not processes_naming(folder)), "the idle project's processes were not ended"
        again = definition(http, service)
        assert again.status_code == 200 and again.json() == first.json(), again.text


def test_a_project_with_a_running_job_is_kept_open(service):
    with httpx.Client(headers=service.auth("I"), timeout=300) as http:
        url = service.project_url("job", "/mcp/")
        job = http.post(url + "start_job", json={"command": "echo started; sleep 600"})
        assert job.status_code == 200, job.text
        job_id = job.json()["status"]["jobId"]
        time.sleep(8)  # four idle periods: an evicted project would have lost its job
        out = http.post(
            url + "get_job_output", json={"jobId": job_id, "untilPattern": "started", "waitMs": 60000}
        )
        assert out.status_code == 200 and out.json()["status"]["state"] == "running", out.text
        http.post(url + "cancel_job", json={"jobId": job_id})


def test_past_the_cap_the_least_recently_used_idle_project_is_closed(tmp_path: Path):
    service = make_service(tmp_path / "data", "--idle-evict", "0", "--max-open-projects", "2")
    try:
        with httpx.Client(headers=service.auth("I"), timeout=300) as http:
            for key in ("code", "job", "third"):  # a cap of 2: opening the third closes "code"
                r = http.post(
                    service.project_url(key, "/mcp/list_files_in_folder"), json={"pathInProject": "/"}
                )
                assert r.status_code == 200, r.text
                assert until(lambda: open_projects(service) <= 2)
            r = http.post(
                service.project_url("code", "/mcp/list_files_in_folder"), json={"pathInProject": "/"}
            )
            assert r.status_code == 200 and "src" in r.text, r.text  # reopened
            assert until(lambda: open_projects(service) == 2)
    finally:
        service.stop()

"""The hosted service through its real doors: a real ``mcp-server-ide hosted`` process on loopback,
the SDK's Streamable HTTP client and httpx.

Two users, A and B. A's files are invisible to B; for A, B's project, a deleted project and a random
id answer byte-identical bodies and statuses (and headers) on every door; a missing, wrong or revoked
token gets 401 with ``WWW-Authenticate``; a read-scope token cannot write, a write-scope one cannot
run commands; an MCP session is usable only with the token and project that opened it; every door
works per project; no token reaches the log. (The timing side of tenancy is a bench:
``bench/bench_hosted_tenancy.py``.)
"""

from __future__ import annotations

import io
import json
import signal
import subprocess
import tarfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.hosted import HostedService, hosted_cli, start_hosted
from tests.support.net import ACCEPT, initialize

pytestmark = pytest.mark.anyio

INIT = initialize("2025-11-25", id=1)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostedService]:
    from mcp_server_ide.hosted import tokens
    from mcp_server_ide.hosted.projects import HostedProjects
    from mcp_server_ide.hosted.sqlstore import SqlStore, sqlite_url
    from mcp_server_ide.workspace import Policy

    data = tmp_path_factory.mktemp("hosted") / "data"
    data.mkdir()
    store = SqlStore(sqlite_url(data))
    projects = HostedProjects(store, data, Policy(hosted=True))
    made: dict[str, str] = {}
    ids: dict[str, str] = {}
    alice, bob = store.add_user("alice"), store.add_user("bob")
    for key, user, scopes in (
        ("A", alice, ("read", "write", "run")),
        ("A-read", alice, ("read",)),
        ("A-write", alice, ("read", "write")),
        ("A-revoked", alice, ("read", "write", "run")),
        ("B", bob, ("read", "write", "run")),
    ):
        made[key], info = tokens.create(store, user.id, scopes, key)
        ids[key] = info.id
    names = {"A1": alice, "A2": alice, "A-gone": alice, "B1": bob}
    project_ids = {key: projects.create(user.id, key).id for key, user in names.items()}
    (data / "projects" / project_ids["B1"] / "secret.txt").write_text("B's secret\n")
    subprocess.run(["git", "init", "-q"], cwd=data / "projects" / project_ids["A1"], check=True)
    projects.delete(alice.id, project_ids["A-gone"])
    store.revoke_token(ids["A-revoked"])
    store.close()
    service = start_hosted(data)
    service.tokens, service.token_ids, service.projects = made, ids, project_ids
    try:
        yield service
    finally:
        service.stop()


def mcp_client(service: HostedService, project: str, who: str = "A"):
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    http = create_mcp_http_client(headers=service.auth(who))
    return Client(streamable_http_client(service.project_url(project), http_client=http), mode="legacy")


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def door_requests(project_url: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(method, url, httpx options) for one request to every door of a project."""
    read = {"json": {"path": "secret.txt"}}
    return [
        ("POST", project_url + "/mcp", {"json": INIT, "headers": {"Accept": ACCEPT}}),
        ("GET", project_url + "/mcp", {"headers": {"Accept": "text/event-stream"}}),
        ("DELETE", project_url + "/mcp", {"headers": {"mcp-session-id": "abc"}}),
        ("POST", project_url + "/mcp/project_fs_read", read),
        ("POST", project_url + "/mcp/get_file_text_by_path", {"json": {"pathInProject": "secret.txt"}}),
        ("GET", project_url + "/mcp/list_tools", {}),
        ("GET", project_url + "/mcp/status", {}),
        ("POST", project_url + "/mcp/initialize", {}),
        ("GET", project_url + "/mcp/tools", {}),
        ("GET", project_url + "/mcp/tools?format=json", {}),
        ("GET", project_url + "/mcp/static/reference.js", {}),
        ("GET", project_url + "/mcp/openapi.json", {}),
        ("GET", project_url + "/export", {}),
    ]


def answer(response: httpx.Response) -> tuple[int, bytes, list[tuple[str, str]]]:
    headers = sorted((k, v) for k, v in response.headers.items() if k not in ("date", "x-request-id"))
    return response.status_code, response.content, headers


def test_another_users_a_deleted_and_a_random_project_answer_the_same_bytes_on_every_door(service):
    urls = {
        what: f"{service.url}/p/{pid}"
        for what, pid in (
            ("B's", service.projects["B1"]),
            ("deleted", service.projects["A-gone"]),
            ("random", "p_" + "0" * 20),
        )
    }
    with httpx.Client(headers=service.auth("A"), timeout=60) as http:
        answers = {
            what: [answer(http.request(m, u, **kw)) for m, u, kw in door_requests(url)]
            for what, url in urls.items()
        }
    first = answers["B's"]
    assert answers["deleted"] == first
    assert answers["random"] == first
    assert {status for status, _, _ in first} == {404}
    assert b"B's secret" not in b"".join(body for _, body, _ in first)
    assert json.loads(first[0][1])["error"].startswith("no such project")


async def test_the_owner_tools_answer_no_such_project_alike_for_b_deleted_and_random(service):
    async with mcp_client(service, "A1") as client:
        texts = set()
        for pid in (service.projects["B1"], service.projects["A-gone"], "p_" + "1" * 20):
            for tool, args in (
                ("rename_project", {"project": pid, "name": "x"}),
                ("export_project", {"project": pid}),
                ("delete_project", {"project": pid}),
            ):
                result = await client.call_tool(tool, args)
                assert result.is_error
                texts.add((tool, text_of(result)))
        assert len(texts) == 3, texts
        listed = json.loads(text_of(await client.call_tool("list_projects", {})))
    assert {p["id"] for p in listed} == {service.projects["A1"], service.projects["A2"]}


async def test_a_projects_files_are_invisible_to_b(service):
    async with mcp_client(service, "A1") as client:
        result = await client.call_tool("project_fs_write", {"path": "notes/a.txt", "content": "A's words\n"})
        assert not result.is_error, text_of(result)
        # From A's project, B's folder is outside the sandbox whichever way it is named.
        b_folder = service.data / "projects" / service.projects["B1"]
        for path in (f"../{service.projects['B1']}/secret.txt", str(b_folder / "secret.txt")):
            result = await client.call_tool("project_fs_read", {"path": path})
            assert result.is_error and "B's secret" not in text_of(result)
        found = await client.call_tool("search_in_files_content", {"searchText": "secret"})
        assert "B's secret" not in text_of(found)
    with httpx.Client(headers=service.auth("B"), timeout=60) as http:
        r = http.post(service.project_url("A1", "/mcp/project_fs_read"), json={"path": "notes/a.txt"})
        assert r.status_code == 404 and b"A's words" not in r.content
        r = http.post(service.project_url("B1", "/mcp/project_fs_list"), json={"recursive": True})
        assert r.status_code == 200
        assert [e["path"] for e in r.json()["status"]["entries"]] == ["secret.txt"]


@pytest.mark.parametrize("token", [None, "wrong", "A-revoked", "mide_" + "x" * 43])
def test_a_missing_wrong_or_revoked_token_gets_401_with_www_authenticate(service, token):
    headers = {}
    if token is not None:
        headers["Authorization"] = f"Bearer {service.tokens.get(token, token)}"
    with httpx.Client(headers=headers, timeout=60) as http:
        for method, url, kw in door_requests(service.project_url("A1", "")):
            r = http.request(method, url, **kw)
            assert r.status_code == 401, (url, r.status_code)
            challenge = r.headers["www-authenticate"]
            assert challenge.startswith("Bearer ")
            assert ('error="invalid_token"' in challenge) == (token is not None)


def test_a_read_scope_token_cannot_write_and_a_write_scope_one_cannot_run(service):
    with httpx.Client(timeout=60) as http:
        url = service.project_url("A2", "/mcp/")
        r = http.post(
            url + "project_fs_write", json={"path": "r.txt", "content": "x"}, headers=service.auth("A-read")
        )
        assert r.status_code == 403
        assert "needs a token with the 'write' scope" in r.json()["error"]
        assert not (service.data / "projects" / service.projects["A2"] / "r.txt").exists()
        r = http.post(url + "project_fs_list", json={}, headers=service.auth("A-read"))
        assert r.status_code == 200
        r = http.post(url + "create_project", json={"name": "n"}, headers=service.auth("A-read"))
        assert r.status_code == 403
        r = http.post(
            url + "execute_terminal_command", json={"command": "echo hi"}, headers=service.auth("A-write")
        )
        assert r.status_code == 403 and "'run' scope" in r.json()["error"]
        r = http.post(
            url + "project_fs_write", json={"path": "w.txt", "content": "x"}, headers=service.auth("A-write")
        )
        assert r.status_code == 200, r.text


async def test_a_read_scope_token_cannot_write_over_mcp(service):
    async with mcp_client(service, "A2", "A-read") as client:
        result = await client.call_tool("project_fs_write", {"path": "m.txt", "content": "x"})
        assert result.is_error and "'write' scope" in text_of(result)
        assert not (await client.call_tool("project_fs_list", {})).is_error


def test_a_session_serves_only_the_token_and_project_that_opened_it(service):
    with httpx.Client(timeout=60) as http:
        r = http.post(service.project_url("A1"), json=INIT, headers={"Accept": ACCEPT, **service.auth("A")})
        assert r.status_code == 200
        session = r.headers["mcp-session-id"]
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        base = {"Accept": ACCEPT, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
        unknown = http.post(
            service.project_url("A1"),
            json=ping,
            headers={**base, "mcp-session-id": "f" * 32, **service.auth("A")},
        )
        assert unknown.status_code == 404
        for project, who in (("A2", "A"), ("A1", "A-write"), ("B1", "B")):
            r = http.post(service.project_url(project), json=ping, headers={**base, **service.auth(who)})
            assert (r.status_code, r.content) == (unknown.status_code, unknown.content), (project, who)
        r = http.post(service.project_url("A1"), json=ping, headers={**base, **service.auth("A")})
        assert r.status_code == 200


async def test_every_door_works_per_project(service):
    async with mcp_client(service, "A2") as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"project_fs_read", "get_file_text_by_path", "list_projects", "export_project"} <= names
        result = await client.call_tool(
            "create_new_file_with_text", {"pathInProject": "src/m.py", "text": "x = 1\n"}
        )
        assert not result.is_error, text_of(result)
        read = await client.call_tool("project_fs_read", {"path": "/workspace/src/m.py"})
        assert json.loads(text_of(read))["content"] == "x = 1\n"
        exported = json.loads(text_of(await client.call_tool("export_project", {})))
    with httpx.Client(headers=service.auth("A"), timeout=60) as http:
        r = http.post(
            service.project_url("A2", "/mcp/get_file_text_by_path"), json={"pathInProject": "src/m.py"}
        )
        body = r.json()["status"]
        assert r.status_code == 200 and body["content"] == "x = 1\n"
        assert body["path"] == "/workspace/src/m.py"
        tools = http.get(service.project_url("A2", "/mcp/list_tools")).json()
        assert "list_projects" in {t["name"] for t in tools}
        page = http.get(service.project_url("A2", "/mcp/tools"))
        assert page.status_code == 200 and 'href="static/reference.css"' in page.text
        assert http.get(service.project_url("A2", "/mcp/static/reference.css")).status_code == 200
        assert http.get(service.project_url("A2", "/sse")).status_code == 404  # legacy SSE: local only
        reference = http.get(service.project_url("A2", "/mcp/tools?format=json")).json()
        assert reference["auth"]["required"] is True
        status = http.get(service.project_url("A2", "/mcp/status")).json()
        assert status["result"]["environment"]["workspaceRoot"] == "/workspace"
        download = http.get(service.url + exported["url"])
        assert download.status_code == 200
        with tarfile.open(fileobj=io.BytesIO(download.content)) as tar:
            assert tar.extractfile("workspace/src/m.py").read() == b"x = 1\n"  # type: ignore[union-attr]


async def test_owner_tools_create_rename_and_delete_a_project(service):
    async with mcp_client(service, "A1") as client:
        made = json.loads(text_of(await client.call_tool("create_project", {"name": "scratch"})))
        renamed = json.loads(
            text_of(await client.call_tool("rename_project", {"project": made["id"], "name": "kept"}))
        )
        assert renamed == {**made, "name": "kept"}
    async with mcp_client(service, made["id"]) as client:
        assert not (await client.call_tool("project_fs_write", {"path": "f.txt", "content": "1"})).is_error
        state = service.data / "state" / "workspaces"
        assert [p for p in state.iterdir() if p.name.startswith(made["id"])]  # its journal, for one
        assert not (await client.call_tool("delete_project", {"project": made["id"]})).is_error
    assert not (service.data / "projects" / made["id"]).exists()
    assert not [p for p in state.iterdir() if p.name.startswith(made["id"])]
    with httpx.Client(headers=service.auth("A"), timeout=60) as http:
        r = http.get(service.project_url(made["id"], "/mcp/list_tools"))
        assert r.status_code == 404


def test_operations_endpoints(service):
    assert httpx.get(service.url + "/healthz", timeout=30).json() == {"status": "ok"}
    assert httpx.get(service.url + "/readyz", timeout=30).status_code == 200
    with httpx.Client(headers=service.auth("A"), timeout=60) as http:
        http.post(service.project_url("A1", "/mcp/project_fs_list"), json={})
    metrics = httpx.get(service.url + "/metrics", timeout=30).text
    assert 'mcp_ide_tool_calls_total{outcome="ok",tool="project_fs_list"}' in metrics
    assert "mcp_ide_http_request_seconds_bucket" in metrics and "mcp_ide_sessions" in metrics
    assert httpx.get(service.url + "/elsewhere", timeout=30).status_code == 404


def test_the_log_is_json_with_request_ids_and_never_holds_a_token(service):
    with httpx.Client(headers={**service.auth("A"), "X-Request-Id": "req-42"}, timeout=60) as http:
        r = http.post(service.project_url("A1", "/mcp/project_fs_list"), json={})
        assert r.headers["x-request-id"] == "req-42"
    with httpx.Client(headers={"Authorization": "Bearer not-a-real-token-123"}, timeout=60) as http:
        http.get(service.project_url("A1", "/mcp/list_tools"))
    log = service.log()
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    assert any(line.get("rid") == "req-42" and line.get("status") == 200 for line in lines)
    for secret in [*service.tokens.values(), "not-a-real-token-123"]:
        assert secret not in log
    assert "B's secret" not in log


def test_the_admin_cli_adds_users_and_makes_and_revokes_tokens(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    from mcp_server_ide.hosted.cli import main

    data = tmp_path / "data"

    def admin(*args: str) -> tuple[int, str]:
        code = main([*args, "--data", str(data)])
        return code, capsys.readouterr().out

    added = hosted_cli(data, "user", "add", "carol")  # once as an operator runs it: a process of its own
    assert added.returncode == 0, added.stderr
    assert json.loads(added.stdout)["name"] == "carol"
    assert admin("user", "add", "carol")[0] == 1
    code, out = admin("token", "create", "carol", "--scope", "read", "--name", "laptop")
    assert code == 0
    secret = out.strip()
    assert secret.startswith("mide_") and len(secret) >= 40
    code, listed = admin("token", "list", "carol")
    token = json.loads(listed)
    assert token["scopes"] == ["read"] and token["name"] == "laptop" and secret not in listed
    assert secret not in (data / "hosted.sqlite3").read_bytes().decode("latin-1")
    assert admin("token", "create", "carol", "--scope", "admin")[0] == 1
    assert admin("token", "create", "nobody")[0] == 1
    assert admin("token", "revoke", token["id"])[0] == 0
    assert admin("token", "revoke", token["id"])[0] == 1
    project = json.loads(admin("project", "create", "carol", "demo")[1])
    (data / "projects" / project["id"] / "x.txt").write_text("x")
    assert [json.loads(line)["id"] for line in admin("project", "list", "carol")[1].splitlines()] == [
        project["id"]
    ]
    out_file = tmp_path / "demo.tar.gz"
    assert admin("project", "export", project["id"], str(out_file))[0] == 0
    with tarfile.open(out_file) as tar:
        assert "workspace/x.txt" in tar.getnames()
    assert admin("project", "delete", "carol", project["id"])[0] == 0
    assert not (data / "projects" / project["id"]).exists()
    assert admin("project", "list")[1] == ""


def test_sigterm_lets_a_running_request_finish_then_exits(tmp_path: Path):
    from mcp_server_ide.hosted import tokens
    from mcp_server_ide.hosted.projects import HostedProjects
    from mcp_server_ide.hosted.sqlstore import SqlStore, sqlite_url
    from mcp_server_ide.workspace import Policy

    data = tmp_path / "data"
    data.mkdir()
    store = SqlStore(sqlite_url(data))
    user = store.add_user("dana")
    secret, _ = tokens.create(store, user.id, ("read",))
    project = HostedProjects(store, data, Policy(hosted=True)).create(user.id, "p")
    store.close()
    service = start_hosted(data)
    answers: list[httpx.Response] = []

    def call() -> None:
        answers.append(
            httpx.post(
                f"{service.url}/p/{project.id}/mcp/wait",
                json={"milliseconds": 2000},
                headers={"Authorization": f"Bearer {secret}"},
                timeout=120,
            )
        )

    worker = threading.Thread(target=call)
    worker.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # until the call is being served
        if "mcp_ide_http_requests_in_flight 1.0" in httpx.get(service.url + "/metrics", timeout=30).text:
            break
        time.sleep(0.05)
    code = service.stop()
    worker.join(120)
    assert answers and answers[0].status_code == 200, answers
    assert code in (0, -signal.SIGTERM)  # uvicorn re-raises SIGTERM once it has drained


async def test_the_hosted_listing_stays_small(service):
    """Every tool plus the owner tools, as tools/list sends them: within the listing budget (45 KB)."""
    async with mcp_client(service, "A1") as client:
        result = await client.list_tools()
    tools = result.model_dump(mode="json", by_alias=True, exclude_none=True)["tools"]
    assert {"create_project", "list_projects", "rename_project", "delete_project", "export_project"} <= {
        t["name"] for t in tools
    }
    size = len(json.dumps({"tools": tools}, separators=(",", ":"), ensure_ascii=False).encode())
    owner = [t for t in tools if t["name"].endswith("_project") or t["name"] == "list_projects"]
    owner_size = len(json.dumps(owner, separators=(",", ":"), ensure_ascii=False).encode())
    print(f"hosted tools/list: {len(tools)} tools, {size} bytes ({owner_size} for the owner tools)")
    assert size <= 45_000, size


def test_jobs_and_terminals_of_a_project_are_not_reachable_from_another(service):
    from tests.support.system import require_system

    require_system("bwrap", "bubblewrap")  # hosted commands always run in the sandbox
    with httpx.Client(timeout=120) as http:
        a1 = service.project_url("A1", "/mcp/")
        r = http.post(
            a1 + "start_job", json={"command": "echo A-job-output; sleep 30"}, headers=service.auth("A")
        )
        assert r.status_code == 200, r.text
        job = r.json()["status"]["jobId"]
        r = http.post(
            a1 + "execute_terminal_command", json={"command": "echo A-term"}, headers=service.auth("A")
        )
        assert r.status_code == 200, r.text
        terminal = r.json()["status"]["terminalId"]
        out = http.post(
            a1 + "get_job_output",
            json={"jobId": job, "waitMs": 20000, "untilPattern": "A-job-output"},
            headers=service.auth("A"),
        )
        assert "A-job-output" in out.text
        for project, who in (("A2", "A"), ("B1", "B")):
            other = service.project_url(project, "/mcp/")
            for tool, args in (
                ("get_job_output", {"jobId": job}),
                ("read_terminal_output", {"terminalId": terminal}),
                ("cancel_job", {"jobId": job}),
            ):
                r = http.post(other + tool, json=args, headers=service.auth(who))
                assert r.status_code == 404 and "A-" not in r.text, (project, tool, r.text)
            listed = http.post(other + "list_jobs", json={}, headers=service.auth(who)).json()["status"]
            assert all(j["jobId"] != job for j in listed)
        http.post(a1 + "cancel_job", json={"jobId": job}, headers=service.auth("A"))


def test_the_playground_calls_the_tools_of_its_own_project(service, tmp_path: Path):
    """The reference page under /p/<project>/mcp/tools loads its assets and calls tools of that project
    (relative URLs), in headless Chromium; the page needs the token like every hosted door."""
    from tests.support.browser import chromium_page

    with chromium_page(tmp_path / "profile") as page:
        page.set_extra_http_headers(service.auth("A"))
        page.goto(service.project_url("A2", "/mcp/tools"))
        page.wait_for_selector("body[data-ready=true]")
        page.fill("#search", "project_fs_write")
        page.locator("article#tool-project_fs_write button.try").click()
        page.fill("#pg-f-path", "from-browser.txt")
        page.fill("#pg-f-content", "hi from the playground")
        page.click("#pg-run")
        page.wait_for_selector("#pg-status .pill")
        page.wait_for_function("!document.getElementById('pg-run').disabled")
        assert "200" in page.inner_text("#pg-status"), page.inner_text("#pg-result")
        assert not page.errors  # type: ignore[attr-defined]
    written = service.data / "projects" / service.projects["A2"] / "from-browser.txt"
    assert written.read_text() == "hi from the playground"


def test_each_project_runs_as_its_own_uid_and_sees_no_other_project(service):
    """The service gives each project's sandbox the uid of the project's number: A1's and B1's
    commands run as two different unprivileged users, and B1's folder is not there for A1."""
    from mcp_server_ide.engines.processes.bubblewrap import UID_BASE
    from tests.support.system import require_system

    require_system("bwrap", "bubblewrap")
    b_folder = service.data / "projects" / service.projects["B1"]
    uids = {}
    with httpx.Client(timeout=120) as http:
        for project, who in (("A1", "A"), ("B1", "B")):
            r = http.post(
                service.project_url(project, "/mcp/") + "run_command_on_background",
                json={"command": f"id -u; cat {b_folder}/secret.txt ../*/secret.txt 2>&1 | head -3"},
                headers=service.auth(who),
            )
            assert r.status_code == 200, r.text
            out = r.json()["status"]["stdout"]
            uids[project] = int(out.split()[0])
            if project == "A1":
                assert "B's secret" not in out, out
            else:
                assert "B's secret" in out  # its own file, by its real path
    assert uids["A1"] != uids["B1"] and min(uids.values()) > UID_BASE, uids


def test_a_write_past_the_projects_quota_is_refused(tmp_path: Path):
    from mcp_server_ide.hosted import tokens
    from mcp_server_ide.hosted.projects import HostedProjects
    from mcp_server_ide.hosted.sqlstore import SqlStore, sqlite_url
    from mcp_server_ide.workspace import Policy

    data = tmp_path / "data"
    data.mkdir()
    store = SqlStore(sqlite_url(data))
    user = store.add_user("erin")
    secret, _ = tokens.create(store, user.id, ("read", "write"))
    project = HostedProjects(store, data, Policy(hosted=True)).create(user.id, "p")
    store.close()
    service = start_hosted(data, "--project-quota", "64K")
    try:
        url, auth = f"{service.url}/p/{project.id}/mcp/", {"Authorization": f"Bearer {secret}"}
        small = httpx.post(url + "create_new_file_with_text", json={"pathInProject": "a.txt", "text": "x" * 1000},
                           headers=auth, timeout=60)  # fmt: skip
        assert small.status_code == 200 and small.json()["error"] is None, small.text
        big = httpx.post(url + "create_new_file_with_text", json={"pathInProject": "b.txt", "text": "x" * 100_000},
                         headers=auth, timeout=60)  # fmt: skip
        assert big.json()["status"] is None and "quota" in big.json()["error"], big.text
        assert not (data / "projects" / project.id / "b.txt").exists()
    finally:
        service.stop()


def test_rate_limits_are_per_user(tmp_path: Path):
    """Every token and project of one user share one budget; another user's calls are not slowed."""
    from mcp_server_ide.hosted import tokens
    from mcp_server_ide.hosted.projects import HostedProjects
    from mcp_server_ide.hosted.sqlstore import SqlStore, sqlite_url
    from mcp_server_ide.workspace import Policy

    data = tmp_path / "data"
    data.mkdir()
    store = SqlStore(sqlite_url(data))
    projects = HostedProjects(store, data, Policy(hosted=True))
    calls = []
    for name in ("fay", "gus"):
        user = store.add_user(name)
        first, _ = tokens.create(store, user.id, ("read",))
        second, _ = tokens.create(store, user.id, ("read",))
        calls.append([(projects.create(user.id, "a").id, first), (projects.create(user.id, "b").id, second)])
    store.close()
    service = start_hosted(data, "--rate-limit", "0.01", "--rate-burst", "2")
    try:

        def status(project: str, secret: str) -> httpx.Response:
            return httpx.post(f"{service.url}/p/{project}/mcp/list_files_in_folder", json={"pathInProject": "/"},
                              headers={"Authorization": f"Bearer {secret}"}, timeout=60)  # fmt: skip

        (fa, fa_token), (fb, fb_token) = calls[0]
        assert status(fa, fa_token).status_code == 200
        assert status(fb, fb_token).status_code == 200  # the user's other token and project: same budget
        over = status(fa, fa_token)
        assert over.status_code == 429 and int(over.headers["Retry-After"]) >= 1, over.text
        assert over.json()["status"] is None and "rate limited" in over.json()["error"]
        (ga, ga_token), _ = calls[1]
        assert status(ga, ga_token).status_code == 200  # another user
    finally:
        service.stop()

"""Scale-out: two ``mcp-server-ide hosted`` workers behind HAProxy (project affinity: the project id in
``/p/{project}/…`` is hashed, consistent hashing; health checks on ``/healthz``), users and projects in
PostgreSQL, sessions and their event streams in Redis, one shared data folder; every part a real process
from Debian's packages on loopback (tests/support/services.py).

Projects spread over both workers, and each project's requests reach one worker: two client sessions of
one project share its jobs, and a server-to-client request (elicitation) is answered on the worker that
asked. Killing (SIGKILL) the project's worker while it runs a call ends that call with an error the
other worker sends on the resumed stream (``Last-Event-ID``), and the session's next calls are served by
the surviving worker.
Each worker names itself on every answer (``x-mcp-ide-worker``), which is how the test sees who
served what.

Marker ``scaleout`` (own README command; ~1-2 min: PostgreSQL, Redis, HAProxy and two workers start).
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from tests.support.hosted import HostedService, hosted_cli, start_hosted
from tests.support.net import free_port
from tests.support.services import Service, start_haproxy, start_postgres, start_redis
from tests.support.system import require_system

pytestmark = [pytest.mark.scaleout, pytest.mark.anyio]

WORKER = "x-mcp-ide-worker"


@dataclass
class Cluster:
    data: Path
    database: str
    redis: Service
    proxy: Service
    workers: list[HostedService]
    token: str
    project: str
    other_token: str
    parts: list[Service] = field(default_factory=list)

    def url(self, rest: str = "/mcp") -> str:
        return f"{self.proxy.url}/p/{self.project}{rest}"

    def worker_named(self, name: str) -> HostedService:
        pid = int(name.rsplit(":", 1)[1])
        return next(w for w in self.workers if w.process.pid == pid)


def _cli_ok(data: Path, *args: str) -> str:
    done = hosted_cli(data, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    require_system("bwrap", "bubblewrap")  # the long call is a command, and commands run in the sandbox
    pg = start_postgres()
    redis = start_redis()
    parts = [pg, redis]
    workers: list[HostedService] = []
    try:
        data = tmp_path_factory.mktemp("scaleout") / "data"
        data.mkdir()
        db = ("--database", pg.url)
        _cli_ok(data, "user", "add", "alice", *db)
        token = _cli_ok(data, "token", "create", "alice", *db).split()[-1]
        other_token = _cli_ok(data, "token", "create", "alice", "--name", "other", *db).split()[-1]
        project = json.loads(_cli_ok(data, "project", "create", "alice", "one", *db))["id"]
        front = free_port()
        for _ in range(2):
            workers.append(
                start_hosted(
                    data, *db, "--redis", redis.url, "--allowed-host", f"127.0.0.1:{front}", timeout=120
                )
            )
        backends = {f"w{i}": int(w.url.rsplit(":", 1)[1]) for i, w in enumerate(workers)}
        proxy = start_haproxy(backends, port=front)
        parts.append(proxy)
        yield Cluster(data, pg.url, redis, proxy, workers, token, project, other_token, parts)
    finally:
        for w in workers:
            w.stop()
        for part in reversed(parts):
            part.stop()


def _wait_until(check: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def test_projects_spread_over_both_workers_and_each_stays_on_one(cluster: Cluster):
    """The balancer does not know which projects exist: ids it has never seen are hashed the same way
    (the worker answers "no such project" and names itself)."""
    import secrets

    where: dict[str, str] = {}
    with httpx.Client(timeout=60) as http:
        for _ in range(32):
            project = secrets.token_hex(10)
            seen = {http.get(f"{cluster.proxy.url}/p/{project}/mcp/tools").headers[WORKER] for _ in range(3)}
            assert len(seen) == 1, (project, seen)  # one project, one worker
            where[project] = seen.pop()
    assert len(set(where.values())) == 2, where


def _text(result: Any) -> str:
    return "".join(getattr(b, "text", "") for b in result.content)


async def test_two_sessions_of_one_project_share_its_jobs_and_elicitation_is_answered(cluster: Cluster):
    """A job one session starts is listed and read by another session of the project (jobs live in the
    worker running them); overwriting a file the session never read asks the person (elicitation), and
    the client's answer, a separate POST, reaches the worker that asked."""
    import mcp_types
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    served: set[str] = set()

    async def note(response: Any) -> None:
        served.add(response.headers.get(WORKER, ""))

    def http() -> httpx.AsyncClient:
        client = create_mcp_http_client(headers={"Authorization": f"Bearer {cluster.token}"})
        client.event_hooks["response"].append(note)
        return client

    asked: list[str] = []

    async def yes(context: Any, params: Any) -> Any:
        asked.append(params.message)
        return mcp_types.ElicitResult(action="accept", content={"confirm": True})

    with anyio.fail_after(180):
        async with (
            Client(streamable_http_client(cluster.url(), http_client=http()), mode="legacy") as first,
            Client(
                streamable_http_client(cluster.url(), http_client=http()),
                mode="legacy",
                elicitation_callback=yes,
            ) as second,
        ):
            started = await first.call_tool("start_job", {"command": "echo shared-job-output; sleep 30"})
            assert not started.is_error, started
            job = json.loads(_text(started))["jobId"]
            for _ in range(4):  # round-robin would have sent some of these to the other worker
                listed = await second.call_tool("list_jobs", {})
                assert job in _text(listed), listed
            output = await second.call_tool("get_job_output", {"jobId": job, "untilPattern": "shared-job"})
            assert "shared-job-output" in _text(output), output
            assert not (await second.call_tool("cancel_job", {"jobId": job})).is_error

            written = await first.call_tool("project_fs_write", {"path": "asked.txt", "content": "one\n"})
            assert not written.is_error, written
            again = await second.call_tool("project_fs_write", {"path": "asked.txt", "content": "two\n"})
            assert not again.is_error, again
            assert asked and "asked.txt" in asked[0]
    assert (cluster.data / "projects" / cluster.project / "asked.txt").read_text() == "two\n"
    assert len(served - {""}) == 1, served  # one project: one worker


def _sse_messages(text: str) -> list[dict[str, Any]]:
    return [
        json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:") and line[5:].strip()
    ]


async def _listen(
    http: httpx.AsyncClient, url: str, session: dict[str, str], got: list[dict[str, Any]], ready: anyio.Event
) -> None:
    """Hold the session's GET stream at ``url``: first ``{"worker": …}`` (who holds it), then each
    message as it comes, into ``got``; ``ready`` is set once the stream is open."""
    async with http.stream("GET", url, headers={**session, "Accept": "text/event-stream"}) as stream:
        assert stream.status_code == 200
        got.append({"worker": stream.headers[WORKER]})
        ready.set()
        async for line in stream.aiter_lines():
            if line.startswith("data:") and line[5:].strip():
                got.append(json.loads(line[5:]))


async def test_a_notification_sent_on_one_worker_reaches_the_get_stream_held_by_the_other(cluster: Cluster):
    """The session opens on worker 1, which also holds its GET stream; the subscription and the write
    go to worker 2 (straight to each worker, not through the proxy, to pin who serves what). Worker 2's
    copy of the session sends ``resources/updated``; worker 1 relays it onto the client's stream."""
    from tests.support.net import ACCEPT, initialize

    one, two = (f"{w.url}/p/{cluster.project}/mcp" for w in cluster.workers)
    auth = {"Authorization": f"Bearer {cluster.token}"}
    version = "2025-11-25"
    uri = "file:///workspace/watched.txt"  # as a hosted project names its files (never the host folder)
    got: list[dict[str, Any]] = []
    async with httpx.AsyncClient(timeout=60, headers=auth) as http:
        r = await http.post(one, json=initialize(version, id=1), headers={"Accept": ACCEPT})
        assert r.status_code == 200, r.text
        session = {
            "Accept": ACCEPT,
            "mcp-session-id": r.headers["mcp-session-id"],
            "mcp-protocol-version": version,
        }
        # On the other worker, the session answers only its own token: another token of the same user
        # gets what an unknown session gets.
        listing = {"jsonrpc": "2.0", "id": 9, "method": "tools/list"}
        other = {**session, "Authorization": f"Bearer {cluster.other_token}"}
        wrong = await http.post(two, json=listing, headers=other)
        unknown = await http.post(two, json=listing, headers={**other, "mcp-session-id": "f" * 32})
        assert (wrong.status_code, wrong.content) == (unknown.status_code, unknown.content)
        assert wrong.status_code == 404 and wrong.headers[WORKER] != r.headers[WORKER]
        r = await http.post(
            two, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session
        )
        assert r.status_code == 202 and r.headers[WORKER] != "", r.text

        async with anyio.create_task_group() as tg:
            ready = anyio.Event()
            tg.start_soon(_listen, http, one, session, got, ready)
            with anyio.fail_after(30):
                await ready.wait()
            r = await http.post(
                two,
                json={"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": uri}},
                headers=session,
            )
            assert r.status_code == 200 and "error" not in _sse_messages(r.text)[-1], r.text
            call = {"name": "project_fs_write", "arguments": {"path": "watched.txt", "content": "new\n"}}
            r = await http.post(
                two, json={"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call}, headers=session
            )
            assert r.status_code == 200 and r.headers[WORKER] != got[0]["worker"], r.text
            assert not _sse_messages(r.text)[-1]["result"].get("isError"), r.text
            with anyio.fail_after(60):
                while not any(m.get("method") == "notifications/resources/updated" for m in got):
                    await anyio.sleep(0.1)
            tg.cancel_scope.cancel()
        updated = [m for m in got if m.get("method") == "notifications/resources/updated"]
        assert updated[0]["params"]["uri"] == uri
        assert cluster.worker_named(got[0]["worker"]) is cluster.workers[0]
        await http.delete(one, headers=session)


async def test_a_broadcast_on_one_worker_reaches_sessions_on_the_other(cluster: Cluster):
    """Session S lives on worker 1 only (its GET stream there), session T on worker 2 only. T subscribes
    to a file, so worker 2 follows the project's changes, and creates a file: worker 2 broadcasts
    ``resources/list_changed`` to its clients and over Redis, and worker 1 tells S."""
    from tests.support.net import ACCEPT, initialize

    one, two = (f"{w.url}/p/{cluster.project}/mcp" for w in cluster.workers)
    auth = {"Authorization": f"Bearer {cluster.token}"}
    version = "2025-11-25"
    uri = "file:///workspace/watched-bc.txt"  # as a hosted project names its files (never the host folder)
    got: list[dict[str, Any]] = []
    async with httpx.AsyncClient(timeout=60, headers=auth) as http:

        async def open_session(url: str) -> dict[str, str]:
            r = await http.post(url, json=initialize(version, id=1), headers={"Accept": ACCEPT})
            assert r.status_code == 200, r.text
            headers = {
                "Accept": ACCEPT,
                "mcp-session-id": r.headers["mcp-session-id"],
                "mcp-protocol-version": version,
            }
            done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            assert (await http.post(url, json=done, headers=headers)).status_code == 202
            return headers

        s, t = await open_session(one), await open_session(two)

        def announced() -> bool:
            return any(m.get("method") == "notifications/resources/list_changed" for m in got)

        async with anyio.create_task_group() as tg:
            ready = anyio.Event()
            tg.start_soon(_listen, http, one, s, got, ready)
            with anyio.fail_after(30):
                await ready.wait()
            # A request after the GET stream opened: worker 1 now counts S among its clients.
            r = await http.post(one, json={"jsonrpc": "2.0", "id": 2, "method": "ping"}, headers=s)
            assert r.status_code == 200, r.text
            subscribe = {"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": uri}}
            r = await http.post(two, json=subscribe, headers=t)
            assert r.status_code == 200 and "error" not in _sse_messages(r.text)[-1], r.text
            # resources/list_changed is debounced (one a second, the others dropped): an earlier test's
            # change may hide one new file, so new files are made until one is announced.
            with anyio.fail_after(90):
                for n in itertools.count():
                    name = f"bc-{os.getpid()}-{n}.txt"
                    call = {"name": "project_fs_write", "arguments": {"path": name, "content": "x\n"}}
                    ask = {"jsonrpc": "2.0", "id": 3 + n, "method": "tools/call", "params": call}
                    r = await http.post(two, json=ask, headers=t)
                    assert r.status_code == 200, r.text
                    assert not _sse_messages(r.text)[-1]["result"].get("isError"), r.text
                    with anyio.move_on_after(3):
                        while not announced():
                            await anyio.sleep(0.1)
                    if announced():
                        break
            tg.cancel_scope.cancel()
        await http.delete(one, headers=s)
        await http.delete(two, headers=t)


async def test_a_session_survives_killing_the_worker_running_its_call(cluster: Cluster):
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    from mcp.shared.exceptions import MCPError

    served: list[tuple[str, bool, str, int]] = []  # (method, resumed?, worker, status)

    async def note(response: Any) -> None:
        request = response.request
        served.append(
            (
                request.method,
                "last-event-id" in request.headers,
                response.headers.get(WORKER, ""),
                response.status_code,
            )
        )

    messages: list[Any] = []

    async def on_message(message: Any) -> None:
        messages.append(message)

    def updates() -> list[Any]:
        return [m for m in messages if str(getattr(getattr(m, "params", None), "uri", "")) == watched]

    watched = "file:///workspace/kept.txt"
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {cluster.token}"})
    http.event_hooks["response"].append(note)
    transport = streamable_http_client(cluster.url(), http_client=http)
    async with Client(transport, mode="legacy", message_handler=on_message) as client:
        written = await client.call_tool("project_fs_write", {"path": "kept.txt", "content": "kept\n"})
        assert not written.is_error, written
        await client.subscribe_resource(watched)  # kept by the worker serving the session
        for _ in range(3):
            read = await client.call_tool("project_fs_read", {"path": "kept.txt"})
            assert "kept" in "".join(getattr(b, "text", "") for b in read.content)
        one = {worker for method, _, worker, status in served if method == "POST" and status == 200}
        assert len(one) == 1, served  # project affinity: one worker serves this project

        outcome: dict[str, Any] = {}
        before = len(served)

        async def long_call() -> None:
            try:
                outcome["result"] = await client.call_tool(
                    "run_command_on_background", {"command": "sleep 120", "timeout": 180000}
                )
            except MCPError as exc:
                outcome["error"] = exc

        async with anyio.create_task_group() as tg:
            tg.start_soon(long_call)
            with anyio.fail_after(60):
                while not any(m == "POST" and s == 200 for m, _, _, s in served[before:]):
                    await anyio.sleep(0.05)
            runner = next(w for m, _, w, s in served[before:] if m == "POST" and s == 200)
            victim = cluster.worker_named(runner)
            await anyio.sleep(1.0)  # the command is running in the victim's sandbox
            os.killpg(victim.process.pid, signal.SIGKILL)
            victim.process.wait(30)
            with anyio.fail_after(60):
                while not outcome:
                    await anyio.sleep(0.1)

        assert "result" not in outcome, outcome
        assert "stopped before it answered" in str(outcome["error"]), outcome
        survivor = next(w for w in cluster.workers if w is not victim)
        resumed = [(w, s) for m, r, w, s in served[before:] if m == "GET" and r]
        assert resumed and all(w != runner for w, _ in resumed), served[before:]
        assert resumed[-1][1] == 200 and cluster.worker_named(resumed[-1][0]) is survivor

        after = len(served)
        read = await client.call_tool("project_fs_read", {"path": "kept.txt"})
        assert "kept" in "".join(getattr(b, "text", "") for b in read.content)
        # The subscription made on the stopped worker holds on the survivor: a change is announced.
        messages.clear()
        changed = await client.call_tool("project_fs_write", {"path": "kept.txt", "content": "changed\n"})
        assert not changed.is_error, changed
        with anyio.fail_after(30):
            while not updates():
                await anyio.sleep(0.1)
        written = await client.call_tool("project_fs_write", {"path": "after.txt", "content": "after\n"})
        assert not written.is_error, written
        tools = await client.list_tools()
        assert any(t.name == "project_fs_read" for t in tools.tools)
        later = {w for m, _, w, s in served[after:] if m == "POST" and s == 200}
        assert later and all(cluster.worker_named(w) is survivor for w in later), served[after:]
    assert (cluster.data / "projects" / cluster.project / "after.txt").read_text() == "after\n"

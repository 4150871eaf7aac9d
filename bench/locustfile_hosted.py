"""The load test's clients (locust): many users' clients calling tools in their hosted projects.

Run by ``bench/load_hosted.py``, which makes the users, tokens and projects, starts the service and
passes their description in ``$LOAD_CONFIG`` (a JSON file). Each locust user is one client: the
n-th client belongs to user ``n % users`` and works in one of that user's projects; most speak MCP
over Streamable HTTP (their own session: ``initialize``, ``notifications/initialized``, then
``tools/call``), the others the JSON-style REST interface (``POST /p/<project>/mcp/<tool>``). Each
makes ``calls`` tool calls, drawn from a mix of reads, listings, searches, writes and a few
commands, then stops; the last one to stop ends the run.

A call is an error when its HTTP status is not 2xx, its JSON-RPC answer is an error, or the tool
failed (``isError`` / a non-null REST ``error``). Every write's final content per path is kept, and
with the raw latencies and the first errors written to ``results`` (the config's path) when the run
stops: ``load_hosted.py`` then reads each written file back through the service.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import random
import time
from pathlib import Path
from typing import Any

import gevent
from locust import User, constant, events, task
from locust.exception import StopUser
from requests import Session

CONFIG: dict[str, Any] = json.loads(Path(os.environ["LOAD_CONFIG"]).read_text())
PROTOCOL = "2025-11-25"
ACCEPT = "application/json, text/event-stream"

_numbers = itertools.count()
_done = {"clients": 0}
latencies: dict[str, list[float]] = {}
errors: list[str] = []
error_count = {"n": 0}
writes: dict[str, str] = {}
"""``project/path`` -> the content its last write left."""


class CallFailed(Exception):
    pass


def record(name: str, started: float, error: str | None, env: Any, size: int = 0) -> None:
    elapsed_ms = (time.perf_counter() - started) * 1000
    latencies.setdefault(name, []).append(elapsed_ms)
    if error is not None:
        error_count["n"] += 1
        if len(errors) < 50:
            errors.append(f"{name}: {error}"[:600])
    env.events.request.fire(
        request_type="CALL",
        name=name,
        response_time=elapsed_ms,
        response_length=size,
        exception=CallFailed(error) if error is not None else None,
        context={},
    )


def lost(what: str) -> None:
    """A write this client made does not read back as it left it."""
    error_count["n"] += 1
    error_count["lost"] = error_count.get("lost", 0) + 1
    if len(errors) < 50:
        errors.append(f"lost write: {what}")


def sse_messages(body: str) -> list[dict[str, Any]]:
    found = []
    for line in body.splitlines():
        if line.startswith("data:"):
            data = line[5:].strip()
            if data:
                found.append(json.loads(data))
    return found


class ToolClient(User):
    """One client of one user in one project (MCP over Streamable HTTP, or REST)."""

    wait_time = constant(float(CONFIG.get("think", 0)))

    def on_start(self) -> None:
        n = next(_numbers)
        self.n = n
        users = CONFIG["users"]
        self.user = users[n % len(users)]
        projects = self.user["projects"]
        self.project = projects[(n // len(users)) % len(projects)]
        self.mcp = (n % 10) >= round(10 * CONFIG.get("rest_share", 0.3))
        self.rng = random.Random(n)
        self.http = Session()
        self.http.headers["Authorization"] = f"Bearer {self.user['token']}"
        self.base = f"{self.host}/p/{self.project['id']}/mcp"
        self.calls = 0
        self.rpc_id = 0
        self.mine: dict[str, str] = {}  # path -> the content this client last wrote there
        self.session: str | None = None
        if self.mcp:
            self._initialize()

    def on_stop(self) -> None:
        if self.session is not None:
            with contextlib.suppress(Exception):  # the session ends with the run anyway
                self.http.delete(self.base, headers=self._headers(), timeout=60)
        self.http.close()

    # the two doors

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
        if self.session is not None:
            headers["mcp-session-id"] = self.session
            headers["mcp-protocol-version"] = PROTOCOL
        return headers

    def _rpc(self, method: str, params: dict[str, Any], notify: bool = False) -> tuple[int, Any, int]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notify:
            self.rpc_id += 1
            message["id"] = self.rpc_id
        r = self.http.post(self.base, data=json.dumps(message), headers=self._headers(), timeout=300)
        if notify or r.status_code >= 300:
            return r.status_code, r.text, len(r.content)
        if r.headers.get("content-type", "").startswith("text/event-stream"):
            answers = [m for m in sse_messages(r.text) if m.get("id") == message["id"]]
            body = (
                answers[0] if answers else {"error": {"message": f"no answer in the stream: {r.text[:200]}"}}
            )
        else:
            body = r.json()
        if self.session is None:
            self.session = r.headers.get("mcp-session-id")
        return r.status_code, body, len(r.content)

    def _initialize(self) -> None:
        started = time.perf_counter()
        error = None
        try:
            params = {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "load", "version": "1"},
            }
            status, body, _ = self._rpc("initialize", params)
            if status != 200 or "result" not in body:
                error = f"initialize: HTTP {status}: {str(body)[:300]}"
            elif self.session is None:
                error = "initialize: no mcp-session-id"
            else:
                status, text, _ = self._rpc("notifications/initialized", {}, notify=True)
                if status != 202:
                    error = f"notifications/initialized: HTTP {status}: {text[:300]}"
        except Exception as exc:
            error = f"initialize: {type(exc).__name__}: {exc}"
        record("mcp initialize", started, error, self.environment)

    def call(self, tool: str, args: dict[str, Any]) -> Any:
        """One tool call on this client's door; the tool's result (parsed), or None after an error."""
        door = "mcp" if self.mcp else "rest"
        started = time.perf_counter()
        error: str | None = None
        result: Any = None
        size = 0
        try:
            if self.mcp:
                status, body, size = self._rpc("tools/call", {"name": tool, "arguments": args})
                if status != 200:
                    error = f"HTTP {status}: {str(body)[:300]}"
                elif "error" in body:
                    error = f"JSON-RPC error: {body['error']}"
                else:
                    res = body["result"]
                    text = "".join(c.get("text", "") for c in res.get("content", []))
                    if res.get("isError"):
                        error = f"tool error: {text[:300]}"
                    elif "structuredContent" in res:
                        result = res["structuredContent"]
                    else:
                        try:
                            result = json.loads(text)
                        except ValueError:
                            result = text
            else:
                r = self.http.post(
                    f"{self.base}/{tool}", data=json.dumps(args), headers=self._headers(), timeout=300
                )
                size = len(r.content)
                if r.status_code != 200:
                    error = f"HTTP {r.status_code}: {r.text[:300]}"
                else:
                    body = r.json()
                    if body.get("error") is not None:
                        error = f"tool error: {body['error'][:300]}"
                    result = body.get("status")
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
        record(f"{door} {tool}", started, error, self.environment, size)
        self.calls += 1
        return None if error is not None else result

    # the mix

    def _seeded(self) -> str:
        return self.rng.choice(CONFIG["seeded_files"])

    def read_seeded(self) -> None:
        path = self._seeded()
        if self.rng.random() < 0.5:
            self.call("get_file_text_by_path", {"pathInProject": path})
        else:
            self.call("project_fs_read", {"path": path})

    def read_own(self) -> None:
        if not self.mine:
            self.read_seeded()
            return
        path = self.rng.choice(sorted(self.mine))
        got = self.call("project_fs_read", {"path": path})
        if isinstance(got, dict) and got.get("content") != self.mine[path]:
            lost(f"{path}: read {str(got.get('content'))[:80]!r}")  # a write it made, lost or torn

    def listing(self) -> None:
        if self.rng.random() < 0.5:
            self.call("project_fs_list", {"recursive": self.rng.random() < 0.3})
        else:
            self.call("list_files_in_folder", {"pathInProject": self.rng.choice(["/", "src", "docs"])})

    def search(self) -> None:
        if self.rng.random() < 0.6:
            self.call(
                "search_in_files_content", {"searchText": self.rng.choice(["TODO", "def ", "import", "load"])}
            )
        else:
            self.call(
                "find_files_by_name_substring", {"nameSubstring": self.rng.choice(["mod", "README", ".md"])}
            )

    def write_new(self) -> None:
        path = f"load/c{self.n}/f{self.calls}.txt"
        content = f"client {self.n} call {self.calls} {self.rng.random()}\n" * self.rng.randint(1, 40)
        if self.rng.random() < 0.5:
            done = self.call("create_new_file_with_text", {"pathInProject": path, "text": content})
        else:
            done = self.call("project_fs_write", {"path": path, "content": content})
        if done is not None:
            self._wrote(path, content)

    def rewrite_own(self) -> None:
        """Read one of its files for the hash, then replace it guarded by that hash (or edit it in place)."""
        if not self.mine:
            self.write_new()
            return
        path = self.rng.choice(sorted(self.mine))
        if self.rng.random() < 0.5:
            got = self.call("project_fs_read", {"path": path})
            if not isinstance(got, dict):
                return
            content = self.mine[path] + f"more from call {self.calls}\n"
            done = self.call(
                "project_fs_write", {"path": path, "content": content, "expectedHash": got["hash"]}
            )
        else:
            old = self.mine[path].splitlines(keepends=True)[0]
            new = old.replace("client", "CLIENT", 1)
            content = self.mine[path].replace(old, new, 1)
            if content.count(new) != 1 or self.mine[path].count(old) != 1:
                content = self.mine[path]
                new = old = None  # the first line is repeated: a replace would not be unique
            if old is None:
                done = self.call("append_file_content", {"pathInProject": path, "text": "tail\n"})
                content += "tail\n"
            else:
                done = self.call(
                    "replace_specific_text", {"pathInProject": path, "searchText": old, "replaceText": new}
                )
        if done is not None:
            self._wrote(path, content)

    def command(self) -> None:
        self.call("run_command_on_background", {"command": "ls src | wc -l; echo done", "timeout": 60000})

    def _wrote(self, path: str, content: str) -> None:
        self.mine[path] = content
        writes[f"{self.project['id']}/{path}"] = content

    @task
    def step(self) -> None:
        """One call (or a read-then-write pair) drawn from :data:`MIX`; stop after ``calls`` calls."""
        if self.calls >= CONFIG["calls"]:
            self._finish()
        chosen = self.rng.choices(MIX_NAMES, MIX_WEIGHTS)[0]
        if chosen == "rewrite_own" and CONFIG["calls"] - self.calls < 2:
            chosen = "write_new"  # a rewrite is two calls: keep to the budget
        getattr(self, chosen)()
        if self.calls >= CONFIG["calls"]:
            self._finish()

    def _finish(self) -> None:
        _done["clients"] += 1
        if _done["clients"] >= CONFIG["clients"] and self.environment.runner is not None:
            gevent.spawn(self.environment.runner.quit)  # not from this user's own greenlet
        raise StopUser()


MIX = {
    "read_seeded": 20,
    "read_own": 10,
    "listing": 12,
    "search": 13,
    "write_new": 20,
    "rewrite_own": 8,
    "command": 2,
}
"""What a client does, by weight: ~36% reads, 14% listings, 15% searches, 33% writes, 2% commands."""
MIX_NAMES, MIX_WEIGHTS = list(MIX), list(MIX.values())


@events.quitting.add_listener
def _write_results(environment: Any, **_kw: Any) -> None:
    out = {
        "latencies_ms": latencies,
        "errors": errors,
        "error_count": error_count["n"],
        "writes": writes,
        "clients_done": _done["clients"],
    }
    with open(CONFIG["results"], "w") as f:
        json.dump(out, f)

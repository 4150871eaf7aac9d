"""A light load generator for MCP sessions: wrk (Debian's ``wrk``, an HTTP benchmarking tool written
in C) drives ``tools/call`` requests over sessions opened beforehand, through a Lua script made here.

The Python generator of bench_scaleout.py spends ~3 ms of CPU per call (httpx, asyncio, JSON): on a
2-core machine that is a third of what a worker spends, taken from the very cores the workers need.
wrk spends a small fraction of that, so more of the machine goes to what is measured.

Each request goes to the next session in turn (any session takes concurrent requests): 50%
``project_fs_read``, 30% ``search_in_files_content``, 20% ``project_fs_write`` (each session its own
file), the same mix as the Python generator. An answer counts as an error unless it is HTTP 200 with
a JSON-RPC ``result`` that is not ``isError``; wrk's own socket errors and timeouts count too.
"""

from __future__ import annotations

import json
import resource
import shutil
import subprocess
import tempfile
from pathlib import Path

ACCEPT = "application/json, text/event-stream"

_SCRIPT = r"""
sessions = {SESSIONS}
files = {FILES}
auth = {AUTH}
version = {VERSION}
errors = 0
local turn, id = 0, 0
math.randomseed({SEED})

local function call(name, arguments)
  id = id + 1
  return string.format(
    '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":%s}}', id, name, arguments)
end

function request()
  turn = turn % #sessions + 1
  local s = sessions[turn]
  local pick, body = math.random()
  if pick < 0.5 then
    body = call("project_fs_read", string.format('{"path":"src/m%d.py"}', math.random(0, files - 1)))
  elseif pick < 0.8 then
    body = call("search_in_files_content", string.format('{"searchText":"value_%d"}', math.random(0, files - 1)))
  else
    body = call("project_fs_write",
      string.format('{"path":"out/s%d.txt","content":"%s"}', turn, string.rep(tostring(id) .. "\\n", 20)))
  end
  return wrk.format("POST", s[1], {
    ["Authorization"] = auth, ["Accept"] = "application/json, text/event-stream",
    ["Content-Type"] = "application/json", ["mcp-session-id"] = s[2], ["mcp-protocol-version"] = version,
  }, body)
end

function response(status, headers, body)
  if status ~= 200 or not string.find(body, '"result"', 1, true) or string.find(body, '"isError":true', 1, true) then
    errors = errors + 1
    if errors <= 3 then io.stderr:write(status .. " " .. string.sub(body, 1, 300) .. "\n") end
  end
end

threads = {}
function setup(thread) table.insert(threads, thread) end

function done(summary, latency, requests)
  local bad = 0
  for _, t in ipairs(threads) do bad = bad + t:get("errors") end
  local e = summary.errors
  io.write(string.format('WRK {"requests":%d,"answer_errors":%d,"socket_errors":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d}\n',
    summary.requests, bad, e.connect + e.read + e.write + e.status + e.timeout, summary.duration,
    latency:percentile(50), latency:percentile(99)))
end
"""


def available() -> bool:
    return shutil.which("wrk") is not None


def _lua(value: object) -> str:
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid Lua string literal for these characters
    if isinstance(value, list | tuple):
        return "{" + ", ".join(_lua(v) for v in value) + "}"
    return str(value)


def run(
    base: str,
    sessions: list[tuple[str, str]],
    token: str,
    version: str,
    seconds: float,
    files: int,
    seed: int,
) -> dict[str, float]:
    """Drive ``sessions`` ((path, session id) at ``base``) for ``seconds`` with one wrk thread and a
    connection per session; calls per second, errors, latencies and wrk's own CPU (share of a core)."""
    script = (
        _SCRIPT.replace("{SESSIONS}", _lua(sessions))
        .replace("{FILES}", str(files))
        .replace("{AUTH}", _lua(f"Bearer {token}"))
        .replace("{VERSION}", _lua(version))
        .replace("{SEED}", str(seed))
    )
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(script)
    try:
        argv = [
            "wrk",
            "-t1",
            f"-c{len(sessions)}",
            f"-d{seconds:.0f}s",
            "--timeout",
            "60s",
            "-s",
            f.name,
            base,
        ]
        before = _children_cpu()
        done = subprocess.run(argv, capture_output=True, check=False)
        cpu = _children_cpu() - before  # wrk's own: the only child reaped meanwhile
        out, err = done.stdout, done.stderr
    finally:
        Path(f.name).unlink()
    line = next((x for x in out.decode().splitlines() if x.startswith("WRK ")), None)
    if line is None:
        raise RuntimeError(f"wrk printed no summary: {out.decode()[-500:]} {err.decode()[-500:]}")
    got = json.loads(line[4:])
    wall = got["duration_us"] / 1e6
    return {
        "calls_per_s": (got["requests"] - got["answer_errors"]) / wall,
        "errors": got["answer_errors"] + got["socket_errors"],
        "generator_cpu": cpu / wall,
        "wall": wall,
        "p50_all": got["p50_us"] / 1e6,
        "p99_all": got["p99_us"] / 1e6,
        "stderr": err.decode()[-600:],
    }


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime

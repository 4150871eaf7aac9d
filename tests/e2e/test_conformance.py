"""The official MCP conformance suite against the real HTTP server.

- ``@modelcontextprotocol/conformance`` 0.1.16, every server scenario, against
  ``mcp-server-ide --http --plugin tests.conformance_fixtures`` (the suite's fixture names loaded
  through the same plugin option users get): every scenario must pass.
- The same suite against the server without plugins: the scenarios that need no fixture must pass.
- The 0.2.0 alpha with ``--spec-version 2026-07-28`` (stateless era: ``server/discover``,
  ``InputRequiredResult``, ``subscriptions/listen``, caching, header validation), with fixtures.

Each run takes a few seconds, so this is part of the default test run. Node 22 and the suite
install themselves into the test cache (tests/support/npm.py).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.support.npm import node, npm_bin

REPO = Path(__file__).resolve().parents[2]
FIXTURE_FREE = {
    "server-initialize",
    "logging-set-level",
    "ping",
    "completion-complete",
    "tools-list",
    "resources-list",
    "resources-subscribe",
    "resources-unsubscribe",
    "prompts-list",
    "dns-rebinding-protection",
    "server-sse-multiple-streams",
}


def run_suite(version: str, url: str, out: Path, *extra: str) -> dict[str, list[dict]]:
    node_bin = node(22)
    conformance = npm_bin("@modelcontextprotocol/conformance", version, "conformance", node_version=22)
    env = dict(os.environ)
    env["PATH"] = f"{node_bin.parent}{os.pathsep}{env.get('PATH', '')}"
    proc = subprocess.run(
        [str(conformance), "server", "--url", url, "--suite", "all", "-o", str(out), *extra],
        cwd=out.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    results: dict[str, list[dict]] = {}
    for checks in out.glob("*/checks.json"):
        name = re.sub(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z$", "", checks.parent.name.removeprefix("server-"))
        results[name] = json.loads(checks.read_text())
    assert results, f"the suite produced no results:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return results


def failures(results: dict[str, list[dict]], only: set[str] | None = None) -> dict[str, list[str]]:
    bad: dict[str, list[str]] = {}
    for scenario, checks in results.items():
        if only is not None and scenario not in only:
            continue
        failed = [f"{c['id']}: {c.get('errorMessage', '')}" for c in checks if c["status"] == "FAILURE"]
        if failed:
            bad[scenario] = failed
    return bad


@pytest.fixture
def fixture_env() -> dict[str, str]:
    path = os.environ.get("PYTHONPATH", "")
    return {"PYTHONPATH": f"{REPO}{os.pathsep}{path}" if path else str(REPO)}


def test_conformance_0_1_16_every_scenario_with_fixtures(ws_path, http_server, fixture_env, tmp_path):
    server = http_server(ws_path, "--plugin", "tests.conformance_fixtures", env=fixture_env)
    results = run_suite("0.1.16", server.mcp_url, tmp_path / "out")
    assert len(results) == 32, sorted(results)
    assert failures(results) == {}
    passed = sum(1 for checks in results.values() for c in checks if c["status"] == "SUCCESS")
    assert passed >= 44


def test_conformance_0_1_16_fixture_free_scenarios_without_plugins(ws_path, http_server, tmp_path):
    server = http_server(ws_path)
    results = run_suite("0.1.16", server.mcp_url, tmp_path / "out")
    assert set(results) >= FIXTURE_FREE
    assert failures(results, FIXTURE_FREE) == {}


def test_conformance_2026_07_28_alpha_with_fixtures(ws_path, http_server, fixture_env, tmp_path):
    server = http_server(ws_path, "--plugin", "tests.conformance_fixtures", env=fixture_env)
    results = run_suite("0.2.0-alpha.12", server.mcp_url, tmp_path / "out", "--spec-version", "2026-07-28")
    for scenario in (
        "server-stateless",
        "caching",
        "http-header-validation",
        "input-required-result-multi-round",
    ):
        assert scenario in results
    assert failures(results) == {}

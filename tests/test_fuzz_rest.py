"""schemathesis against the REST door (``POST /mcp/{tool}``, from ``GET /mcp/openapi.json``).

The real ``--http`` server runs sandboxed on a throwaway workspace beside an "outside" folder of
marker files; generated requests (valid and invalid bodies) go to every tool. Pass: no 5xx, no
request over :data:`~tests.support.restfuzz.REQUEST_TIMEOUT`, nothing outside changed, no
traceback, outside content or host path beside the workspace in any answer, the server alive with
a clean log. The default run sends a short budget; ``-m fuzz`` runs the full one
(``FUZZ_REST_REQUESTS``, default 100,000).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .support.fuzzing import TRACEBACK, Sandbox, budget, start_sandboxed_http, stop
from .support.restfuzz import run_rest_fuzz


def _fuzz_rest(tmp_path: Path, total: int, seed: int | None = None) -> None:
    box = Sandbox.create(tmp_path / "box")
    before = box.snapshot()
    server = start_sandboxed_http(box)
    try:
        figures = run_rest_fuzz(box, server.url, total, seed=seed)
        alive = server.process.poll() is None
    finally:
        stop(server)
    print(figures.summary())
    for line in figures.unavailable[:20]:
        print("  503:", line)
    assert figures.requests >= total
    assert len(figures.operations) >= 60, figures.operations  # every tool of the default set
    assert figures.server_errors == []
    assert figures.hangs == []
    assert figures.leaks == []
    assert alive, server.log()[-3000:]
    assert box.snapshot() == before, "a file outside the workspace changed"
    assert TRACEBACK not in server.log(), server.log()[-3000:]


def test_rest_fuzz_short_budget(tmp_path: Path) -> None:
    _fuzz_rest(tmp_path, budget("FUZZ_REST_SHORT", 150), seed=0)  # the same requests every run


@pytest.mark.fuzz
@pytest.mark.timeout(12 * 3600)
def test_rest_fuzz_full_budget(tmp_path: Path) -> None:
    _fuzz_rest(tmp_path, budget("FUZZ_REST_REQUESTS", 100_000))

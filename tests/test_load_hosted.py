"""The hosted service's load test, short: ``bench/load_hosted.py`` with 10 clients x 30 calls (locust
headless against one real worker): no call fails and every file a client wrote reads back as its
last write left it. The full run (100 clients x 1,000 calls) is the README's load command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_a_short_load_run_has_no_error_and_loses_no_write(tmp_path: Path):
    figures_path = tmp_path / "figures.json"
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "load_hosted.py"), "--clients", "10", "--calls", "30",
         "--json", str(figures_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert figures_path.exists(), run.stdout + run.stderr
    figures = json.loads(figures_path.read_text())
    assert figures["errors"] == 0, figures["first_errors"]
    assert figures["calls"] == 10 * 30, figures
    assert figures["sessions"] == 7  # 3 clients in 10 use the REST interface
    assert figures["writes"] > 0 and figures["writes_intact"] == figures["writes"], figures["write_problems"]
    assert run.returncode == 0, run.stdout + run.stderr

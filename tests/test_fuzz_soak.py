"""kill -9 mid-write through the REST door (tests/support/soak.py): every file wholly old or wholly
new, and no temp file left after the next start. Short budget in the default run; ``-m fuzz`` runs
``FUZZ_SOAK_TRIALS`` (default 1,000) with files up to 50 MB.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .support.fuzzing import Sandbox, budget
from .support.soak import MB, SoakFigures, run_soak


def _soak(tmp_path: Path, trials: int, max_size: int, big: bool) -> SoakFigures:
    box = Sandbox.create(tmp_path / "box")
    figures = run_soak(box, trials, max_size=max_size, big=big)
    print(figures.summary())
    for line in (figures.torn + figures.leftovers)[:10]:
        print("  ", line)
    assert figures.start_failures == [], figures.start_failures[0]
    assert figures.trials == trials
    assert figures.torn == []
    assert figures.leftovers == [], "temp files of killed writes outlived the next start's sweep"
    return figures


def test_kill_9_soak_short_budget(tmp_path: Path) -> None:
    _soak(tmp_path, budget("FUZZ_SOAK_SHORT", 4), max_size=4 * MB, big=False)


@pytest.mark.fuzz
@pytest.mark.timeout(24 * 3600)
def test_kill_9_soak_full_budget(tmp_path: Path) -> None:
    _soak(tmp_path, budget("FUZZ_SOAK_TRIALS", 1000), max_size=24 * MB, big=True)

"""The REST door under schemathesis: requests generated from ``GET /mcp/openapi.json`` across every
tool, valid and invalid bodies, each checked for a server error, a hang, a traceback or anything from
outside the workspace. One driver for the short run in the default suite and the full budget.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import GenerationMode

from .fuzzing import Sandbox

REQUEST_TIMEOUT = 60.0
"""Seconds one request may take before it counts as a hang (a language server's first start included)."""
PROGRESS_EVERY = 2000
DURATION_KEYS = ("waitMs", "timeout", "milliseconds")
DURATION_CAP = 1500
"""Generated waits and command timeouts are cut to this many ms, so a valid ``wait(600000)`` is not a hang."""


@dataclass
class RestFigures:
    requests: int = 0
    server_errors: list[str] = field(default_factory=list)
    hangs: list[str] = field(default_factory=list)
    leaks: list[str] = field(default_factory=list)
    unavailable: list[str] = field(default_factory=list)
    """503 answers: a part the tool needs is missing or still starting (the envelope says which)."""
    statuses: dict[int, int] = field(default_factory=dict)
    operations: set[str] = field(default_factory=set)
    seconds: float = 0.0

    started: float = field(default_factory=time.monotonic)

    def summary(self) -> str:
        seconds = self.seconds or time.monotonic() - self.started
        return (
            f"{self.requests} requests over {len(self.operations)} tools in {seconds:.0f} s; "
            f"statuses {dict(sorted(self.statuses.items()))}; {len(self.server_errors)} server errors, "
            f"{len(self.hangs)} hangs, {len(self.leaks)} leaks"
        )


def _harmless(body: Any) -> Any:
    """Cut positive waits and timeouts to :data:`DURATION_CAP` (wrong types and negatives stay)."""
    if isinstance(body, dict):
        for key in DURATION_KEYS:
            value = body.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool) and value > DURATION_CAP:
                body[key] = DURATION_CAP
    return body


def run_rest_fuzz(box: Sandbox, base_url: str, total: int, *, seed: int | None = None) -> RestFigures:
    """Send about ``total`` generated requests (at least one round over every tool) and tally them."""
    schema = schemathesis.openapi.from_url(base_url + "/mcp/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    figures = RestFigures()
    session = requests.Session()
    started = time.monotonic()
    modes = [GenerationMode.POSITIVE, GenerationMode.NEGATIVE]
    rounds = 0
    while figures.requests < total or rounds == 0:
        per_op = max(1, (total - figures.requests) // (len(operations) * len(modes)))
        before = figures.requests
        for op in operations:
            for mode in modes:
                _drive(op, mode, per_op, figures, box, base_url, session, seed)
        rounds += 1
        if figures.requests == before:
            break
    figures.seconds = time.monotonic() - started
    return figures


def _drive(
    op: Any,
    mode: GenerationMode,
    examples: int,
    figures: RestFigures,
    box: Sandbox,
    base_url: str,
    session: requests.Session,
    seed: int | None,
) -> None:
    strategy = op.as_strategy(generation_mode=mode)

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=seed is not None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
    )
    @given(case=strategy)
    def one(case: Any) -> None:
        case.body = _harmless(case.body)
        label = f"{op.path} {mode.value} {str(case.body)[:300]!r}"
        figures.operations.add(op.path)
        figures.requests += 1
        if figures.requests % PROGRESS_EVERY == 0:
            print(f"[rest fuzz] {figures.summary()}", flush=True)
        try:
            response = case.call(base_url=base_url, session=session, timeout=REQUEST_TIMEOUT)
        except requests.Timeout:
            figures.hangs.append(label)
            return
        except requests.ConnectionError as exc:
            figures.server_errors.append(f"{label}: connection failed: {exc}")
            return
        code = response.status_code
        figures.statuses[code] = figures.statuses.get(code, 0) + 1
        if code == 503:  # the envelope's "unavailable": kept apart, each with its message
            figures.unavailable.append(f"{label}: {response.text[:300]}")
        elif code >= 500:
            figures.server_errors.append(f"{label}: {code} {response.text[:300]}")
        for problem in box.problems_in(response.text):
            figures.leaks.append(f"{label}: {problem}")

    one()

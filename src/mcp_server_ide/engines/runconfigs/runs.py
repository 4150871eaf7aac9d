"""Running: a started run configuration is one job of the process engine, with its progress.

A plan of one step runs as that step's process; a larger plan runs as one job too, whose process
is the small step runner :mod:`..taskrun` (so the job's output, exit code, cancellation and
process-group containment cover every step).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ...workspace import Workspace
from ..failures import ToolFailure
from .configs import Configs, load
from .planner import Planner
from .plans import Plan, Step, flatten, plan_to_json

if TYPE_CHECKING:
    from ..processes import Job, Jobs
    from ..progress import ProgressItem

TASK_RUNNER = Path(__file__).parent.parent / "taskrun.py"
"""The step runner a plan of several steps runs as (a script, started with ``python -I``)."""


def kind_of(configs: Configs, name: str) -> str:
    """What ``name`` is: "launch configuration", "compound" or "task"."""
    if any(c["name"] == name for c in configs.launch):
        return "launch configuration"
    if any(c["name"] == name for c in configs.compounds):
        return "compound"
    return "task"


@dataclass
class Run:
    """One started run: its name and kind, its job, its step count and where its runner reports progress."""

    name: str
    kind: str
    job_id: str
    steps: int
    progress_path: Path | None


class Runs:
    """A workspace's started run configurations: each is one job of the process engine.

    A plan of one step is that step's process; a larger plan is the :mod:`.taskrun` step runner,
    which reports how many steps are done for ``get_progress_indicators``. A running job is never
    shown complete: once all its steps are done (the runner still reports how it ended and exits, the
    process engine still reaps it) it shows as indeterminate, "finishing", until the job ends.
    """

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.runs: dict[str, Run] = {}
        self._lock = threading.Lock()
        self._folder = ws.state_dir / "runs"

    def follow_roots(self, roots: list[Path]) -> bool:
        """Stays when the roots change: each run is a job, which the jobs service keeps or stops."""
        return True

    def prepare(self, name: str) -> tuple[Plan, str]:
        """The plan of ``name`` and what it is (checked and resolved; nothing starts)."""
        configs = load(self.ws)
        return Planner(self.ws, configs).plan(name), kind_of(configs, name)

    def start(self, name: str, prepared: tuple[Plan, str] | None = None, *, title: str | None = None) -> Job:
        """Start the configuration, compound or task ``name`` as a job; returns the job."""
        the_plan, kind = prepared or self.prepare(name)
        title = title or (f"Task: {name}" if kind == "task" else f"Run: {name}")
        return self.start_plan(the_plan, name=name, kind=kind, title=title)

    def start_plan(self, the_plan: Plan, *, name: str, kind: str, title: str) -> Job:
        """Start any plan (a run configuration, the detected test runners...) as one job."""
        from ..processes import Jobs

        jobs = self.ws.service(Jobs)
        progress_path: Path | None = None
        if isinstance(the_plan, Step):
            job = jobs.start(the_plan.final_argv(), cwd=the_plan.cwd, env=the_plan.env, title=title)
            steps = 1
        else:
            self._folder.mkdir(parents=True, exist_ok=True)
            token = secrets.token_hex(8)
            folder = self._folder
            if self.ws.policy.hosted:  # its sandbox sees this run's folder alone
                folder = self._folder / token
                folder.mkdir(mode=0o700)
            plan_path = folder / f"{token}.plan.json"
            progress_path = folder / f"{token}.progress.json"
            plan_path.write_text(json.dumps(plan_to_json(the_plan)), encoding="utf-8")
            os.chmod(plan_path, 0o600)
            runner = str(TASK_RUNNER)
            try:
                job = jobs.start(
                    [sys.executable, "-I", runner, str(plan_path), str(progress_path)],
                    cwd=str(self.ws.root),
                    title=title,
                    shared=(folder,) if folder != self._folder else (),
                )
            except BaseException:
                plan_path.unlink(missing_ok=True)
                raise
            steps = len(flatten(the_plan))
        with self._lock:
            self.runs[job.id] = Run(name, kind, job.id, steps, progress_path)
            self._forget_finished(jobs)
        return job

    def _forget_finished(self, jobs: Jobs) -> None:
        running = {j.id for j in jobs.list() if j.running}
        for job_id in [k for k in self.runs if k not in running][:-32]:
            run = self.runs.pop(job_id)
            if run.progress_path is not None:
                self._drop(run.progress_path)

    def _drop(self, progress: Path) -> None:
        """Remove a finished run's progress file (and its own folder, a hosted run's)."""
        progress.unlink(missing_ok=True)
        if progress.parent != self._folder:
            shutil.rmtree(progress.parent, ignore_errors=True)

    def running(self) -> list[tuple[Run, Job]]:
        from ..processes import Jobs

        jobs = self.ws.service(Jobs)
        with self._lock:
            runs = list(self.runs.values())
        out: list[tuple[Run, Job]] = []
        for run in runs:
            try:
                job = jobs.get(run.job_id)
            except ToolFailure:
                continue
            if job.running:
                out.append((run, job))
        return out

    def progress_items(self) -> list[ProgressItem]:
        from ..progress import item

        items: list[ProgressItem] = []
        for run, job in self.running():
            fraction = None
            message = job.command[:200]
            if run.progress_path is not None:
                try:
                    data = json.loads(run.progress_path.read_text(encoding="utf-8"))
                    done, total = int(data["done"]), max(1, int(data["total"]))
                    if done < total:
                        fraction = done / total
                        if data.get("running"):
                            message = "running: " + ", ".join(data["running"])
                    else:  # complete only when the job has ended: until then its end is not known
                        message = f"finishing: all {total} steps are done"
                except (OSError, ValueError, KeyError, TypeError):
                    fraction = 0.0
            items.append(
                item(
                    run.job_id,
                    job.title,
                    {"task": "task", "tests": "tests"}.get(run.kind, "run configuration"),
                    fraction=fraction,
                    cancellable=True,
                    message=message,
                    job_id=run.job_id,
                    elapsed_ms=job.duration_ms,
                )
            )
        return items

    def close(self) -> None:
        with self._lock:
            for run in self.runs.values():
                if run.progress_path is not None:
                    self._drop(run.progress_path)

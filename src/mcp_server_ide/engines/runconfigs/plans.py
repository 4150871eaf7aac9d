"""Plans: what a run configuration becomes before it runs.

A plan is a tree of process steps (:class:`Step`) grouped in sequence or in parallel
(:class:`Group`). :func:`plan_to_json` is the form the step runner :mod:`..taskrun` reads.
"""

from __future__ import annotations

import shlex
import shutil
from dataclasses import asdict, dataclass, field
from typing import Any, Literal


@dataclass
class Step:
    """One process: ``argv`` run directly, or ``shell`` (a command line) run by the shell."""

    label: str
    cwd: str
    env: dict[str, str] = field(default_factory=dict)
    argv: list[str] | None = None
    shell: str | None = None
    shell_argv: list[str] | None = None
    """A task's own shell (``options.shell``): the executable and its arguments before the command line."""

    def command_line(self) -> str:
        if self.shell is not None:
            return self.shell
        return shlex.join(self.argv or [])

    def final_argv(self) -> list[str]:
        if self.argv is not None:
            return list(self.argv)
        if self.shell_argv:
            return [*self.shell_argv, self.shell or ""]
        return [default_shell(), "-c", self.shell or ""]


@dataclass
class Group:
    label: str
    order: Literal["sequence", "parallel"]
    steps: list[Step | Group]


Plan = Step | Group


def flatten(plan: Plan) -> list[Step]:
    if isinstance(plan, Step):
        return [plan]
    return [s for child in plan.steps for s in flatten(child)]


def plan_to_json(plan: Plan) -> dict[str, Any]:
    if isinstance(plan, Step):
        data = asdict(plan)
        data["kind"] = "step"
        data["argv"] = plan.final_argv()
        return data
    return {
        "kind": "group",
        "label": plan.label,
        "order": plan.order,
        "steps": [plan_to_json(s) for s in plan.steps],
    }


def default_shell() -> str:
    return shutil.which("bash") or "/bin/sh"

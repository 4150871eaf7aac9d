"""Run configurations (moved into a package; split into modules by the next commit)."""

from .planner import Configs, Group, Plan, Planner, Runs, Step, flatten, load, names, project_python

__all__ = [
    "Configs",
    "Group",
    "Plan",
    "Planner",
    "Runs",
    "Step",
    "flatten",
    "load",
    "names",
    "project_python",
]

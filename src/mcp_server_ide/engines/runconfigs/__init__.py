"""Run configurations: ``.vscode/launch.json`` and ``.vscode/tasks.json``, read and run as VS Code does.

Modules: ``configs`` (reading the files: platform blocks, task defaults, names), ``variables``
(``${...}`` resolved as VS Code does), ``plans`` (a plan: process steps in sequence or in
parallel), ``planner`` (a configuration, compound or task made into a plan), ``env`` (``env`` maps
and ``envFile`` files), ``interpreter`` (the project's Python), ``runs`` (a started plan is one job
of the process engine, with its progress).
"""

from .configs import Configs, load, names
from .interpreter import project_python
from .planner import DebugTarget, Planner
from .plans import Group, Plan, Step, flatten
from .runs import Runs

__all__ = [
    "Configs",
    "DebugTarget",
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

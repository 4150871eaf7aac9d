"""Reading ``.vscode/launch.json`` and ``.vscode/tasks.json`` as VS Code does.

Both files are JSON with comments and trailing commas (:mod:`..jsonc`); platform blocks
(``"linux": {...}``) are merged in; ``tasks.json``'s top-level ``options`` are the tasks' defaults.
Names: launch configurations, then compounds, then tasks (by ``label``; npm tasks default to
``npm: <script>``). Entries marked hidden (``presentation.hidden``, ``hide``) are runnable but not listed.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...workspace import Workspace
from .. import jsonc
from ..failures import ToolFailure

LAUNCH = ".vscode/launch.json"
TASKS = ".vscode/tasks.json"
SETTINGS = ".vscode/settings.json"
PLATFORM_KEY = {"win32": "windows", "darwin": "osx"}.get(sys.platform, "linux")

JsonObject = dict[str, Any]
"""An object read from one of the files (values are whatever JSON holds)."""


@dataclass
class Configs:
    """A workspace's run configurations as read (platform blocks merged, task defaults applied)."""

    launch: list[JsonObject]
    compounds: list[JsonObject]
    tasks: list[JsonObject]
    inputs: dict[str, JsonObject]
    problems: list[str]

    def names(self) -> list[str]:
        names: list[str] = []
        for item in self.launch:
            if not (item.get("presentation") or {}).get("hidden"):
                names.append(item["name"])
        for item in self.compounds:
            if not (item.get("presentation") or {}).get("hidden"):
                names.append(item["name"])
        for item in self.tasks:
            if not item.get("hide"):
                names.append(item["label"])
        return list(dict.fromkeys(names))  # each name once, in the order first seen

    def task(self, label: str) -> JsonObject | None:
        return next((t for t in self.tasks if t["label"] == label), None)


def read_jsonc(ws: Workspace, rel: str) -> JsonObject | None:
    """The object in the JSON-with-comments file ``rel``, or None when it is absent or empty."""
    path = ws.root / rel
    real = Path(os.path.realpath(path))
    if not real.is_relative_to(ws.root) or not real.is_file():
        return None
    from .. import sandbox, textio

    try:
        text = textio.read_text(sandbox.resolve(ws, rel)).text
    except ToolFailure as exc:
        raise ToolFailure(f"cannot read {rel}: {exc}", kind="invalid") from None
    try:
        data = jsonc.loads(text)
    except jsonc.JsoncError as exc:
        raise ToolFailure(
            f"invalid {rel}: {exc} (VS Code reads it as JSON with comments and trailing commas)",
            kind="invalid",
        ) from None
    if data is None:
        return None
    if not isinstance(data, dict):
        raise ToolFailure(f"invalid {rel}: the top level must be an object", kind="invalid")
    return data


def _platform_merged(item: JsonObject) -> JsonObject:
    merged = {k: v for k, v in item.items() if k not in ("windows", "osx", "linux")}
    extra = item.get(PLATFORM_KEY)
    if isinstance(extra, dict):
        for key, value in extra.items():
            if key == "options" and isinstance(value, dict) and isinstance(merged.get("options"), dict):
                merged["options"] = {**merged["options"], **value}
            else:
                merged[key] = value
    return merged


def load(ws: Workspace) -> Configs:
    """Read ``launch.json`` and ``tasks.json`` (either may be missing)."""
    launch_data = read_jsonc(ws, LAUNCH) or {}
    tasks_data = read_jsonc(ws, TASKS) or {}
    problems: list[str] = []
    launch: list[JsonObject] = []
    for item in as_list(launch_data.get("configurations")):
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            launch.append(_platform_merged(item))
    compounds = [
        item
        for item in as_list(launch_data.get("compounds"))
        if isinstance(item, dict) and isinstance(item.get("name"), str)
    ]
    defaults = _platform_merged(tasks_data)
    top_options = defaults.get("options") if isinstance(defaults.get("options"), dict) else {}
    tasks: list[JsonObject] = []
    for item in as_list(tasks_data.get("tasks")):
        if not isinstance(item, dict):
            continue
        task = _platform_merged(item)
        if top_options:
            task["options"] = {**top_options, **(task.get("options") or {})}
            if isinstance(top_options.get("env"), dict) and isinstance(
                (item.get("options") or {}).get("env"), dict
            ):
                task["options"]["env"] = {**top_options["env"], **item["options"]["env"]}
        label = task.get("label") or task.get("taskName")
        if not label and task.get("type") == "npm" and task.get("script"):
            label = f"npm: {task['script']}" + (f" - {task['path']}" if task.get("path") else "")
        if not label and isinstance(task.get("command"), str):
            label = task["command"]
        if not isinstance(label, str) or not label:
            problems.append("a task without a label was skipped")
            continue
        task["label"] = label
        tasks.append(task)
    inputs: dict[str, JsonObject] = {}
    for source in (tasks_data, launch_data):
        for item in as_list(source.get("inputs")):
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                inputs.setdefault(item["id"], item)
    return Configs(launch, compounds, tasks, inputs, problems)


def as_list(value: object) -> list[Any]:
    """``value`` when it is a list, else an empty list (a malformed entry reads as none)."""
    return value if isinstance(value, list) else []


def names(ws: Workspace) -> list[str]:
    """The names a person can run: launch configurations, compounds, then tasks (hidden ones left out)."""
    return load(ws).names()

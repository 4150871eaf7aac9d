"""Run configurations: ``.vscode/launch.json`` and ``.vscode/tasks.json``, read and run as VS Code does.

- Both files are JSON with comments and trailing commas (:mod:`.jsonc`); platform blocks
  (``"linux": {...}``) are merged in; ``tasks.json``'s top-level ``options`` are the tasks' defaults.
- Names: launch configurations, then compounds, then tasks (by ``label``; npm tasks default to
  ``npm: <script>``). Entries marked hidden (``presentation.hidden``, ``hide``) are runnable
  but not listed.
- Variables are resolved when a configuration runs: ``${workspaceFolder}``, ``${workspaceFolder:name}``,
  ``${workspaceFolderBasename}``, ``${file}``, ``${relativeFile}``, ``${relativeFileDirname}``,
  ``${fileBasename}``, ``${fileBasenameNoExtension}``, ``${fileExtname}``, ``${fileDirname}``,
  ``${fileDirnameBasename}``, ``${fileWorkspaceFolder}``, ``${lineNumber}``, ``${selectedText}``
  (from the editor's active file), ``${cwd}``, ``${pathSeparator}`` / ``${/}``, ``${env:NAME}``,
  ``${config:section.key}`` (from ``.vscode/settings.json``) and ``${input:id}`` (an input's
  ``default``). A variable that cannot be resolved fails the run and is named.
- Running: a configuration becomes a plan of process steps, in sequence or in parallel
  (``dependsOn`` with ``dependsOrder``, ``preLaunchTask``, compounds). A plan of one step runs as
  one job of the process engine; a larger plan runs as one job too, whose process is the small
  step runner :mod:`.taskrun` (so the job's output, exit code, cancellation and process-group
  containment cover every step).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shlex
import shutil
import sys
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from ...workspace import Workspace
from .. import jsonc
from ..failures import ToolFailure

LAUNCH = ".vscode/launch.json"
TASKS = ".vscode/tasks.json"
SETTINGS = ".vscode/settings.json"
PLATFORM_KEY = {"win32": "windows", "darwin": "osx"}.get(sys.platform, "linux")
RUNNABLE_LAUNCH_TYPES = ("debugpy", "python", "node", "pwa-node", "node-terminal")
RUNNABLE_TASK_TYPES = ("shell", "process", "npm")
LAUNCH_KEYS = (
    "program", "module", "args", "cwd", "env", "envFile", "python", "pythonPath", "pythonArgs",
    "runtimeExecutable", "runtimeArgs", "command",
)  # fmt: skip


# ----------------------------------------------------------------------------- plans


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


# ----------------------------------------------------------------------------- reading the files


@dataclass
class Configs:
    launch: list[dict[str, Any]]
    compounds: list[dict[str, Any]]
    tasks: list[dict[str, Any]]
    inputs: dict[str, dict[str, Any]]
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
        seen: set[str] = set()
        return [n for n in names if not (n in seen or seen.add(n))]  # type: ignore[func-returns-value]

    def task(self, label: str) -> dict[str, Any] | None:
        return next((t for t in self.tasks if t["label"] == label), None)


def _read_jsonc(ws: Workspace, rel: str) -> dict[str, Any] | None:
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


def _platform_merged(item: dict[str, Any]) -> dict[str, Any]:
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
    launch_data = _read_jsonc(ws, LAUNCH) or {}
    tasks_data = _read_jsonc(ws, TASKS) or {}
    problems: list[str] = []
    launch: list[dict[str, Any]] = []
    for item in _list(launch_data.get("configurations")):
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            launch.append(_platform_merged(item))
    compounds = [
        item
        for item in _list(launch_data.get("compounds"))
        if isinstance(item, dict) and isinstance(item.get("name"), str)
    ]
    defaults = _platform_merged(tasks_data)
    top_options = defaults.get("options") if isinstance(defaults.get("options"), dict) else {}
    tasks: list[dict[str, Any]] = []
    for item in _list(tasks_data.get("tasks")):
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
    inputs: dict[str, dict[str, Any]] = {}
    for source in (tasks_data, launch_data):
        for item in _list(source.get("inputs")):
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                inputs.setdefault(item["id"], item)
    return Configs(launch, compounds, tasks, inputs, problems)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def names(ws: Workspace) -> list[str]:
    return load(ws).names()


# ----------------------------------------------------------------------------- variables

_VAR = re.compile(r"\$\{([^}]*)\}")


class Variables:
    """Resolves ``${...}`` as VS Code does, for one run."""

    def __init__(self, ws: Workspace, inputs: dict[str, dict[str, Any]]) -> None:
        self.ws = ws
        self.inputs = inputs
        self._settings: dict[str, Any] | None = None
        self._editor: tuple[Path | None, int, str] | None = None

    def settings(self) -> dict[str, Any]:
        if self._settings is None:
            try:
                self._settings = _read_jsonc(self.ws, SETTINGS) or {}
            except ToolFailure:
                self._settings = {}
        return self._settings

    def _active(self) -> tuple[Path | None, int, str]:
        if self._editor is None:
            from ..editor import editor_for

            backend = editor_for(self.ws)
            doc = None
            try:
                doc = backend.active()
            except ToolFailure:
                doc = None
            if doc is None:
                self._editor = (None, 0, "")
            else:
                sel = doc.selection
                lines = doc.text.split("\n")
                start = sum(len(x) + 1 for x in lines[: sel.start.line]) + sel.start.character
                end = sum(len(x) + 1 for x in lines[: sel.end.line]) + sel.end.character
                self._editor = (doc.path, sel.active.line + 1, doc.text[start:end])
        return self._editor

    def _file(self, name: str) -> Path:
        path = self._active()[0]
        if path is None:
            raise ToolFailure(
                f"cannot resolve ${{{name}}}: no file is open in the editor (open one with open_file_in_editor, "
                "as VS Code needs an open editor for this variable)",
                kind="invalid",
            )
        return path

    def _root_of(self, path: Path) -> Path:
        return next((r for r in self.ws.roots if path.is_relative_to(r)), self.ws.root)

    def value(self, name: str) -> str:
        ws = self.ws
        if name == "workspaceFolder" or name == "workspaceRoot":
            return str(ws.root)
        if name.startswith("workspaceFolder:"):
            wanted = name.split(":", 1)[1]
            for root in ws.roots:
                if root.name == wanted:
                    return str(root)
            raise ToolFailure(
                f"cannot resolve ${{{name}}}: no workspace folder is named {wanted!r}", kind="invalid"
            )
        if name == "workspaceFolderBasename":
            return ws.root.name
        if name in ("cwd",):
            return str(ws.root)
        if name in ("pathSeparator", "/"):
            return os.sep
        if name == "execPath":
            return sys.executable
        if name == "defaultBuildTask":
            raise ToolFailure(f"cannot resolve ${{{name}}} headless", kind="invalid")
        if name.startswith("env:"):
            # The environment a child would see: the server's own secrets never reach a command line.
            from ..processes import child_env

            return child_env().get(name[4:], "")
        if name.startswith("config:"):
            key = name[7:]
            settings = self.settings()
            if key in settings:
                return _as_text(settings[key])
            node: Any = settings
            for part in key.split("."):
                if not isinstance(node, dict) or part not in node:
                    raise ToolFailure(
                        f"cannot resolve ${{{name}}}: {key!r} is not set in {SETTINGS}", kind="invalid"
                    )
                node = node[part]
            return _as_text(node)
        if name.startswith("input:"):
            item = self.inputs.get(name[6:])
            if item is None:
                raise ToolFailure(
                    f"cannot resolve ${{{name}}}: no input has the id {name[6:]!r}", kind="invalid"
                )
            if "default" in item:
                return _as_text(item["default"])
            if item.get("type") == "pickString" and item.get("options"):
                first = item["options"][0]
                return _as_text(first.get("value") if isinstance(first, dict) else first)
            raise ToolFailure(
                f'cannot resolve ${{{name}}}: the input asks a person and has no default (give it a "default")',
                kind="invalid",
            )
        if name.startswith("command:"):
            raise ToolFailure(
                f"cannot resolve ${{{name}}}: VS Code commands are not available headless "
                "(replace it with a value or an ${input:...} with a default)",
                kind="invalid",
            )
        if name == "lineNumber":
            self._file(name)
            return str(self._active()[1])
        if name == "selectedText":
            self._file(name)
            return self._active()[2]
        if name in _FILE_VARIABLES:
            path = self._file(name)
            root = self._root_of(path)
            return _FILE_VARIABLES[name](path, root)
        raise ToolFailure(f"cannot resolve ${{{name}}}: unknown variable", kind="invalid")

    def resolve(self, value: Any) -> Any:
        if isinstance(value, str):
            return _VAR.sub(lambda m: self.value(m.group(1)), value)
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if isinstance(value, dict):
            return {k: self.resolve(v) for k, v in value.items()}
        return value


def _rel_dir(path: Path, root: Path) -> str:
    rel = os.path.relpath(path.parent, root)
    return "" if rel == "." else rel


_FILE_VARIABLES = {
    "file": lambda p, r: str(p),
    "fileWorkspaceFolder": lambda p, r: str(r),
    "relativeFile": lambda p, r: os.path.relpath(p, r),
    "relativeFileDirname": _rel_dir,
    "fileBasename": lambda p, r: p.name,
    "fileBasenameNoExtension": lambda p, r: p.stem if p.suffix else p.name,
    "fileExtname": lambda p, r: p.suffix,
    "fileDirname": lambda p, r: str(p.parent),
    "fileDirnameBasename": lambda p, r: p.parent.name,
}


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value) if isinstance(value, (list, dict)) else str(value)


# ----------------------------------------------------------------------------- making plans


class Planner:
    def __init__(self, ws: Workspace, configs: Configs) -> None:
        self.ws = ws
        self.configs = configs
        self.vars = Variables(ws, configs.inputs)

    def plan(self, name: str) -> Plan:
        for item in self.configs.launch:
            if item["name"] == name:
                return self._launch(item)
        for item in self.configs.compounds:
            if item["name"] == name:
                return self._compound(item)
        task = self.configs.task(name)
        if task is not None:
            return self._task(task, ())
        available = self.configs.names()
        listed = (
            ", ".join(repr(n) for n in available[:20])
            or "none: there is no .vscode/launch.json or tasks.json"
        )
        raise ToolFailure(
            f"not found: no run configuration is named {name!r} (available: {listed}; see get_run_configurations)",
            kind="not_found",
        )

    # -- tasks -------------------------------------------------------------------------

    def _task(self, task: dict[str, Any], chain: tuple[str, ...]) -> Plan:
        label = task["label"]
        if label in chain:
            raise ToolFailure(
                f"invalid {TASKS}: dependsOn makes a cycle ({' -> '.join([*chain, label])})", kind="invalid"
            )
        deps = self._depends(task, (*chain, label))
        has_own = bool(task.get("command")) or task.get("type") not in (None, "shell", "process")
        own = self._task_step(task) if has_own else None
        if own is None and not deps:
            raise ToolFailure(
                f"invalid {TASKS}: task {label!r} has no command and no dependsOn", kind="invalid"
            )
        if not deps:
            assert own is not None
            return own
        order: Literal["sequence", "parallel"] = (
            "sequence" if task.get("dependsOrder") == "sequence" else "parallel"
        )
        if own is None:
            return Group(label, order, deps)
        dep_group: Plan = deps[0] if len(deps) == 1 else Group(f"{label} (dependencies)", order, deps)
        return Group(label, "sequence", [dep_group, own])

    def _depends(self, task: dict[str, Any], chain: tuple[str, ...]) -> list[Plan]:
        raw = task.get("dependsOn")
        if raw is None:
            return []
        items = raw if isinstance(raw, list) else [raw]
        plans: list[Plan] = []
        for item in items:
            dep = self._find_dependency(item, task["label"])
            plans.append(self._task(dep, chain))
        return plans

    def _find_dependency(self, item: Any, owner: str) -> dict[str, Any]:
        if isinstance(item, str):
            found = self.configs.task(item)
            if found is None:
                raise ToolFailure(
                    f"invalid {TASKS}: task {owner!r} depends on {item!r}, which is not a task", "invalid"
                )
            return found
        if isinstance(item, dict):
            if isinstance(item.get("task"), str):
                return self._find_dependency(item["task"], owner)
            if item.get("type") == "npm" and item.get("script"):
                for t in self.configs.tasks:
                    if t.get("type") == "npm" and t.get("script") == item["script"]:
                        return t
                return {"label": f"npm: {item['script']}", "type": "npm", "script": item["script"]}
        raise ToolFailure(
            f"invalid {TASKS}: task {owner!r} has a dependsOn entry this server cannot read", "invalid"
        )

    def _task_step(self, task: dict[str, Any]) -> Step:
        task = self._resolved(task, ("command", "args", "options", "script", "path"))
        label = task["label"]
        kind = task.get("type", "process" if task.get("isShellCommand") is False else "shell")
        options = task.get("options") if isinstance(task.get("options"), dict) else {}
        cwd = self._cwd(options.get("cwd"), f"task {label!r}")
        env = _env_map(options.get("env"), f"task {label!r}")
        if kind == "npm":
            script = task.get("script")
            if not isinstance(script, str):
                raise ToolFailure(f"invalid {TASKS}: npm task {label!r} has no script", kind="invalid")
            if task.get("path"):
                cwd = self._cwd(os.path.join(str(self.ws.root), task["path"]), f"task {label!r}")
            return Step(label, cwd, env, argv=["npm", "run", script])
        if kind not in ("shell", "process"):
            raise ToolFailure(
                f"cannot run task {label!r}: its type {kind!r} needs a VS Code extension; this server runs tasks of "
                f"the types {', '.join(RUNNABLE_TASK_TYPES)}",
                kind="unavailable",
            )
        command = task.get("command")
        if isinstance(command, dict):  # {"value": ..., "quoting": ...}
            command = command.get("value")
        if not isinstance(command, str) or not command:
            raise ToolFailure(f"invalid {TASKS}: task {label!r} has no command", kind="invalid")
        args = [_arg_value(a) for a in _list(task.get("args"))]
        if kind == "process":
            return Step(label, cwd, env, argv=[command, *args])
        line = command if not args else " ".join([_shell_quote(command), *(_shell_quote(a) for a in args)])
        shell_opt = options.get("shell") if isinstance(options.get("shell"), dict) else None
        shell_argv = None
        if shell_opt and isinstance(shell_opt.get("executable"), str):
            extra = [str(a) for a in _list(shell_opt.get("args"))] or ["-c"]
            shell_argv = [shell_opt["executable"], *extra]
        return Step(label, cwd, env, shell=line, shell_argv=shell_argv)

    # -- launch configurations ------------------------------------------------------------

    def _launch(self, item: dict[str, Any]) -> Plan:
        step = self._launch_step(item)
        pre = item.get("preLaunchTask")
        if isinstance(pre, str) and pre:
            task = self.configs.task(pre)
            if task is None:
                raise ToolFailure(
                    f"invalid {LAUNCH}: {item['name']!r} has the preLaunchTask {pre!r}, which is not a task in {TASKS}",
                    kind="invalid",
                )
            return Group(item["name"], "sequence", [self._task(task, ()), step])
        return step

    def _launch_step(self, item: dict[str, Any]) -> Step:
        name = item["name"]
        kind = item.get("type")
        if kind not in RUNNABLE_LAUNCH_TYPES:
            raise ToolFailure(
                f"cannot run {name!r}: launch configurations of type {kind!r} need a debugger extension; this server "
                f"runs the types {', '.join(RUNNABLE_LAUNCH_TYPES)} headless (without debugging)",
                kind="unavailable",
            )
        if item.get("request", "launch") != "launch":
            raise ToolFailure(
                f"cannot run {name!r}: it is an {item.get('request')!r} configuration (it attaches a debugger to a "
                'running program); only "launch" configurations run headless',
                kind="unavailable",
            )
        item = self._resolved(item, LAUNCH_KEYS)
        where = f"launch configuration {name!r}"
        cwd = self._cwd(item.get("cwd"), where)
        env: dict[str, str] = {}
        env_file = item.get("envFile")
        if not env_file and kind in ("python", "debugpy") and (self.ws.root / ".env").is_file():
            env_file = str(self.ws.root / ".env")
        if env_file:
            env.update(_read_env_file(self.ws, env_file, where))
        env.update(_env_map(item.get("env"), where))
        args = item.get("args", [])
        args = shlex.split(args) if isinstance(args, str) else [str(a) for a in _list(args)]
        if kind in ("python", "debugpy"):
            python = self._python(item)
            head = [python, *[str(a) for a in _list(item.get("pythonArgs"))]]
            if item.get("module"):
                return Step(name, cwd, env, argv=[*head, "-m", str(item["module"]), *args])
            if item.get("program"):
                return Step(name, cwd, env, argv=[*head, str(item["program"]), *args])
            raise ToolFailure(
                f'invalid {LAUNCH}: {name!r} has neither "program" nor "module"', kind="invalid"
            )
        if kind == "node-terminal":
            command = item.get("command")
            if not isinstance(command, str) or not command:
                raise ToolFailure(
                    f'invalid {LAUNCH}: {name!r} (node-terminal) has no "command"', kind="invalid"
                )
            return Step(name, cwd, env, shell=command)
        runtime = item.get("runtimeExecutable") or "node"
        runtime_args = [str(a) for a in _list(item.get("runtimeArgs"))]
        program = item.get("program")
        if not program and runtime == "node":
            raise ToolFailure(f'invalid {LAUNCH}: {name!r} (node) has no "program"', kind="invalid")
        argv = [str(runtime), *runtime_args]
        if program:
            argv.append(str(program))
        return Step(name, cwd, env, argv=[*argv, *args])

    def _python(self, item: dict[str, Any]) -> str:
        for key in ("python", "pythonPath"):
            if isinstance(item.get(key), str) and item[key]:
                return item[key]
        return project_python(self.ws, self.vars)

    def _compound(self, item: dict[str, Any]) -> Plan:
        members: list[Plan] = []
        for entry in _list(item.get("configurations")):
            wanted = (
                entry if isinstance(entry, str) else entry.get("name") if isinstance(entry, dict) else None
            )
            config = next((c for c in self.configs.launch if c["name"] == wanted), None)
            if config is None:
                raise ToolFailure(
                    f"invalid {LAUNCH}: compound {item['name']!r} names {wanted!r}, which is not a configuration",
                    kind="invalid",
                )
            members.append(self._launch(config))
        if not members:
            raise ToolFailure(
                f"invalid {LAUNCH}: compound {item['name']!r} has no configurations", kind="invalid"
            )
        group = Group(item["name"], "parallel", members)
        pre = item.get("preLaunchTask")
        if isinstance(pre, str) and pre:
            task = self.configs.task(pre)
            if task is None:
                raise ToolFailure(
                    f"invalid {LAUNCH}: compound {item['name']!r} has an unknown preLaunchTask {pre!r}"
                )
            return Group(item["name"], "sequence", [self._task(task, ()), group])
        return group

    def _resolved(self, item: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
        """``item`` with the variables of the keys it runs with resolved (others are left alone, so a
        variable in a field this server does not use never fails a run)."""
        return {**item, **self.vars.resolve({k: item[k] for k in keys if k in item})}

    def _cwd(self, value: Any, where: str) -> str:
        from .. import sandbox

        if value in (None, ""):
            return str(self.ws.root)
        if not isinstance(value, str):
            raise ToolFailure(f"invalid {where}: cwd must be a string", kind="invalid")
        try:
            resolved = sandbox.resolve(self.ws, value)
        except ToolFailure:
            raise ToolFailure(
                f"refused: the cwd of {where} is outside the workspace (rule: commands run inside the workspace)",
                kind="refused",
            ) from None
        if not resolved.path.is_dir():
            raise ToolFailure(
                f"invalid {where}: its cwd {resolved.display_rel!r} is not a folder", kind="invalid"
            )
        return str(resolved.path)


def project_python(ws: Workspace, variables: Variables | None = None) -> str:
    """The project's Python, as the VS Code Python extension would pick it: the configured interpreter
    (``python.defaultInterpreterPath``), else the workspace's ``.venv`` / ``venv``, else ``python3`` on PATH."""
    variables = variables or Variables(ws, {})
    settings = variables.settings()
    configured = settings.get("python.defaultInterpreterPath") or settings.get("python.pythonPath")
    if isinstance(configured, str) and configured:
        return variables.resolve(configured)
    for rel in (".venv/bin/python", "venv/bin/python", ".venv/Scripts/python.exe"):
        candidate = ws.root / rel
        if candidate.exists():
            return str(candidate)
    return shutil.which("python3") or shutil.which("python") or sys.executable


def _arg_value(arg: Any) -> str:
    if isinstance(arg, dict):
        return str(arg.get("value", ""))
    return str(arg)


def _shell_quote(arg: str) -> str:
    """VS Code's default quoting for shell task arguments: only arguments with whitespace are quoted."""
    if arg and not any(c.isspace() for c in arg):
        return arg
    return shlex.quote(arg)


def _env_map(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ToolFailure(f"invalid {where}: env must be an object of names to strings", kind="invalid")
    for name in value:
        if not _ENV_NAME.match(str(name)):
            raise ToolFailure(
                f"invalid {where}: {name!r} is not an environment variable name", kind="invalid"
            )
    return {str(k): _as_text(v) if v is not None else "" for k, v in value.items()}


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _read_env_file(ws: Workspace, path: str, where: str) -> dict[str, str]:
    from .. import sandbox, textio

    try:
        resolved = sandbox.resolve(ws, path)
    except ToolFailure:
        raise ToolFailure(
            f"refused: the envFile of {where} is outside the workspace", kind="refused"
        ) from None
    if not resolved.path.is_file():
        return {}
    env: dict[str, str] = {}
    for raw in textio.read_text(resolved).text.split("\n"):
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        if line.startswith("export "):
            line = line[7:]
        key, _, value = line.partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        env[key.strip()] = value
    return env


def plan(ws: Workspace, name: str) -> Plan:
    """The plan of the configuration, compound or task called ``name`` (variables resolved)."""
    return Planner(ws, load(ws)).plan(name)


# ----------------------------------------------------------------------------- running


def kind_of(configs: Configs, name: str) -> str:
    if any(c["name"] == name for c in configs.launch):
        return "launch configuration"
    if any(c["name"] == name for c in configs.compounds):
        return "compound"
    return "task"


@dataclass
class Run:
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

    def prepare(self, name: str) -> tuple[Plan, str]:
        """The plan of ``name`` and what it is (checked and resolved; nothing starts)."""
        configs = load(self.ws)
        return Planner(self.ws, configs).plan(name), kind_of(configs, name)

    def start(self, name: str, prepared: tuple[Plan, str] | None = None, *, title: str | None = None) -> Any:
        """Start the configuration, compound or task ``name`` as a job; returns the job."""
        the_plan, kind = prepared or self.prepare(name)
        title = title or (f"Task: {name}" if kind == "task" else f"Run: {name}")
        return self.start_plan(the_plan, name=name, kind=kind, title=title)

    def start_plan(self, the_plan: Plan, *, name: str, kind: str, title: str) -> Any:
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
            plan_path = self._folder / f"{token}.plan.json"
            progress_path = self._folder / f"{token}.progress.json"
            plan_path.write_text(json.dumps(plan_to_json(the_plan)), encoding="utf-8")
            os.chmod(plan_path, 0o600)
            runner = str(Path(__file__).parent.parent / "taskrun.py")
            try:
                job = jobs.start(
                    [sys.executable, "-I", runner, str(plan_path), str(progress_path)],
                    cwd=str(self.ws.root),
                    title=title,
                )
            except BaseException:
                plan_path.unlink(missing_ok=True)
                raise
            steps = len(flatten(the_plan))
        with self._lock:
            self.runs[job.id] = Run(name, kind, job.id, steps, progress_path)
            self._forget_finished(jobs)
        return job

    def _forget_finished(self, jobs: Any) -> None:
        running = {j.id for j in jobs.list() if j.running}
        for job_id in [k for k in self.runs if k not in running][:-32]:
            run = self.runs.pop(job_id)
            if run.progress_path is not None:
                run.progress_path.unlink(missing_ok=True)

    def running(self) -> list[tuple[Run, Any]]:
        from ..processes import Jobs

        jobs = self.ws.service(Jobs)
        with self._lock:
            runs = list(self.runs.values())
        out = []
        for run in runs:
            try:
                job = jobs.get(run.job_id)
            except ToolFailure:
                continue
            if job.running:
                out.append((run, job))
        return out

    def progress_items(self) -> list[Any]:
        from ..progress import item

        items = []
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
                    run.progress_path.unlink(missing_ok=True)

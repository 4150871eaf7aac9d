"""Making plans: a launch configuration, compound or task becomes a :data:`.plans.Plan`.

Steps run in sequence or in parallel (``dependsOn`` with ``dependsOrder``, ``preLaunchTask``,
compounds); variables are resolved (:mod:`.variables`) in the fields a step runs with, and a
configuration this server cannot run headless is refused with the reason.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from typing import Any, Literal

from ...workspace import Workspace
from ..failures import ToolFailure
from .configs import LAUNCH, TASKS, Configs, JsonObject, as_list, load
from .env import env_map, read_env_file
from .interpreter import project_python
from .plans import Group, Plan, Step
from .variables import Variables

RUNNABLE_LAUNCH_TYPES = ("debugpy", "python", "node", "pwa-node", "node-terminal")
RUNNABLE_TASK_TYPES = ("shell", "process", "npm")
LAUNCH_KEYS = (
    "program", "module", "args", "cwd", "env", "envFile", "python", "pythonPath", "pythonArgs",
    "runtimeExecutable", "runtimeArgs", "command",
)  # fmt: skip


ATTACH_KEYS = ("connect", "host", "port", "processId", "pathMappings", "justMyCode")


@dataclass
class DebugTarget:
    """A launch configuration made ready for a debug adapter: its resolved item, what to launch (the
    program or module, args, cwd, env, interpreter: ``launch``; None for ``attach``) and the plan of its
    ``preLaunchTask`` (None without one)."""

    name: str
    kind: str
    request: str
    item: JsonObject
    launch: dict[str, Any] | None
    pre_launch: Plan | None


class Planner:
    """Makes the plan of one name in ``configs`` (variables resolved for this run)."""

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

    def debug_target(self, name: str) -> DebugTarget:
        """The launch configuration ``name`` made ready for a debugger (variables resolved, cwd checked)."""
        item = next((c for c in self.configs.launch if c["name"] == name), None)
        if item is None:
            self.plan(name)  # not found: its error lists the names
            raise ToolFailure(
                f"invalid configuration: {name!r} is a compound or a task; only launch configurations run "
                "under the debugger (start it with run_configuration)",
                kind="invalid",
            )
        pre = item.get("preLaunchTask")
        pre_plan: Plan | None = None
        if isinstance(pre, str) and pre:
            task = self.configs.task(pre)
            if task is None:
                raise ToolFailure(
                    f"invalid {LAUNCH}: {name!r} has the preLaunchTask {pre!r}, which is not a task in {TASKS}",
                    kind="invalid",
                )
            pre_plan = self._task(task, ())
        request = str(item.get("request", "launch"))
        kind = str(item.get("type"))
        if request == "attach":
            return DebugTarget(name, kind, request, self._resolved(item, ATTACH_KEYS), None, pre_plan)
        step = self._launch_step(item)
        item = self._resolved(item, LAUNCH_KEYS)
        args = item.get("args", [])
        args = shlex.split(args) if isinstance(args, str) else [str(a) for a in as_list(args)]
        launch: dict[str, Any] = {"cwd": step.cwd, "env": step.env, "args": args}
        if kind in ("python", "debugpy"):
            launch["python"] = [self._python(item), *[str(a) for a in as_list(item.get("pythonArgs"))]]
            if item.get("module"):
                launch["module"] = str(item["module"])
            else:
                launch["program"] = str(item["program"])
        return DebugTarget(name, kind, request, item, launch, pre_plan)

    # -- tasks -------------------------------------------------------------------------

    def _task(self, task: JsonObject, chain: tuple[str, ...]) -> Plan:
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

    def _depends(self, task: JsonObject, chain: tuple[str, ...]) -> list[Plan]:
        raw = task.get("dependsOn")
        if raw is None:
            return []
        items = raw if isinstance(raw, list) else [raw]
        plans: list[Plan] = []
        for item in items:
            dep = self._find_dependency(item, task["label"])
            plans.append(self._task(dep, chain))
        return plans

    def _find_dependency(self, item: object, owner: str) -> JsonObject:
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

    def _task_step(self, task: JsonObject) -> Step:
        task = self._resolved(task, ("command", "args", "options", "script", "path"))
        label = task["label"]
        kind = task.get("type", "process" if task.get("isShellCommand") is False else "shell")
        raw_options = task.get("options")
        options: JsonObject = raw_options if isinstance(raw_options, dict) else {}
        cwd = self._cwd(options.get("cwd"), f"task {label!r}")
        env = env_map(options.get("env"), f"task {label!r}")
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
        args = [_arg_value(a) for a in as_list(task.get("args"))]
        if kind == "process":
            return Step(label, cwd, env, argv=[command, *args])
        line = command if not args else " ".join([_shell_quote(command), *(_shell_quote(a) for a in args)])
        raw_shell = options.get("shell")
        shell_opt: JsonObject | None = raw_shell if isinstance(raw_shell, dict) else None
        shell_argv = None
        if shell_opt and isinstance(shell_opt.get("executable"), str):
            extra = [str(a) for a in as_list(shell_opt.get("args"))] or ["-c"]
            shell_argv = [shell_opt["executable"], *extra]
        return Step(label, cwd, env, shell=line, shell_argv=shell_argv)

    # -- launch configurations ------------------------------------------------------------

    def _launch(self, item: JsonObject) -> Plan:
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

    def _launch_step(self, item: JsonObject) -> Step:
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
            env.update(read_env_file(self.ws, env_file, where))
        env.update(env_map(item.get("env"), where))
        args = item.get("args", [])
        args = shlex.split(args) if isinstance(args, str) else [str(a) for a in as_list(args)]
        if kind in ("python", "debugpy"):
            python = self._python(item)
            head = [python, *[str(a) for a in as_list(item.get("pythonArgs"))]]
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
        runtime_args = [str(a) for a in as_list(item.get("runtimeArgs"))]
        program = item.get("program")
        if not program and runtime == "node":
            raise ToolFailure(f'invalid {LAUNCH}: {name!r} (node) has no "program"', kind="invalid")
        argv = [str(runtime), *runtime_args]
        if program:
            argv.append(str(program))
        return Step(name, cwd, env, argv=[*argv, *args])

    def _python(self, item: JsonObject) -> str:
        for key in ("python", "pythonPath"):
            if isinstance(item.get(key), str) and item[key]:
                return item[key]
        return project_python(self.ws, self.vars)

    def _compound(self, item: JsonObject) -> Plan:
        members: list[Plan] = []
        for entry in as_list(item.get("configurations")):
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

    def _resolved(self, item: JsonObject, keys: tuple[str, ...]) -> JsonObject:
        """``item`` with the variables of the keys it runs with resolved (others are left alone, so a
        variable in a field this server does not use never fails a run)."""
        return {**item, **self.vars.resolve({k: item[k] for k in keys if k in item})}

    def _cwd(self, value: object, where: str) -> str:
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


def _arg_value(arg: object) -> str:
    if isinstance(arg, dict):
        return str(arg.get("value", ""))
    return str(arg)


def _shell_quote(arg: str) -> str:
    """VS Code's default quoting for shell task arguments: only arguments with whitespace are quoted."""
    if arg and not any(c.isspace() for c in arg):
        return arg
    return shlex.quote(arg)


def plan(ws: Workspace, name: str) -> Plan:
    """The plan of the configuration, compound or task called ``name`` (variables resolved)."""
    return Planner(ws, load(ws)).plan(name)

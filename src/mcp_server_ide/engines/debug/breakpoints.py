"""What the debugger gets for the editor model's breakpoints: DAP ``SourceBreakpoint`` lists, and back.

The editor model keeps the lines (:mod:`..editor.breakpoints`); :class:`BreakpointOptions` keeps the
optional ``condition``, ``hitCondition`` and ``logMessage`` of a line, saved beside the workspace's
other state so they last as long as the breakpoint. :class:`Verification` holds what an adapter
answered for each breakpoint (verified or not, the line it moved it to, why not).
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

OPTION_KEYS = ("condition", "hitCondition", "logMessage")


class BreakpointOptions:
    """``(path, 0-based line) -> {condition?, hitCondition?, logMessage?}``, saved as JSON in ``folder``."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "breakpoint-options.json"
        self.lock = threading.Lock()

    def _load(self) -> dict[str, dict[str, dict[str, str]]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def get(self, path: str, line: int) -> dict[str, str]:
        with self.lock:
            found = self._load().get(path, {}).get(str(line), {})
        return {k: v for k, v in found.items() if k in OPTION_KEYS and isinstance(v, str) and v}

    def set(self, path: str, line: int, options: dict[str, str] | None) -> None:
        """Keep ``options`` for the line (None or empty: forget them)."""
        with self.lock:
            data = self._load()
            lines = data.setdefault(path, {})
            if options:
                lines[str(line)] = options
            else:
                lines.pop(str(line), None)
            if not lines:
                data.pop(path, None)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(data), encoding="utf-8")
            os.replace(tmp, self.path)


def source_breakpoints(lines: list[int], options: dict[int, dict[str, str]]) -> list[dict[str, Any]]:
    """The DAP ``SourceBreakpoint`` list of one file (``lines`` 0-based; DAP lines are 1-based here)."""
    return [{"line": n + 1, **options.get(n, {})} for n in sorted(lines)]


@dataclass
class Verdict:
    verified: bool
    line: int | None
    """1-based line the adapter put it on (None: it did not say)."""
    message: str | None = None


class Verification:
    """The adapter's answers by ``(path, asked 1-based line)``, kept current by ``breakpoint`` events."""

    def __init__(self) -> None:
        self.by_key: dict[tuple[str, int], Verdict] = {}
        self.by_id: dict[int, tuple[str, int]] = {}
        self.lock = threading.Lock()

    def answered(self, path: str, asked: list[dict[str, Any]], got: list[dict[str, Any]]) -> None:
        with self.lock:
            for key in [k for k in self.by_key if k[0] == path]:
                del self.by_key[key]
            for want, bp in zip(asked, got, strict=False):
                key = (path, int(want["line"]))
                self.by_key[key] = Verdict(bool(bp.get("verified")), bp.get("line"), bp.get("message"))
                if isinstance(bp.get("id"), int):
                    self.by_id[bp["id"]] = key

    def changed(self, bp: dict[str, Any]) -> None:
        """A ``breakpoint`` event (the adapter verified or moved one later)."""
        with self.lock:
            key = self.by_id.get(bp.get("id", -1))
            if key is not None:
                old = self.by_key.get(key)
                self.by_key[key] = Verdict(
                    bool(bp.get("verified", old.verified if old else False)),
                    bp.get("line", old.line if old else None),
                    bp.get("message"),
                )

    def get(self, path: str, line: int) -> Verdict | None:
        with self.lock:
            return self.by_key.get((path, line))

"""``refactor_code_at_location``'s engine: pick the refactoring, plan it, then preview or apply it.

``rename`` is planned by :mod:`.rename`, ``extract_function``/``extract_variable`` (and their
aliases) by :mod:`.extract`. Every changed file goes through :mod:`..multiedit`: a unified diff for
a preview, else atomic journaled writes.
"""

from __future__ import annotations

from typing import Any

from ...workspace import Workspace
from .. import multiedit, sandbox
from ..failures import ToolFailure
from .extract import plan_extract
from .query import need_file, partial
from .rename import check_name, plan_rename


def refactor(
    ws: Workspace,
    resolved: sandbox.Resolved,
    line: int,
    character: int,
    refactor_type: str,
    options: dict[str, Any],
    preview: bool,
) -> dict[str, Any]:
    """``{success, changedFiles, message, applied, diff?, partial?, reason?}`` of one refactoring."""
    need_file(resolved)
    kind = refactor_type.strip().lower().replace("-", "_")
    if kind in ("extract_method",):
        kind = "extract_function"
    if kind in ("extract_constant", "extract_local", "introduce_variable"):
        kind = "extract_variable"
    if kind == "rename":
        plans, message, reason = plan_rename(
            ws, resolved, line, character, check_name(options.get("newName"), "rename"), preview
        )
    elif kind in ("extract_function", "extract_variable"):
        plans, message, reason = plan_extract(ws, resolved, line, character, kind, options)
    else:
        raise ToolFailure(
            f"invalid refactorType {refactor_type!r}: use rename, extract_function or extract_variable",
            kind="invalid",
        )
    if not plans:
        raise ToolFailure(f"the {kind} changed nothing at line {line}, character {character}", kind="invalid")
    files = sorted(p.resolved.display_rel for p in plans)
    result: dict[str, Any] = {"success": True, "changedFiles": files}
    if preview:
        result["message"] = f"Preview only (nothing written): {message} in {len(files)} file(s)"
        result["diff"] = multiedit.preview(plans)
        result["applied"] = False
    else:
        multiedit.apply(ws, plans)
        result["message"] = f"Successfully {message} in {len(files)} file(s)"
        result["applied"] = True
    return partial(result, reason)

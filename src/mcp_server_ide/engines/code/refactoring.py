"""``refactor_code_at_location``'s engine: pick the refactoring, plan it, then preview or apply it.

``rename`` is planned by :mod:`.rename`, ``extract_function``/``extract_variable`` (and their
aliases) by :mod:`.extract`. Every changed file goes through :mod:`..multiedit`: a unified diff for
a preview, else atomic journaled writes.
"""

from __future__ import annotations

from typing import Any

from ...call import shaped
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
    """``{success, changedFiles, message, applied, diff?, partial?, reason?}`` of one refactoring (on MCP
    ``{changedFiles, message, diff?, applied?: false, partial?, reason?}``, the message without the file count)."""
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
    diff = multiedit.preview(plans) if preview else None
    if not preview:
        multiedit.apply(ws, plans)
    said = f"Preview only (nothing written): {message}" if preview else f"Successfully {message}"
    full: dict[str, Any] = {
        "success": True,
        "changedFiles": files,
        "message": f"{said} in {len(files)} file(s)",
    }
    # MCP: no `success` and `applied: true` (an error would say otherwise), no file count beside the files.
    compact: dict[str, Any] = {"changedFiles": files, "message": message}
    if diff is not None:
        full["diff"] = compact["diff"] = diff
    full["applied"] = not preview
    if preview:
        compact["applied"] = False
    return partial(shaped(full, lambda _: compact), reason)

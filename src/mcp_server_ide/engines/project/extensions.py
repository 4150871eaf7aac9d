"""The VS Code extensions a workspace recommends (``.vscode/extensions.json``)."""

from __future__ import annotations

from ...workspace import Workspace
from .. import jsonc
from .manifests import read_manifest


def recommended_extensions(ws: Workspace) -> list[str]:
    """``recommendations`` of ``.vscode/extensions.json`` (JSON with comments), in order, without duplicates."""
    text = read_manifest(ws, ".vscode/extensions.json")
    if text is None:
        return []
    try:
        data = jsonc.loads(text)
    except ValueError:
        return []
    if not isinstance(data, dict):
        return []
    recs = data.get("recommendations") or []
    unwanted = {str(u).casefold() for u in data.get("unwantedRecommendations") or [] if isinstance(u, str)}
    out = [r for r in recs if isinstance(r, str) and r.strip() and r.casefold() not in unwanted]
    return list(dict.fromkeys(out))

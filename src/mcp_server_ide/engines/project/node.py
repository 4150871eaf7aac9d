"""Node dependencies: package.json (dependencies, devDependencies, peer/optional/bundle, engines)."""

from __future__ import annotations

from ...workspace import Workspace
from .deps import Deps, str_map
from .manifests import read_json


def node_deps(ws: Workspace, rel: str) -> Deps | None:
    """A package.json's dependencies, or None when it is not a readable JSON object."""
    data = read_json(ws, rel)
    if data is None:
        return None
    deps = Deps("node", rel, str_map(data.get("dependencies")), str_map(data.get("devDependencies")))
    for key in ("peerDependencies", "optionalDependencies", "bundleDependencies"):
        value = data.get(key)
        if isinstance(value, dict) and value:
            deps.extra[key] = str_map(value)
    if isinstance(data.get("engines"), dict):
        deps.extra["engines"] = str_map(data["engines"])
    if isinstance(data.get("packageManager"), str):
        deps.extra["packageManager"] = data["packageManager"]
    return deps

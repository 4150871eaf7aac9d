"""Rust dependencies: Cargo.toml (dev, build, target-specific and workspace dependencies)."""

from __future__ import annotations

from ...workspace import Workspace
from .deps import Deps
from .manifests import read_toml


def _cargo_spec(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        if value.get("workspace") is True:
            return "workspace"
        if "version" in value:
            return str(value["version"])
        if "path" in value:
            return f"path:{value['path']}"
        if "git" in value:
            ref = value.get("tag") or value.get("branch") or value.get("rev")
            return f"git:{value['git']}" + (f"#{ref}" if ref else "")
    return "*"


def cargo_deps(ws: Workspace, rel: str) -> Deps | None:
    """A Cargo.toml's dependencies, or None when it is not valid TOML."""
    data = read_toml(ws, rel)
    if data is None:
        return None

    def table(value: object) -> dict[str, str]:
        return {str(k): _cargo_spec(v) for k, v in value.items()} if isinstance(value, dict) else {}

    deps = Deps("rust", rel, table(data.get("dependencies")), table(data.get("dev-dependencies")))
    build = table(data.get("build-dependencies"))
    if build:
        deps.extra["buildDependencies"] = build
    targets = data.get("target")
    if isinstance(targets, dict):
        per_target: dict[str, dict[str, dict[str, str]]] = {}
        for cfg, sections in targets.items():
            if isinstance(sections, dict):
                entry = {
                    k: table(sections.get(k))
                    for k in ("dependencies", "dev-dependencies", "build-dependencies")
                    if sections.get(k)
                }
                if entry:
                    per_target[str(cfg)] = entry
                    deps.dependencies.update(
                        {k: v for k, v in entry.get("dependencies", {}).items() if k not in deps.dependencies}
                    )
                    deps.devDependencies.update(
                        {
                            k: v
                            for k, v in entry.get("dev-dependencies", {}).items()
                            if k not in deps.devDependencies
                        }
                    )
        if per_target:
            deps.extra["targetDependencies"] = per_target
    workspace = data.get("workspace")
    if isinstance(workspace, dict) and isinstance(workspace.get("dependencies"), dict):
        deps.extra["workspaceDependencies"] = table(workspace["dependencies"])
    package = data.get("package")
    if isinstance(package, dict):
        for key, out_key in (("edition", "edition"), ("rust-version", "rustVersion")):
            if isinstance(package.get(key), str):
                deps.extra[out_key] = package[key]
    return deps

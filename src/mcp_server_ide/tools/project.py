"""Project tools (seed 000, "Project"): what the workspace is built with, and what it depends on.

The seed's fields stay (`types` + `extensions`; `type` + `dependencies` + `devDependencies`);
modules of a monorepo and the detail of each ecosystem come beside them.
"""

from __future__ import annotations

import os
from typing import Annotated, Any, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from ..call import current
from ..engines import sandbox
from ..lazy import LazyModule
from ..registry import ToolFailure, tool

project = LazyModule("mcp_server_ide.engines.project")
vscode = LazyModule("mcp_server_ide.engines.actions.vscode")


class ModuleInfo(TypedDict):
    name: str
    path: str
    """Folder relative to the workspace root ("." for the root)."""
    types: list[str]
    manifests: list[str]
    buildTool: NotRequired[str]
    workspace: NotRequired[str]
    """The folder of the monorepo root that declares this module as a member."""


class MonoRepoInfo(TypedDict):
    path: str
    kind: str
    """npm, yarn, pnpm, cargo, go (go.work), uv, maven or gradle."""
    patterns: list[str]
    members: list[str]


class VsCodeExtensions(TypedDict):
    installed: list[str]
    """``id@version`` of each extension the person installed (`` (inactive)`` when not activated yet)."""
    builtin: list[str]


class ProjectModules(TypedDict):
    types: list[str]
    extensions: list[str]
    """The workspace's recommended VS Code extensions (``.vscode/extensions.json``)."""
    modules: list[ModuleInfo]
    workspaces: NotRequired[list[MonoRepoInfo]]
    truncated: NotRequired[bool]
    vscodeExtensions: NotRequired[VsCodeExtensions]
    """With VS Code connected: its enabled extensions."""


class Ecosystem(TypedDict):
    type: str
    manifest: str
    dependencies: dict[str, str]
    devDependencies: dict[str, str]


class ProjectDependencies(TypedDict):
    type: str | None
    """The main ecosystem of the folder (node, python, go, rust, php, java), None when it has no manifest."""
    dependencies: dict[str, str]
    devDependencies: dict[str, str]
    ecosystems: list[dict[str, Any]]
    """Every manifest of the folder, parsed: its own dependencies, devDependencies and ecosystem detail
    (optionalDependencies, groups, peerDependencies, requiresPython, indirectDependencies, buildDependencies…)."""
    path: NotRequired[str]
    modules: NotRequired[list[dict[str, Any]]]


@tool(
    "project",
    title="Project modules",
    read_only=True,
    idempotent=True,
    example={},
)
def get_project_modules(
    maxDepth: Annotated[
        int,
        Field(
            ge=0,
            le=10,
            description="Folder levels searched for manifests.",
        ),
    ] = project.MAX_DEPTH,
) -> ProjectModules:
    """Project types and modules from manifest files (package.json, pyproject.toml, go.mod, Cargo.toml,
    pom.xml...), monorepo workspaces, recommended (and, when connected, installed) VS Code extensions."""
    ws = current().workspace
    found = project.layout(ws, max_depth=maxDepth)
    result = ProjectModules(
        types=found.types,
        extensions=project.recommended_extensions(ws),
        modules=[m.as_dict() for m in found.modules],
    )
    if found.workspaces:
        result["workspaces"] = [w.as_dict() for w in found.workspaces]
    if found.truncated:
        result["truncated"] = True
    installed = vscode.installed_extensions(ws)
    if installed is not None:
        result["vscodeExtensions"] = VsCodeExtensions(
            installed=installed["installed"], builtin=installed["builtin"]
        )
    return result


@tool(
    "project",
    title="Project dependencies",
    read_only=True,
    idempotent=True,
    example={},
    errors=("folder not found", "outside the workspace"),
)
def get_project_dependencies(
    path: Annotated[
        str | None,
        Field(description="A module folder (default: the root)."),
    ] = None,
    includeModules: Annotated[
        bool,
        Field(description="Also each monorepo member's."),
    ] = True,
) -> ProjectDependencies:
    """Declared dependencies and version constraints from the manifests (package.json, requirements,
    pyproject.toml, go.mod, Cargo.toml...); nothing is resolved or installed."""
    ws = current().workspace
    folder = ""
    if path not in (None, "", ".", "/"):
        resolved = sandbox.resolve(ws, path)
        if not resolved.path.is_dir():
            if not resolved.path.exists():
                raise sandbox.not_found(resolved)
            raise ToolFailure(
                f"invalid path: {resolved.display_rel!r} is a file; give the folder of a module"
            )
        folder = resolved.rel
    ecosystems = project.dependencies_of(ws, folder)
    main = ecosystems[0] if ecosystems else None
    result = ProjectDependencies(
        type=main.type if main else None,
        dependencies=dict(main.dependencies) if main else {},
        devDependencies=dict(main.devDependencies) if main else {},
        ecosystems=[e.as_dict() for e in ecosystems],
    )
    if main is not None:
        # Two manifests of the main ecosystem (pyproject.toml + requirements.txt): merge, first one wins.
        for other in ecosystems[1:]:
            if other.type == main.type:
                for key, value in other.dependencies.items():
                    result["dependencies"].setdefault(key, value)
                for key, value in other.devDependencies.items():
                    result["devDependencies"].setdefault(key, value)
    if folder:
        result["path"] = folder.replace("/", os.sep)
    if includeModules:
        layout = project.layout(ws)
        members = sorted({m for w in layout.workspaces if w.path == folder for m in w.members})
        if members:
            modules = []
            for member in members[: project.MAX_MODULES]:
                for eco in project.dependencies_of(ws, member):
                    modules.append({"path": member.replace("/", os.sep), **eco.as_dict()})
            result["modules"] = modules
    return result

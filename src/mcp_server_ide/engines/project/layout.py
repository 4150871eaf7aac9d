"""What the workspace is made of: its project types and its modules (each folder with a manifest)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import NotRequired, TypedDict

from ...workspace import Workspace
from .go import parse_go_mod
from .manifests import (
    BUILD_TOOL,
    MAX_DEPTH,
    MAX_MODULES,
    TYPE_ORDER,
    find_manifests,
    is_module_manifest,
    manifest_type,
    read_json,
    read_manifest,
    read_toml,
    rel_join,
    table,
)
from .maven import pom_text, read_pom
from .monorepos import MonoRepo, monorepos_in


class ModuleEntry(TypedDict):
    """A module as get_project_modules reports it."""

    name: str
    path: str
    types: list[str]
    manifests: list[str]
    buildTool: NotRequired[str]
    workspace: NotRequired[str]


@dataclass
class Module:
    name: str
    path: str
    types: list[str]
    manifests: list[str]
    buildTool: str | None = None
    workspace: str | None = None
    """The folder of the monorepo root that declares this module as a member."""

    def as_dict(self) -> ModuleEntry:
        out = ModuleEntry(
            name=self.name,
            path=self.path or ".",
            types=self.types,
            manifests=self.manifests,
        )
        if self.buildTool:
            out["buildTool"] = self.buildTool
        if self.workspace is not None:
            out["workspace"] = self.workspace or "."
        return out


@dataclass
class Layout:
    types: list[str]
    modules: list[Module]
    workspaces: list[MonoRepo]
    truncated: bool


def layout(ws: Workspace, *, max_depth: int = MAX_DEPTH) -> Layout:
    """The workspace's project types (shallowest first), modules and monorepo roots."""
    walk = find_manifests(ws, max_depth=max_depth)
    monorepos: list[MonoRepo] = []
    for folder, names in sorted(
        walk.by_dir.items(), key=lambda kv: (kv[0].count("/") if kv[0] else -1, kv[0])
    ):
        monorepos.extend(monorepos_in(ws, folder, names))
    member_of: dict[str, str] = {}
    for repo in monorepos:
        for member in repo.members:
            member_of.setdefault(member, repo.path)
            if member not in walk.by_dir:  # deeper than the walk went: read it anyway
                try:
                    names = [n for n in os.listdir(os.path.join(ws.root, member)) if manifest_type(n)]
                except OSError:
                    names = []
                if names:
                    walk.by_dir[member] = sorted(names)
    modules: list[Module] = []
    types_seen: dict[str, int] = {}
    for folder in sorted(walk.by_dir, key=lambda f: (f.count("/") + (1 if f else 0), f)):
        names = walk.by_dir[folder]
        types = list(dict.fromkeys(t for n in names if (t := manifest_type(n))))
        depth = folder.count("/") + (1 if folder else 0)
        for t in types:
            types_seen[t] = min(types_seen.get(t, depth), depth)
        tools = [BUILD_TOOL[n] for n in names if n in BUILD_TOOL]
        for t in dict.fromkeys(tools):
            types_seen[t] = min(types_seen.get(t, depth), depth)
        if not any(is_module_manifest(n) for n in names) and folder not in member_of and folder:
            continue
        if len(modules) >= MAX_MODULES:
            break
        modules.append(
            Module(
                name=_module_name(ws, folder, names),
                path=folder,
                types=types,
                manifests=[rel_join(folder, n) for n in names],
                buildTool=tools[0] if tools else None,
                workspace=member_of.get(folder),
            )
        )
    order = {t: i for i, t in enumerate([*TYPE_ORDER, "maven", "gradle"])}
    types = sorted(types_seen, key=lambda t: (types_seen[t], order.get(t, 99)))
    return Layout(types=types, modules=modules, workspaces=monorepos, truncated=walk.truncated)


def _module_name(ws: Workspace, folder: str, names: list[str]) -> str:
    fallback = PurePosixPath(folder).name if folder else ws.root.name
    for name in names:
        rel = rel_join(folder, name)
        if name == "package.json" or name == "composer.json":
            data = read_json(ws, rel)
            if data and isinstance(data.get("name"), str):
                return data["name"]
        elif name == "pyproject.toml":
            data = read_toml(ws, rel) or {}
            found = table(data.get("project")).get("name") or table(
                table(data.get("tool")).get("poetry")
            ).get("name")
            if isinstance(found, str):
                return found
        elif name == "Cargo.toml":
            data = read_toml(ws, rel) or {}
            found = table(data.get("package")).get("name")
            if isinstance(found, str):
                return found
        elif name == "go.mod":
            parsed = parse_go_mod(read_manifest(ws, rel) or "")
            if parsed.module:
                return parsed.module
        elif name == "pom.xml":
            pom = read_pom(ws, rel)
            if pom is not None:
                artifact = pom_text(pom, "artifactId")
                if artifact:
                    return artifact
    return fallback

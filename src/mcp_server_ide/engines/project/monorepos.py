"""Monorepo roots and their members: npm/yarn/pnpm workspaces, go.work, Cargo and uv workspaces,
Maven modules and Gradle includes, with the member globs expanded to folders."""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass
from typing import TypedDict

from ...workspace import Workspace
from .go import parse_go_work
from .manifests import MAX_MODULES, SKIP_DIRS, read_json, read_manifest, read_toml, rel_join, strings, table
from .maven import local_name, read_pom


class MonoRepoEntry(TypedDict):
    """A monorepo root as get_project_modules reports it."""

    path: str
    kind: str
    patterns: list[str]
    members: list[str]


@dataclass
class MonoRepo:
    path: str
    kind: str
    members: list[str]
    patterns: list[str]

    def as_dict(self) -> MonoRepoEntry:
        return MonoRepoEntry(
            path=self.path or ".",
            kind=self.kind,
            patterns=self.patterns,
            members=self.members,
        )


def monorepos_in(ws: Workspace, folder: str, names: list[str]) -> list[MonoRepo]:
    """The monorepo roots the manifests ``names`` of ``folder`` declare, members expanded."""
    found: list[MonoRepo] = []
    if "package.json" in names:
        data = read_json(ws, rel_join(folder, "package.json")) or {}
        spec = data.get("workspaces")
        patterns = spec.get("packages") if isinstance(spec, dict) else spec
        if isinstance(patterns, list) and patterns:
            kind = "yarn" if os.path.exists(os.path.join(ws.root, folder, "yarn.lock")) else "npm"
            found.append(MonoRepo(folder, kind, _expand(ws, folder, patterns), [str(p) for p in patterns]))
    pnpm = read_manifest(ws, rel_join(folder, "pnpm-workspace.yaml"))
    if pnpm is not None:
        patterns = parse_pnpm_workspace(pnpm)
        if patterns:
            found.append(MonoRepo(folder, "pnpm", _expand(ws, folder, patterns), patterns))
    if "go.work" in names:
        uses = parse_go_work(read_manifest(ws, rel_join(folder, "go.work")) or "")
        members = []
        for use in uses:
            rel = os.path.normpath(os.path.join(folder, use)).replace(os.sep, "/")
            if rel == ".":
                rel = ""
            if not rel.startswith("..") and os.path.isdir(os.path.join(ws.root, rel)):
                members.append(rel)
        found.append(MonoRepo(folder, "go", members, uses))
    if "Cargo.toml" in names:
        data = read_toml(ws, rel_join(folder, "Cargo.toml")) or {}
        workspace = data.get("workspace")
        if isinstance(workspace, dict):
            patterns = strings(workspace.get("members"))
            patterns += ["!" + e for e in strings(workspace.get("exclude"))]
            found.append(MonoRepo(folder, "cargo", _expand(ws, folder, patterns), patterns))
    if "pyproject.toml" in names:
        data = read_toml(ws, rel_join(folder, "pyproject.toml")) or {}
        uv_ws = table(table(data.get("tool")).get("uv")).get("workspace")
        if isinstance(uv_ws, dict):
            patterns = strings(uv_ws.get("members"))
            patterns += ["!" + e for e in strings(uv_ws.get("exclude"))]
            found.append(MonoRepo(folder, "uv", _expand(ws, folder, patterns), patterns))
    if "pom.xml" in names:
        pom = read_pom(ws, rel_join(folder, "pom.xml"))
        if pom is not None:
            modules = [
                m.text.strip()
                for m in pom.iter()
                if local_name(m.tag) == "module" and m.text and m.text.strip()
            ]
            if modules:
                found.append(MonoRepo(folder, "maven", _expand(ws, folder, modules), modules))
    for settings in ("settings.gradle", "settings.gradle.kts"):
        if settings in names:
            includes = parse_gradle_includes(read_manifest(ws, rel_join(folder, settings)) or "")
            if includes:
                paths = [i.strip(":").replace(":", "/") for i in includes]
                found.append(MonoRepo(folder, "gradle", _expand(ws, folder, paths), includes))
    return found


def parse_pnpm_workspace(text: str) -> list[str]:
    """The ``packages:`` list of a pnpm-workspace.yaml (block or flow style)."""
    patterns: list[str] = []
    inside = False
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not raw.startswith((" ", "\t", "-")):
            inside = line.startswith("packages:")
            flow = line[len("packages:") :].strip() if inside else ""
            if flow.startswith("["):
                patterns += [p.strip().strip("'\"") for p in flow.strip("[]").split(",") if p.strip()]
                inside = False
            continue
        if inside and line.lstrip().startswith("-"):
            patterns.append(line.lstrip()[1:].strip().strip("'\""))
    return [p for p in patterns if p]


def parse_gradle_includes(text: str) -> list[str]:
    """Projects named by ``include`` in a settings.gradle(.kts)."""
    out: list[str] = []
    for m in re.finditer(r"^\s*include\s*\(?([^\n)]*)\)?", text, re.MULTILINE):
        out += re.findall(r"""["']([^"']+)["']""", m.group(1))
    return list(dict.fromkeys(out))


def _expand(ws: Workspace, base: str, patterns: list[str]) -> list[str]:
    """Folders matching workspace globs (``packages/*``, ``apps/**``, ``!excluded``) under ``base``."""
    include = [p for p in patterns if isinstance(p, str) and p and not p.startswith("!")]
    exclude = [p[1:] for p in patterns if isinstance(p, str) and p.startswith("!")]
    found: list[str] = []
    for pattern in include:
        pattern = pattern.strip().rstrip("/").removeprefix("./")
        if not pattern or pattern.startswith("/") or ".." in pattern.split("/"):
            continue
        for match in _glob_dirs(ws, base, pattern):
            rel_in_base = match[len(base) + 1 :] if base else match
            if any(
                fnmatch.fnmatchcase(rel_in_base, e.strip().rstrip("/").removeprefix("./")) for e in exclude
            ):
                continue
            if match not in found:
                found.append(match)
    return found


def _glob_dirs(ws: Workspace, base: str, pattern: str) -> list[str]:
    parts = pattern.split("/")
    current = [base]
    for i, part in enumerate(parts):
        nxt: list[str] = []
        for folder in current:
            absolute = os.path.join(ws.root, folder) if folder else str(ws.root)
            if part == "**":
                nxt.extend(_all_dirs(ws, folder, depth=4))
                continue
            if not any(ch in part for ch in "*?["):
                candidate = rel_join(folder, part)
                if os.path.isdir(os.path.join(ws.root, candidate)) and not os.path.islink(
                    os.path.join(ws.root, candidate)
                ):
                    nxt.append(candidate)
                continue
            try:
                entries = sorted(os.scandir(absolute), key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                if entry.name in SKIP_DIRS or not fnmatch.fnmatchcase(entry.name, part):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    nxt.append(rel_join(folder, entry.name))
        current = nxt[:MAX_MODULES]
        if i == len(parts) - 1:
            break
    return current


def _all_dirs(ws: Workspace, folder: str, depth: int) -> list[str]:
    out = [folder]
    if depth <= 0:
        return out
    try:
        entries = sorted(
            os.scandir(os.path.join(ws.root, folder) if folder else ws.root), key=lambda e: e.name
        )
    except OSError:
        return out
    for entry in entries:
        if (
            entry.is_dir(follow_symlinks=False)
            and entry.name not in SKIP_DIRS
            and not entry.name.startswith(".")
        ):
            out.extend(_all_dirs(ws, rel_join(folder, entry.name), depth - 1))
    return out

"""What a workspace is made of: project types, modules of a monorepo, and declared dependencies.

Everything comes from manifest files, read with real parsers (``json``, ``tomllib``,
``packaging`` for PEP 508 requirements, ``xml.etree`` for Maven) and a few tiny line parsers
where the format is a small DSL (``go.mod``, ``go.work``, ``pnpm-workspace.yaml``,
``settings.gradle``). Walks skip ``.git``, ``node_modules``, ``dist`` and other build/cache
folders, never follow symlinks, and stop at a depth and an entry budget. Manifests are read
through the sandbox, so a manifest that is a link out of the workspace is never read.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import os
import re
import tomllib
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from ..workspace import Workspace
from . import jsonc, sandbox, textio
from .failures import ToolFailure

MAX_DEPTH = 5
MAX_ENTRIES = 20_000
MAX_MANIFEST_BYTES = 2 * 1024 * 1024
MAX_MODULES = 200

SKIP_DIRS = {
    ".git",
    ".hg",
    ".svn",
    "node_modules",
    "dist",
    "build",
    "out",
    "target",
    "bin",
    "obj",
    "vendor",
    "venv",
    ".venv",
    "env",
    "__pycache__",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".next",
    ".nuxt",
    ".svelte-kit",
    ".turbo",
    ".cache",
    "coverage",
    "bower_components",
    ".gradle",
    ".idea",
    ".terraform",
    "Pods",
    "site-packages",
}

# file name (or glob) → project type; order = priority of the type for the seed's single `type`.
MANIFESTS: list[tuple[str, str]] = [
    ("package.json", "node"),
    ("pyproject.toml", "python"),
    ("requirements*.txt", "python"),
    ("setup.py", "python"),
    ("setup.cfg", "python"),
    ("Pipfile", "python"),
    ("go.mod", "go"),
    ("go.work", "go"),
    ("Cargo.toml", "rust"),
    ("pom.xml", "java"),
    ("build.gradle", "java"),
    ("build.gradle.kts", "java"),
    ("settings.gradle", "java"),
    ("settings.gradle.kts", "java"),
    ("Gemfile", "ruby"),
    ("*.gemspec", "ruby"),
    ("composer.json", "php"),
    ("*.csproj", "dotnet"),
    ("*.fsproj", "dotnet"),
    ("*.vbproj", "dotnet"),
    ("*.sln", "dotnet"),
    ("global.json", "dotnet"),
    ("deno.json", "deno"),
    ("deno.jsonc", "deno"),
    ("tsconfig.json", "typescript"),
    ("Package.swift", "swift"),
    ("mix.exs", "elixir"),
    ("pubspec.yaml", "dart"),
    ("build.sbt", "scala"),
    ("stack.yaml", "haskell"),
    ("*.cabal", "haskell"),
    ("CMakeLists.txt", "cmake"),
    ("Dockerfile", "docker"),
]
TYPE_ORDER = list(dict.fromkeys(t for _, t in MANIFESTS))
BUILD_TOOL = {
    "pom.xml": "maven",
    "build.gradle": "gradle",
    "build.gradle.kts": "gradle",
    "settings.gradle": "gradle",
    "settings.gradle.kts": "gradle",
}
# Manifests that make a folder a module on their own (others only add a type).
MODULE_MANIFESTS = {
    "package.json",
    "pyproject.toml",
    "setup.py",
    "go.mod",
    "Cargo.toml",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "composer.json",
    "Gemfile",
    "*.csproj",
    "*.fsproj",
    "*.vbproj",
    "Package.swift",
    "mix.exs",
    "pubspec.yaml",
    "deno.json",
    "deno.jsonc",
}


def manifest_type(name: str) -> str | None:
    for pattern, kind in MANIFESTS:
        if fnmatch.fnmatchcase(name, pattern):
            return kind
    return None


def _is_module_manifest(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in MODULE_MANIFESTS)


@dataclass
class Walk:
    by_dir: dict[str, list[str]] = field(default_factory=dict)
    """Folder (posix, "" for the root) → manifest file names in it."""
    truncated: bool = False


def find_manifests(ws: Workspace, *, max_depth: int = MAX_DEPTH, max_entries: int = MAX_ENTRIES) -> Walk:
    """Manifests under the root, breadth first, skipping build/cache folders and symlinked folders."""
    walk = Walk()
    seen = 0
    level: list[str] = [""]
    for depth in range(max_depth + 1):
        next_level: list[str] = []
        for rel in level:
            folder = os.path.join(ws.root, rel) if rel else str(ws.root)
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                seen += 1
                if seen > max_entries:
                    walk.truncated = True
                    return walk
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in SKIP_DIRS and not entry.name.startswith("."):
                            next_level.append(f"{rel}/{entry.name}" if rel else entry.name)
                    elif manifest_type(entry.name) is not None and entry.is_file():
                        walk.by_dir.setdefault(rel, []).append(entry.name)
                except OSError:
                    continue
        if depth == max_depth and next_level:
            walk.truncated = True
        level = next_level
        if not level:
            break
    return walk


def read_manifest(ws: Workspace, rel: str) -> str | None:
    """The text of a manifest inside the workspace, or None (missing, link out, too big, binary)."""
    try:
        resolved = sandbox.resolve(ws, rel)
        data, _size = textio.read_bytes(resolved, MAX_MANIFEST_BYTES)
    except (ToolFailure, OSError):
        return None
    return data.decode("utf-8", errors="replace").lstrip("\ufeff")


def _json(ws: Workspace, rel: str) -> dict[str, Any] | None:
    text = read_manifest(ws, rel)
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        try:
            value = jsonc.loads(text)
        except ValueError:
            return None
    return value if isinstance(value, dict) else None


def _toml(ws: Workspace, rel: str) -> dict[str, Any] | None:
    text = read_manifest(ws, rel)
    if text is None:
        return None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


# ---------------------------------------------------------------------------------------------
# Extensions


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


# ---------------------------------------------------------------------------------------------
# Modules and workspaces


@dataclass
class Module:
    name: str
    path: str
    types: list[str]
    manifests: list[str]
    buildTool: str | None = None
    workspace: str | None = None
    """The folder of the monorepo root that declares this module as a member."""

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "path": self.path or ".",
            "types": self.types,
            "manifests": self.manifests,
        }
        if self.buildTool:
            out["buildTool"] = self.buildTool
        if self.workspace is not None:
            out["workspace"] = self.workspace or "."
        return out


@dataclass
class MonoRepo:
    path: str
    kind: str
    members: list[str]
    patterns: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path or ".",
            "kind": self.kind,
            "patterns": self.patterns,
            "members": self.members,
        }


@dataclass
class Layout:
    types: list[str]
    modules: list[Module]
    workspaces: list[MonoRepo]
    truncated: bool


def layout(ws: Workspace, *, max_depth: int = MAX_DEPTH) -> Layout:
    walk = find_manifests(ws, max_depth=max_depth)
    monorepos: list[MonoRepo] = []
    for folder, names in sorted(
        walk.by_dir.items(), key=lambda kv: (kv[0].count("/") if kv[0] else -1, kv[0])
    ):
        monorepos.extend(_monorepos(ws, folder, names))
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
        if not any(_is_module_manifest(n) for n in names) and folder not in member_of and folder:
            continue
        if len(modules) >= MAX_MODULES:
            break
        modules.append(
            Module(
                name=_module_name(ws, folder, names),
                path=folder,
                types=types,
                manifests=[_join(folder, n) for n in names],
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
        rel = _join(folder, name)
        if name == "package.json" or name == "composer.json":
            data = _json(ws, rel)
            if data and isinstance(data.get("name"), str):
                return data["name"]
        elif name == "pyproject.toml":
            data = _toml(ws, rel) or {}
            found = (data.get("project") or {}).get("name") or (
                (data.get("tool") or {}).get("poetry") or {}
            ).get("name")
            if isinstance(found, str):
                return found
        elif name == "Cargo.toml":
            data = _toml(ws, rel) or {}
            found = (data.get("package") or {}).get("name")
            if isinstance(found, str):
                return found
        elif name == "go.mod":
            parsed = parse_go_mod(read_manifest(ws, rel) or "")
            if parsed.module:
                return parsed.module
        elif name == "pom.xml":
            pom = _pom(ws, rel)
            if pom is not None:
                artifact = _pom_text(pom, "artifactId")
                if artifact:
                    return artifact
    return fallback


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
                candidate = _join(folder, part)
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
                    nxt.append(_join(folder, entry.name))
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
            out.extend(_all_dirs(ws, _join(folder, entry.name), depth - 1))
    return out


def _monorepos(ws: Workspace, folder: str, names: list[str]) -> list[MonoRepo]:
    found: list[MonoRepo] = []
    if "package.json" in names:
        data = _json(ws, _join(folder, "package.json")) or {}
        spec = data.get("workspaces")
        patterns = spec.get("packages") if isinstance(spec, dict) else spec
        if isinstance(patterns, list) and patterns:
            kind = "yarn" if os.path.exists(os.path.join(ws.root, folder, "yarn.lock")) else "npm"
            found.append(MonoRepo(folder, kind, _expand(ws, folder, patterns), [str(p) for p in patterns]))
    pnpm = read_manifest(ws, _join(folder, "pnpm-workspace.yaml"))
    if pnpm is not None:
        patterns = parse_pnpm_workspace(pnpm)
        if patterns:
            found.append(MonoRepo(folder, "pnpm", _expand(ws, folder, patterns), patterns))
    if "go.work" in names:
        uses = parse_go_work(read_manifest(ws, _join(folder, "go.work")) or "")
        members = []
        for use in uses:
            rel = os.path.normpath(os.path.join(folder, use)).replace(os.sep, "/")
            if rel == ".":
                rel = ""
            if not rel.startswith("..") and os.path.isdir(os.path.join(ws.root, rel)):
                members.append(rel)
        found.append(MonoRepo(folder, "go", members, uses))
    if "Cargo.toml" in names:
        data = _toml(ws, _join(folder, "Cargo.toml")) or {}
        workspace = data.get("workspace")
        if isinstance(workspace, dict):
            patterns = [m for m in workspace.get("members") or [] if isinstance(m, str)]
            patterns += ["!" + e for e in workspace.get("exclude") or [] if isinstance(e, str)]
            found.append(MonoRepo(folder, "cargo", _expand(ws, folder, patterns), patterns))
    if "pyproject.toml" in names:
        data = _toml(ws, _join(folder, "pyproject.toml")) or {}
        uv_ws = ((data.get("tool") or {}).get("uv") or {}).get("workspace")
        if isinstance(uv_ws, dict):
            patterns = [m for m in uv_ws.get("members") or [] if isinstance(m, str)]
            patterns += ["!" + e for e in uv_ws.get("exclude") or [] if isinstance(e, str)]
            found.append(MonoRepo(folder, "uv", _expand(ws, folder, patterns), patterns))
    if "pom.xml" in names:
        pom = _pom(ws, _join(folder, "pom.xml"))
        if pom is not None:
            modules = [
                m.text.strip() for m in pom.iter() if _local(m.tag) == "module" and m.text and m.text.strip()
            ]
            if modules:
                found.append(MonoRepo(folder, "maven", _expand(ws, folder, modules), modules))
    for settings in ("settings.gradle", "settings.gradle.kts"):
        if settings in names:
            includes = parse_gradle_includes(read_manifest(ws, _join(folder, settings)) or "")
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


# ---------------------------------------------------------------------------------------------
# Dependencies


@dataclass
class Deps:
    type: str
    manifest: str
    dependencies: dict[str, str] = field(default_factory=dict)
    devDependencies: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "manifest": self.manifest,
            "dependencies": self.dependencies,
            "devDependencies": self.devDependencies,
            **self.extra,
        }


DEV_NAMES = re.compile(
    r"(^|[-_.])(dev|devel|develop|test|tests|testing|lint|linting|docs?|ci|typing|types|check)([-_.]|$)", re.I
)


def dependencies_of(ws: Workspace, folder: str = "") -> list[Deps]:
    """Every dependency manifest directly in ``folder`` (posix, "" for the root), parsed."""
    absolute = os.path.join(ws.root, folder) if folder else str(ws.root)
    try:
        names = sorted(os.listdir(absolute))
    except OSError:
        return []
    out: list[Deps] = []
    if "package.json" in names:
        parsed = _node_deps(ws, _join(folder, "package.json"))
        if parsed:
            out.append(parsed)
    if "pyproject.toml" in names:
        parsed = _pyproject_deps(ws, _join(folder, "pyproject.toml"))
        if parsed:
            out.append(parsed)
    reqs = [
        n
        for n in names
        if fnmatch.fnmatchcase(n, "requirements*.txt") or fnmatch.fnmatchcase(n, "*requirements.txt")
    ]
    if os.path.isdir(os.path.join(absolute, "requirements")) and not os.path.islink(
        os.path.join(absolute, "requirements")
    ):
        with contextlib.suppress(OSError):
            reqs += [
                "requirements/" + n
                for n in sorted(os.listdir(os.path.join(absolute, "requirements")))
                if n.endswith(".txt")
            ]
    if reqs:
        out.append(_requirements_deps(ws, folder, reqs))
    if "Pipfile" in names:
        parsed = _pipfile_deps(ws, _join(folder, "Pipfile"))
        if parsed:
            out.append(parsed)
    if "go.mod" in names:
        out.append(_go_deps(ws, _join(folder, "go.mod")))
    if "Cargo.toml" in names:
        parsed = _cargo_deps(ws, _join(folder, "Cargo.toml"))
        if parsed:
            out.append(parsed)
    if "composer.json" in names:
        data = _json(ws, _join(folder, "composer.json"))
        if data is not None:
            out.append(
                Deps(
                    "php",
                    _join(folder, "composer.json"),
                    _str_map(data.get("require")),
                    _str_map(data.get("require-dev")),
                )
            )
    if "pom.xml" in names:
        parsed = _maven_deps(ws, _join(folder, "pom.xml"))
        if parsed:
            out.append(parsed)
    return out


def _str_map(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in value.items()}


def _node_deps(ws: Workspace, rel: str) -> Deps | None:
    data = _json(ws, rel)
    if data is None:
        return None
    deps = Deps("node", rel, _str_map(data.get("dependencies")), _str_map(data.get("devDependencies")))
    for key in ("peerDependencies", "optionalDependencies", "bundleDependencies"):
        value = data.get(key)
        if isinstance(value, dict) and value:
            deps.extra[key] = _str_map(value)
    if isinstance(data.get("engines"), dict):
        deps.extra["engines"] = _str_map(data["engines"])
    if isinstance(data.get("packageManager"), str):
        deps.extra["packageManager"] = data["packageManager"]
    return deps


def pep508(text: str) -> tuple[str, str] | None:
    """``(name, constraint)`` of a PEP 508 requirement string, or None when it is not one."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(text)
    except InvalidRequirement:
        return None
    spec = str(req.specifier) or ("@ " + req.url if req.url else "*")
    if req.extras:
        spec = "[" + ",".join(sorted(req.extras)) + "]" + ("" if spec == "*" else spec)
    if req.marker:
        spec += f"; {req.marker}"
    return req.name, spec


def _pep508_map(items: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    if not isinstance(items, list):
        return out
    for item in items:
        if isinstance(item, str):
            parsed = pep508(item)
            if parsed:
                out[parsed[0]] = parsed[1]
    return out


def _poetry_spec(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        if "version" in value:
            spec = str(value["version"])
        elif "path" in value:
            spec = f"path:{value['path']}"
        elif "git" in value:
            spec = f"git:{value['git']}"
        elif "url" in value:
            spec = f"url:{value['url']}"
        else:
            spec = "*"
        if value.get("extras"):
            spec = "[" + ",".join(map(str, value["extras"])) + "]" + spec
        return spec
    if isinstance(value, list):  # multiple constraints
        return " || ".join(_poetry_spec(v) for v in value)
    return str(value)


def _pyproject_deps(ws: Workspace, rel: str) -> Deps | None:
    data = _toml(ws, rel)
    if data is None:
        return None
    project = data.get("project") if isinstance(data.get("project"), dict) else {}
    tool = data.get("tool") if isinstance(data.get("tool"), dict) else {}
    deps = Deps("python", rel, _pep508_map(project.get("dependencies")))
    groups: dict[str, dict[str, str]] = {}
    optional = project.get("optional-dependencies")
    if isinstance(optional, dict) and optional:
        deps.extra["optionalDependencies"] = {str(k): _pep508_map(v) for k, v in optional.items()}
        for name, items in deps.extra["optionalDependencies"].items():
            if DEV_NAMES.search(name):
                deps.devDependencies.update(items)
    # PEP 735 dependency groups (uv, pdm, pip 25.1), with include-group.
    raw_groups = data.get("dependency-groups")
    if isinstance(raw_groups, dict):
        for name in raw_groups:
            groups[str(name)] = _dependency_group(raw_groups, name, set())
    uv = tool.get("uv") if isinstance(tool.get("uv"), dict) else {}
    if isinstance(uv.get("dev-dependencies"), list):
        groups.setdefault("dev", {}).update(_pep508_map(uv["dev-dependencies"]))
    pdm = tool.get("pdm") if isinstance(tool.get("pdm"), dict) else {}
    if isinstance(pdm.get("dev-dependencies"), dict):
        for name, items in pdm["dev-dependencies"].items():
            groups.setdefault(str(name), {}).update(_pep508_map(items))
    poetry = tool.get("poetry") if isinstance(tool.get("poetry"), dict) else {}
    if poetry:
        deps.extra["poetry"] = True
        for name, value in (poetry.get("dependencies") or {}).items():
            if name.lower() == "python":
                deps.extra["requiresPython"] = _poetry_spec(value)
            else:
                deps.dependencies.setdefault(name, _poetry_spec(value))
        legacy = poetry.get("dev-dependencies")
        if isinstance(legacy, dict):
            groups.setdefault("dev", {}).update({k: _poetry_spec(v) for k, v in legacy.items()})
        for name, group in (poetry.get("group") or {}).items():
            if isinstance(group, dict) and isinstance(group.get("dependencies"), dict):
                groups.setdefault(str(name), {}).update(
                    {k: _poetry_spec(v) for k, v in group["dependencies"].items()}
                )
    for items in groups.values():
        deps.devDependencies.update(items)
    if groups:
        deps.extra["groups"] = groups
    if isinstance(project.get("requires-python"), str):
        deps.extra["requiresPython"] = project["requires-python"]
    build = data.get("build-system")
    if isinstance(build, dict) and isinstance(build.get("requires"), list):
        deps.extra["buildRequires"] = _pep508_map(build["requires"])
    return deps


def _dependency_group(groups: dict[str, Any], name: str, seen: set[str]) -> dict[str, str]:
    if name in seen:
        return {}
    seen.add(name)
    out: dict[str, str] = {}
    for item in groups.get(name) or []:
        if isinstance(item, str):
            parsed = pep508(item)
            if parsed:
                out[parsed[0]] = parsed[1]
        elif isinstance(item, dict) and isinstance(item.get("include-group"), str):
            out.update(_dependency_group(groups, item["include-group"], seen))
    return out


def _requirements_deps(ws: Workspace, folder: str, files: list[str]) -> Deps:
    deps = Deps("python", _join(folder, files[0]))
    per_file: dict[str, dict[str, str]] = {}
    for name in files:
        rel = _join(folder, name)
        found = parse_requirements(ws, rel, set())
        per_file[rel] = found
        target = (
            deps.devDependencies
            if DEV_NAMES.search(PurePosixPath(name).stem.replace("requirements", ""))
            else deps.dependencies
        )
        for key, value in found.items():
            target.setdefault(key, value)
    deps.extra["files"] = per_file
    return deps


def parse_requirements(ws: Workspace, rel: str, seen: set[str]) -> dict[str, str]:
    """``name → constraint`` of a requirements file, following ``-r``/``-c`` includes inside the workspace."""
    if rel in seen or len(seen) > 50:
        return {}
    seen.add(rel)
    text = read_manifest(ws, rel)
    if text is None:
        return {}
    out: dict[str, str] = {}
    folder = str(PurePosixPath(rel).parent)
    logical = re.sub(r"\\\r?\n", " ", text)
    for raw in logical.splitlines():
        line = re.split(r"(^|\s)#", raw, maxsplit=1)[0].strip()
        if not line:
            continue
        if line.startswith(("-r ", "--requirement ", "-r", "--requirement=")):
            target = re.sub(r"^(-r|--requirement)[ =]?", "", line).strip()
            inc = os.path.normpath(os.path.join(folder if folder != "." else "", target)).replace(os.sep, "/")
            if not inc.startswith(".."):
                for key, value in parse_requirements(ws, inc, seen).items():
                    out.setdefault(key, value)
            continue
        if line.startswith(("-e ", "--editable")):
            target = re.sub(r"^(-e|--editable)[ =]?", "", line).strip()
            egg = re.search(r"#egg=([A-Za-z0-9_.\-]+)", raw)
            out[egg.group(1) if egg else target] = f"editable:{target}"
            continue
        if line.startswith("-"):
            continue  # --index-url, -c constraints, --hash-only lines...
        line = re.sub(r"\s--hash[= ]\S+", "", line).strip()
        parsed = pep508(line)
        if parsed:
            out[parsed[0]] = parsed[1]
    return out


def _pipfile_deps(ws: Workspace, rel: str) -> Deps | None:
    data = _toml(ws, rel)
    if data is None:
        return None
    deps = Deps(
        "python",
        rel,
        {k: _poetry_spec(v) for k, v in (data.get("packages") or {}).items()},
        {k: _poetry_spec(v) for k, v in (data.get("dev-packages") or {}).items()},
    )
    python = (data.get("requires") or {}).get("python_version")
    if python:
        deps.extra["requiresPython"] = str(python)
    return deps


@dataclass
class GoMod:
    module: str = ""
    go: str = ""
    toolchain: str = ""
    require: dict[str, str] = field(default_factory=dict)
    indirect: dict[str, str] = field(default_factory=dict)
    replace: dict[str, str] = field(default_factory=dict)
    tools: list[str] = field(default_factory=list)


def parse_go_mod(text: str) -> GoMod:
    """A small go.mod parser: module, go, toolchain, require (direct/indirect), replace, tool."""
    mod = GoMod()
    block: str | None = None
    for raw in text.splitlines():
        comment = ""
        if "//" in raw:
            raw, comment = raw.split("//", 1)
        line = raw.strip()
        if not line:
            continue
        if block is not None:
            if line == ")":
                block = None
                continue
            _go_directive(mod, block, line, comment)
            continue
        verb, _, rest = line.partition(" ")
        rest = rest.strip()
        if rest == "(":
            block = verb
            continue
        _go_directive(mod, verb, rest, comment)
    return mod


def _go_directive(mod: GoMod, verb: str, rest: str, comment: str) -> None:
    words = [w.strip('"`') for w in rest.split()]
    if verb == "module" and words:
        mod.module = words[0]
    elif verb == "go" and words:
        mod.go = words[0]
    elif verb == "toolchain" and words:
        mod.toolchain = words[0]
    elif verb == "require" and len(words) >= 2:
        target = mod.indirect if "indirect" in comment else mod.require
        target[words[0]] = words[1]
    elif verb == "replace" and "=>" in words:
        arrow = words.index("=>")
        mod.replace[" ".join(words[:arrow])] = " ".join(words[arrow + 1 :])
    elif verb == "tool" and words:
        mod.tools.append(words[0])


def parse_go_work(text: str) -> list[str]:
    uses: list[str] = []
    in_block = False
    for raw in text.splitlines():
        line = raw.split("//", 1)[0].strip()
        if in_block:
            if line == ")":
                in_block = False
            elif line:
                uses.append(line.strip('"`'))
            continue
        if line.startswith("use"):
            rest = line[3:].strip()
            if rest == "(":
                in_block = True
            elif rest:
                uses.append(rest.strip('"`'))
    return uses


def _go_deps(ws: Workspace, rel: str) -> Deps:
    mod = parse_go_mod(read_manifest(ws, rel) or "")
    deps = Deps("go", rel, dict(mod.require))
    for tool_path in mod.tools:  # go 1.24 `tool` directives: development tools
        version = (
            mod.require.get(tool_path) or mod.indirect.get(tool_path) or _tool_module_version(mod, tool_path)
        )
        deps.devDependencies[tool_path] = version
    deps.extra.update({"module": mod.module, "goVersion": mod.go})
    if mod.indirect:
        deps.extra["indirectDependencies"] = mod.indirect
    if mod.replace:
        deps.extra["replace"] = mod.replace
    if mod.toolchain:
        deps.extra["toolchain"] = mod.toolchain
    return deps


def _tool_module_version(mod: GoMod, tool_path: str) -> str:
    for path, version in {**mod.require, **mod.indirect}.items():
        if tool_path.startswith(path + "/"):
            return version
    return "*"


def _cargo_spec(value: Any) -> str:
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


def _cargo_deps(ws: Workspace, rel: str) -> Deps | None:
    data = _toml(ws, rel)
    if data is None:
        return None

    def table(value: Any) -> dict[str, str]:
        return {str(k): _cargo_spec(v) for k, v in value.items()} if isinstance(value, dict) else {}

    deps = Deps("rust", rel, table(data.get("dependencies")), table(data.get("dev-dependencies")))
    build = table(data.get("build-dependencies"))
    if build:
        deps.extra["buildDependencies"] = build
    targets = data.get("target")
    if isinstance(targets, dict):
        per_target: dict[str, dict[str, Any]] = {}
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


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _pom(ws: Workspace, rel: str) -> ET.Element | None:
    text = read_manifest(ws, rel)
    if text is None or "<!ENTITY" in text:  # no entity expansion games
        return None
    try:
        return ET.fromstring(text)
    except ET.ParseError:
        return None


def _pom_text(element: ET.Element, name: str) -> str | None:
    for child in element:
        if _local(child.tag) == name and child.text:
            return child.text.strip()
    return None


def _maven_deps(ws: Workspace, rel: str) -> Deps | None:
    pom = _pom(ws, rel)
    if pom is None:
        return None
    deps = Deps("java", rel)
    deps.extra["buildTool"] = "maven"
    props = {}
    for child in pom:
        if _local(child.tag) == "properties":
            props = {_local(p.tag): (p.text or "").strip() for p in child}
    for section in pom:
        if _local(section.tag) != "dependencies":
            continue
        for dep in section:
            if _local(dep.tag) != "dependency":
                continue
            group, artifact = _pom_text(dep, "groupId") or "", _pom_text(dep, "artifactId") or ""
            if not artifact:
                continue
            version = _pom_text(dep, "version") or "*"
            version = re.sub(r"\$\{([^}]+)\}", lambda m: props.get(m.group(1), m.group(0)), version)
            scope = _pom_text(dep, "scope") or "compile"
            target = deps.devDependencies if scope == "test" else deps.dependencies
            target[f"{group}:{artifact}" if group else artifact] = version
    return deps

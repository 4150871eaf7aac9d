"""Which files are manifests, where they are, and how to read one.

The walk is breadth first, skips ``.git``, ``node_modules``, ``dist`` and other build/cache folders,
never follows symlinks, and stops at a depth and an entry budget. Manifests are read through the
sandbox, so a manifest that is a link out of the workspace is never read."""

from __future__ import annotations

import fnmatch
import json
import os
import tomllib
from dataclasses import dataclass, field
from typing import Any

from ...workspace import Workspace
from .. import jsonc, sandbox, textio
from ..failures import ToolFailure

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
    """The project type a manifest file name declares (``package.json`` -> node), or None."""
    for pattern, kind in MANIFESTS:
        if fnmatch.fnmatchcase(name, pattern):
            return kind
    return None


def is_module_manifest(name: str) -> bool:
    """Whether this manifest makes its folder a module on its own (others only add a type)."""
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


def read_json(ws: Workspace, rel: str) -> dict[str, Any] | None:
    """A JSON (or JSON-with-comments) manifest as an object, or None (unreadable, invalid, not an object)."""
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


def read_toml(ws: Workspace, rel: str) -> dict[str, Any] | None:
    """A TOML manifest as a table, or None (unreadable or invalid)."""
    text = read_manifest(ws, rel)
    if text is None:
        return None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None


def table(value: object) -> dict[str, Any]:
    """A TOML table or JSON object read from a manifest, or {} when the key is missing or holds
    something else (a manifest of the wrong shape is read around, never crashed on)."""
    return value if isinstance(value, dict) else {}


def strings(value: object) -> list[str]:
    """The strings of a list read from a manifest ([] when the key is missing or holds something else)."""
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def rel_join(folder: str, name: str) -> str:
    """A posix path relative to the root: ``name`` inside ``folder`` ("" for the root)."""
    return f"{folder}/{name}" if folder else name

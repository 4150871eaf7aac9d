"""Every dependency manifest of a folder, each parsed by its ecosystem's module."""

from __future__ import annotations

import contextlib
import fnmatch
import os

from ...workspace import Workspace
from .cargo import cargo_deps
from .deps import Deps, str_map
from .go import go_deps
from .manifests import read_json, rel_join
from .maven import maven_deps
from .node import node_deps
from .python import pipfile_deps, pyproject_deps, requirements_deps


def dependencies_of(ws: Workspace, folder: str = "") -> list[Deps]:
    """Every dependency manifest directly in ``folder`` (posix, "" for the root), parsed."""
    absolute = os.path.join(ws.root, folder) if folder else str(ws.root)
    try:
        names = sorted(os.listdir(absolute))
    except OSError:
        return []
    out: list[Deps] = []
    if "package.json" in names:
        parsed = node_deps(ws, rel_join(folder, "package.json"))
        if parsed:
            out.append(parsed)
    if "pyproject.toml" in names:
        parsed = pyproject_deps(ws, rel_join(folder, "pyproject.toml"))
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
        out.append(requirements_deps(ws, folder, reqs))
    if "Pipfile" in names:
        parsed = pipfile_deps(ws, rel_join(folder, "Pipfile"))
        if parsed:
            out.append(parsed)
    if "go.mod" in names:
        out.append(go_deps(ws, rel_join(folder, "go.mod")))
    if "Cargo.toml" in names:
        parsed = cargo_deps(ws, rel_join(folder, "Cargo.toml"))
        if parsed:
            out.append(parsed)
    if "composer.json" in names:
        data = read_json(ws, rel_join(folder, "composer.json"))
        if data is not None:
            out.append(
                Deps(
                    "php",
                    rel_join(folder, "composer.json"),
                    str_map(data.get("require")),
                    str_map(data.get("require-dev")),
                )
            )
    if "pom.xml" in names:
        parsed = maven_deps(ws, rel_join(folder, "pom.xml"))
        if parsed:
            out.append(parsed)
    return out

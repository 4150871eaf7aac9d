"""Python dependencies: pyproject.toml (PEP 621, PEP 735 groups, uv, PDM, Poetry), requirements files
(following ``-r`` includes) and Pipfile; requirement strings are read with ``packaging`` (PEP 508)."""

from __future__ import annotations

import os
import re
from pathlib import PurePosixPath
from typing import Any

from ...workspace import Workspace
from .deps import DEV_NAMES, Deps
from .manifests import read_manifest, read_toml, rel_join, table


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


def _pep508_map(items: object) -> dict[str, str]:
    out: dict[str, str] = {}
    if not isinstance(items, list):
        return out
    for item in items:
        if isinstance(item, str):
            parsed = pep508(item)
            if parsed:
                out[parsed[0]] = parsed[1]
    return out


def _poetry_spec(value: object) -> str:
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
        extras = value.get("extras")
        if isinstance(extras, list) and extras:
            spec = "[" + ",".join(map(str, extras)) + "]" + spec
        return spec
    if isinstance(value, list):  # multiple constraints
        return " || ".join(_poetry_spec(v) for v in value)
    return str(value)


def pyproject_deps(ws: Workspace, rel: str) -> Deps | None:
    """A pyproject.toml's dependencies; dev: every dependency group, and optional ones with dev-like names."""
    data = read_toml(ws, rel)
    if data is None:
        return None
    project = table(data.get("project"))
    tool = table(data.get("tool"))
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
    uv = table(tool.get("uv"))
    if isinstance(uv.get("dev-dependencies"), list):
        groups.setdefault("dev", {}).update(_pep508_map(uv["dev-dependencies"]))
    pdm = table(tool.get("pdm"))
    if isinstance(pdm.get("dev-dependencies"), dict):
        for name, items in pdm["dev-dependencies"].items():
            groups.setdefault(str(name), {}).update(_pep508_map(items))
    poetry = table(tool.get("poetry"))
    if poetry:
        deps.extra["poetry"] = True
        for name, value in table(poetry.get("dependencies")).items():
            if name.lower() == "python":
                deps.extra["requiresPython"] = _poetry_spec(value)
            else:
                deps.dependencies.setdefault(name, _poetry_spec(value))
        legacy = poetry.get("dev-dependencies")
        if isinstance(legacy, dict):
            groups.setdefault("dev", {}).update({k: _poetry_spec(v) for k, v in legacy.items()})
        for name, group in table(poetry.get("group")).items():
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
    items = groups.get(name)
    for item in items if isinstance(items, list) else []:
        if isinstance(item, str):
            parsed = pep508(item)
            if parsed:
                out[parsed[0]] = parsed[1]
        elif isinstance(item, dict) and isinstance(item.get("include-group"), str):
            out.update(_dependency_group(groups, item["include-group"], seen))
    return out


def requirements_deps(ws: Workspace, folder: str, files: list[str]) -> Deps:
    """One Deps for a folder's requirements files; files named like dev/test/lint count as dev."""
    deps = Deps("python", rel_join(folder, files[0]))
    per_file: dict[str, dict[str, str]] = {}
    for name in files:
        rel = rel_join(folder, name)
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


def pipfile_deps(ws: Workspace, rel: str) -> Deps | None:
    """A Pipfile's packages and dev-packages, or None when it is not valid TOML."""
    data = read_toml(ws, rel)
    if data is None:
        return None
    deps = Deps(
        "python",
        rel,
        {k: _poetry_spec(v) for k, v in table(data.get("packages")).items()},
        {k: _poetry_spec(v) for k, v in table(data.get("dev-packages")).items()},
    )
    python = table(data.get("requires")).get("python_version")
    if python:
        deps.extra["requiresPython"] = str(python)
    return deps

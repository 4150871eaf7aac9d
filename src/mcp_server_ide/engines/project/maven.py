"""Maven: reading a pom.xml (no entity expansion) and its dependencies (test scope counts as dev)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from ...workspace import Workspace
from .deps import Deps
from .manifests import read_manifest


def local_name(tag: str) -> str:
    """An XML tag without its ``{namespace}``."""
    return tag.rsplit("}", 1)[-1]


def read_pom(ws: Workspace, rel: str) -> ET.Element | None:
    """The root element of a pom.xml, or None (unreadable, invalid, or declaring entities)."""
    text = read_manifest(ws, rel)
    if text is None or "<!ENTITY" in text:  # no entity expansion games
        return None
    try:
        return ET.fromstring(text)
    except ET.ParseError:
        return None


def pom_text(element: ET.Element, name: str) -> str | None:
    """The text of the first direct child named ``name``, or None."""
    for child in element:
        if local_name(child.tag) == name and child.text:
            return child.text.strip()
    return None


def maven_deps(ws: Workspace, rel: str) -> Deps | None:
    """A pom.xml's dependencies, ``${property}`` versions resolved from its ``<properties>``."""
    pom = read_pom(ws, rel)
    if pom is None:
        return None
    deps = Deps("java", rel)
    deps.extra["buildTool"] = "maven"
    props = {}
    for child in pom:
        if local_name(child.tag) == "properties":
            props = {local_name(p.tag): (p.text or "").strip() for p in child}
    for section in pom:
        if local_name(section.tag) != "dependencies":
            continue
        for dep in section:
            if local_name(dep.tag) != "dependency":
                continue
            group, artifact = pom_text(dep, "groupId") or "", pom_text(dep, "artifactId") or ""
            if not artifact:
                continue
            version = pom_text(dep, "version") or "*"
            version = re.sub(r"\$\{([^}]+)\}", lambda m: props.get(m.group(1), m.group(0)), version)
            scope = pom_text(dep, "scope") or "compile"
            target = deps.devDependencies if scope == "test" else deps.dependencies
            target[f"{group}:{artifact}" if group else artifact] = version
    return deps

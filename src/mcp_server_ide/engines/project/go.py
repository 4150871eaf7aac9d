"""Go manifests: a small go.mod parser (module, go, toolchain, require, replace, tool), go.work's
``use`` list, and go.mod's dependencies."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...workspace import Workspace
from .deps import Deps
from .manifests import read_manifest


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
    """The folders a go.work ``use``s, as written."""
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


def go_deps(ws: Workspace, rel: str) -> Deps:
    """A go.mod's requirements; its ``tool`` directives count as dev dependencies."""
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

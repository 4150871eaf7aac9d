"""``mcp-server-ide tools [TOOL…] [--json]``: the tools this server serves, without starting it.

Reads the tool table (:mod:`.registry`), the same one every door serves:

- no arguments: each tool's name and the first sentence of its description, by category;
- ``TOOL…``: those tools' full descriptions and parameters (what ``call TOOL`` takes);
- ``--json``: the tools as ``tools/list`` shows them (``name``, ``title``, ``description``,
  ``inputSchema``, ``outputSchema``, ``annotations``).

``--tools LIST`` and ``--plugin MODULE`` select tools as they do for the server. Git tools are served
only when the workspace is a git repository; they are always listed here.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from .registry import ToolSpec

SUMMARY_WIDTH = 90


def summary(description: str) -> str:
    """The first sentence of a description, on one line (cut at a word, with …, past ``SUMMARY_WIDTH``)."""
    text = " ".join(description.split())
    end = text.find(". ")
    sentence = text if end < 0 else text[: end + 1]
    if len(sentence) <= SUMMARY_WIDTH:
        return sentence
    return sentence[: SUMMARY_WIDTH - 1].rsplit(" ", 1)[0].rstrip(",;:") + " …"


def _specs(selection: str | None, plugins: list[str]) -> list[ToolSpec]:
    from . import registry
    from .runner import enabled_specs

    registry.load_builtin_tools()
    for module in plugins:
        registry.load_plugin(module)
    chosen = [t.strip() for t in selection.split(",") if t.strip()] if selection else None
    return enabled_specs(chosen, plugins)


def _listing(specs: list[ToolSpec]) -> list[dict[str, Any]]:
    """``tools/list`` entries (camelCase, as on the wire) of ``specs``, from the runner's SDK tools."""
    from .leanschema import LEAN_PATCH, lean_tool
    from .runner import ToolRunner

    def no_calls(*_: object) -> NoReturn:
        raise RuntimeError("the tools command runs no tool")

    runner = ToolRunner(specs, no_calls)
    runner.patch_tools(lean_tool, cache_key=LEAN_PATCH)  # as the server publishes them
    out: list[dict[str, Any]] = []
    for tool in runner.sdk.values():
        entry: dict[str, Any] = {"name": tool.name, "title": tool.title, "description": tool.description}
        entry["inputSchema"] = tool.parameters
        if tool.output_schema is not None:
            entry["outputSchema"] = tool.output_schema
        if tool.annotations is not None:
            entry["annotations"] = tool.annotations.model_dump(by_alias=True, exclude_none=True)
        out.append(entry)
    return out


def _parameters(schema: dict[str, Any]) -> list[str]:
    required = set(schema.get("required", ()))
    lines = []
    for name, prop in schema.get("properties", {}).items():
        kind = prop.get("type") or "|".join(p.get("type", "?") for p in prop.get("anyOf", ())) or "any"
        default = "" if name in required else f" = {json.dumps(prop.get('default'))}"
        note = f"  {prop['description']}" if prop.get("description") else ""
        lines.append(f"  {name}: {kind}{default}{note}")
    return lines or ["  (no parameters)"]


def render(specs: list[ToolSpec], names: list[str]) -> str:
    """Plain text: a table by category, or the full entries of ``names``."""
    from .registry import CATEGORIES

    if names:
        by_name = {e["name"]: e for e in _listing([s for s in specs if s.name in names])}
        blocks = []
        for name in names:
            entry = by_name[name]
            blocks.append(
                "\n".join(
                    [
                        f"{name} — {entry['title']}",
                        "",
                        entry["description"],
                        "",
                        "parameters:",
                        *_parameters(entry["inputSchema"]),
                    ]
                )
            )
        return "\n\n".join(blocks)
    width = max((len(s.name) for s in specs), default=0)
    lines: list[str] = []
    for category, label in CATEGORIES.items():
        group = [s for s in specs if s.category == category]
        if not group:
            continue
        lines.append(f"{label}:" if not lines else f"\n{label}:")
        lines += [f"  {s.name:<{width}}  {summary(s.description)}" for s in group]
    lines.append(
        f"\n{len(specs)} tools. `mcp-server-ide tools NAME` shows one in full; --json gives the schemas."
    )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="mcp-server-ide tools",
        description="List the tools this server serves (names and one-line descriptions), without starting it.",
    )
    parser.add_argument(
        "names", nargs="*", metavar="TOOL", help="show these tools in full, with their parameters"
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the tools as tools/list shows them: name, title, description, inputSchema, outputSchema, annotations",
    )
    parser.add_argument("--tools", help="the server's --tools selection (e.g. 'jetbrains,project_fs,-wait')")
    parser.add_argument(
        "--plugin", action="append", default=[], metavar="MODULE", help="include a plugin's tools"
    )
    args = parser.parse_args(argv)
    from .toolsets import UnknownToolEntry

    try:
        specs = _specs(args.tools, args.plugin)
    except UnknownToolEntry as exc:
        print(f"mcp-server-ide tools: {exc}", file=sys.stderr)
        return 2
    known = {s.name for s in specs}
    unknown = [n for n in args.names if n not in known]
    if unknown:
        print(
            f"mcp-server-ide tools: unknown tool {unknown[0]!r} (`mcp-server-ide tools` lists the tools)",
            file=sys.stderr,
        )
        return 2
    if args.json:
        chosen = [s for s in specs if s.name in args.names] if args.names else specs
        text = json.dumps(_listing(chosen), ensure_ascii=False, indent=2)
    else:
        text = render(specs, args.names)
    print(text, flush=True)
    return 0

"""The layers only look down (ARCHITECTURE.md, "Layers that only look down"), read from the imports.

- Engines import no registry, surface, door, runner, server or tool module: the failure they raise
  lives in ``engines/failures.py``, which imports nothing of ours and not the SDK; the registry and
  runner translate it to the SDK's ``ToolError`` at the SDK boundary.
- Every reach below the SDK's public API lives in ``surface/lowlevel.py``: no other module imports
  ``mcp.server.lowlevel`` or a private SDK module or name, or touches a private SDK attribute (the
  ones ``surface/lowlevel.py`` itself reaches, plus a few known ones).
- Our own state is typed state of ours (``surface/state.py``...), never an ``_ide_*`` attribute set
  on an SDK object or a function.

The source is read with ``ast`` (imports inside functions count too). The last test checks through
an MCP client that a failure raised by an engine, a tool or a plugin still reaches the caller as the
SDK words a ``ToolError`` (``tests/test_direct_lane.py`` holds the stdio direct lane to the same bytes).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = "mcp_server_ide"
SRC = Path(__file__).resolve().parents[1] / "src" / PACKAGE
LOWLEVEL = SRC / "surface" / "lowlevel.py"

ABOVE_ENGINES = ("registry", "surface", "doors", "runner", "server", "tools")

KNOWN_PRIVATE = frozenset(
    {
        "_lowlevel_server",
        "_tool_manager",
        "_resource_manager",
        "_prompt_manager",
        "_subscriptions",
        "_request_context",
        "_connection",
        "_mcp_server",
        "_admit_session",
        "_event_store",
        "_claim_fd",
        "_open_stdin_diversion",
        "_open_stdout_diversion",
    }
)
"""Private attributes of SDK objects (``MCPServer``, contexts, sessions, the stdio and HTTP transports)."""

OURS = "_ide_"
"""The prefix our own attributes on SDK objects had (``server._ide_subscriptions``...), before they
became fields of ``surface/state.ServerState``."""

OURS_LEFT: set[str] = set()
"""Modules still allowed to set an ``_ide_`` attribute: none."""


def modules() -> Iterator[tuple[Path, str]]:
    for path in sorted(SRC.rglob("*.py")):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        yield path, ".".join(parts)


def package_of(path: Path, name: str) -> str:
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def imported(path: Path, name: str) -> Iterator[tuple[int, str]]:
    """Every module a file imports (``from a import b`` gives ``a`` and ``a.b``), relative ones resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package_of(path, name).split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            yield node.lineno, target
            for alias in node.names:
                yield node.lineno, f"{target}.{alias.name}"


def private_reaches(path: Path) -> Iterator[tuple[int, str]]:
    """Underscore attributes of objects other than ``self``/``cls`` (also through getattr/setattr)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        attr = None
        if isinstance(node, ast.Attribute) and ast.unparse(node.value) not in ("self", "cls"):
            attr = node.attr
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "hasattr", "delattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            attr = node.args[1].value
        if attr and attr.startswith("_") and not attr.startswith("__"):
            yield node.lineno, attr


def first_per_line(found: Iterator[tuple[int, str]]) -> list[tuple[int, str]]:
    """One finding a line (``from a import b`` yields both ``a`` and ``a.b``)."""
    seen: dict[int, str] = {}
    for line, what in found:
        seen.setdefault(line, what)
    return sorted(seen.items())


def within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_engines_import_nothing_above_them() -> None:
    above = [f"{PACKAGE}.{layer}" for layer in ABOVE_ENGINES]
    wrong = [
        f"{path.relative_to(SRC)}:{line} imports {target}"
        for path, name in modules()
        if within(name, f"{PACKAGE}.engines")
        for line, target in first_per_line(
            (line, target) for line, target in imported(path, name) if any(within(target, t) for t in above)
        )
    ]
    assert wrong == [], "an engine reaches up a layer:\n" + "\n".join(wrong)


def test_the_failure_module_imports_nothing_of_ours_nor_the_sdk() -> None:
    path = SRC / "engines" / "failures.py"
    assert path.is_file(), "engines/failures.py holds ToolFailure"
    wrong = [
        f"failures.py:{line} imports {target}"
        for line, target in imported(path, f"{PACKAGE}.engines.failures")
        if within(target, PACKAGE) or within(target, "mcp") or within(target, "mcp_types")
    ]
    assert wrong == []


def test_only_lowlevel_reaches_below_the_sdk_api() -> None:
    forbidden = KNOWN_PRIVATE | {attr for _, attr in private_reaches(LOWLEVEL)}
    wrong: list[str] = []
    for path, name in modules():
        if path == LOWLEVEL:
            continue
        where = path.relative_to(SRC)
        for line, target in imported(path, name):
            if not within(target, "mcp"):
                continue
            if within(target, "mcp.server.lowlevel") or any(
                part.startswith("_") and not part.startswith("__") for part in target.split(".")
            ):
                wrong.append(f"{where}:{line} imports {target}")
        wrong += [
            f"{where}:{line} touches .{attr}" for line, attr in private_reaches(path) if attr in forbidden
        ]
    assert wrong == [], "a reach below the SDK's public API outside surface/lowlevel.py:\n" + "\n".join(
        sorted(set(wrong))
    )


def test_no_module_sets_our_own_attributes_on_objects_it_does_not_own() -> None:
    wrong = [
        f"{path.relative_to(SRC)}:{line} .{attr}"
        for path, _ in modules()
        if str(path.relative_to(SRC)) not in OURS_LEFT
        for line, attr in private_reaches(path)
        if attr.startswith(OURS)
    ]
    assert wrong == [], "an _ide_ attribute on an SDK object (keep it in surface/state.py):\n" + "\n".join(
        wrong
    )


def error_text(result: object) -> str:
    assert getattr(result, "is_error", False), result
    return result.content[0].text  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_engine_and_plugin_failures_reach_an_mcp_client_as_their_message(mcp, ws_path: Path) -> None:
    """The SDK shows a ``ToolError``'s text after its prefix and hides any other exception behind the
    bare prefix: a ``ToolFailure`` that is no longer a ``ToolError`` must still arrive whole."""
    from mcp_server_ide.server import ServerOptions

    options = ServerOptions(plugins=["tests.conformance_fixtures"])
    async with mcp(ws_path, options=options) as client:
        inline = error_text(await client.call_tool("get_file_text_by_path", {"pathInProject": "../x.txt"}))
        assert inline.startswith("Error executing tool get_file_text_by_path: ")
        assert "outside the workspace" in inline
        threaded = error_text(await client.call_tool("search_in_files_content", {"searchText": ""}))
        assert threaded.startswith("Error executing tool search_in_files_content: invalid parameters: ")
        plugin = error_text(await client.call_tool("test_error_handling", {}))
        assert plugin == (
            "Error executing tool test_error_handling: This tool intentionally returns an error for testing"
        )
        asked = error_text(await client.call_tool("test_elicitation_sep1034_defaults", {}))
        assert (
            asked
            == "Error executing tool test_elicitation_sep1034_defaults: this client does not support elicitation"
        )

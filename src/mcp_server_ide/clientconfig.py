"""``mcp-server-ide config vscode|claude|cursor``: how to add this server to a client.

Prints, for the current folder (or ``--workspace DIR``):

- ``vscode``: the ``.vscode/mcp.json`` document, the ``vscode:mcp/install?…`` link (for a web
  page or ``xdg-open``) and the ``code --add-mcp '…'`` command;
- ``claude``: the ``claude_desktop_config.json`` entry and the ``claude mcp add`` command (Claude Code);
- ``cursor``: the ``.cursor/mcp.json`` document.

``--json`` prints only the configuration document (what goes in the file), ``--http URL``
describes a running HTTP server instead of launching one over stdio, ``--name`` renames the
server entry, ``--tools LIST`` has the server serve a selection (a set such as ``jetbrains`` or ``core``,
categories, names, ``-name``: see :mod:`.toolsets`; checked here, so a typo fails now rather than
in the client), and any arguments after ``--`` are passed to the server (e.g. ``-- --read-only``).
``--dev`` (``vscode`` only, for people writing ``--plugin`` modules) adds VS Code's development block,
``"dev": {"watch": …, "debug": {"type": "debugpy"}}``: VS Code restarts the server when a watched file
changes (the plugin modules found in the workspace, else ``src/**/*.py`` or ``**/*.py``; ``--watch GLOB``
chooses) and can start it under the debugger (the command is then this Python interpreter, as VS Code
requires for ``debugpy``, and ``debugpyPath`` names this environment's ``debugpy`` when it has one).
The command is the absolute path of the installed ``mcp-server-ide`` script (the README's form,
``/abs/path/to/.venv/bin/mcp-server-ide``), so the snippet works whatever ``PATH`` the client starts
with; where this installation has no such script (run from a source tree), it is this Python
interpreter running ``-m mcp_server_ide``.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

CLIENTS = ("vscode", "claude", "cursor")


def server_command() -> list[str]:
    """The command that starts this installation of the server: its console script beside this
    interpreter, if that script runs this interpreter, else ``python -m mcp_server_ide``."""
    bin_dir = Path(sys.executable).parent
    script = bin_dir / "mcp-server-ide"
    try:
        with open(script, encoding="utf-8", errors="replace") as f:
            head = f.readline() + f.readline()  # pip's sh trampoline names the interpreter on line 2
    except OSError:
        head = ""
    if head.startswith("#!") and str(bin_dir) in head:
        return [str(script)]
    return [sys.executable, "-m", "mcp_server_ide"]


def server_entry(
    workspace: str, name: str, extra: list[str], http: str | None, *, vscode: bool
) -> dict[str, Any]:
    if http:
        entry: dict[str, Any] = {"type": "http", "url": http} if vscode else {"url": http}
        return entry
    command, *prefix = server_command()
    entry = {"command": command, "args": [*prefix, "--workspace", workspace, *extra]}
    if vscode:
        entry = {"type": "stdio", **entry}
    return entry


def plugin_modules(extra: list[str]) -> list[str]:
    """The modules named by ``--plugin M`` / ``--plugin=M`` in the server's arguments."""
    found: list[str] = []
    for i, arg in enumerate(extra):
        if arg == "--plugin" and i + 1 < len(extra):
            found.append(extra[i + 1])
        elif arg.startswith("--plugin="):
            found.append(arg.partition("=")[2])
    return found


def watch_globs(root: Path, extra: list[str]) -> list[str]:
    """What VS Code watches (globs relative to the workspace folder): each ``--plugin`` module's file or
    package found under the workspace (or its ``src``), else ``src/**/*.py``, else ``**/*.py``."""
    globs: list[str] = []
    for module in plugin_modules(extra):
        rel = Path(*module.split("."))
        for base in (Path(), Path("src")):
            if (root / base / rel).is_dir():
                globs.append(f"{(base / rel).as_posix()}/**/*.py")
                break
            if (root / base / rel.with_suffix(".py")).is_file():
                globs.append((base / rel.with_suffix(".py")).as_posix())
                break
    if globs:
        return list(dict.fromkeys(globs))
    return ["src/**/*.py"] if (root / "src").is_dir() else ["**/*.py"]


def dev_block(root: Path, extra: list[str], watch: list[str] | None) -> dict[str, Any]:
    """VS Code's ``dev`` block: restart on a change of ``watch`` and debug with debugpy."""
    globs = watch or watch_globs(root, extra)
    debug: dict[str, Any] = {"type": "debugpy"}
    debugpy = Path(sys.executable).parent / "debugpy"
    if debugpy.is_file():
        debug["debugpyPath"] = str(debugpy)
    return {"watch": globs[0] if len(globs) == 1 else globs, "debug": debug}


def documents(
    client: str,
    root: Path,
    name: str,
    extra: list[str],
    http: str | None,
    dev: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The configuration file's content for ``client`` (``dev``: VS Code's development block)."""
    if client == "vscode":
        # ${workspaceFolder} keeps .vscode/mcp.json valid if the folder moves or is shared.
        entry = server_entry("${workspaceFolder}", name, extra, http, vscode=True)
        if dev is not None and not http:
            # VS Code debugs a stdio server with debugpy only when its command is a Python interpreter.
            args = ["-m", "mcp_server_ide", "--workspace", "${workspaceFolder}", *extra]
            entry = {"type": "stdio", "command": sys.executable, "args": args, "dev": dev}
        return {"servers": {name: entry}}
    return {"mcpServers": {name: server_entry(str(root), name, extra, http, vscode=False)}}


def install_payload(root: Path, name: str, extra: list[str], http: str | None) -> dict[str, Any]:
    """The ``{"name": …, …}`` object VS Code's install link and ``--add-mcp`` take."""
    return {"name": name, **server_entry(str(root), name, extra, http, vscode=True)}


def install_link(payload: dict[str, Any], insiders: bool = False) -> str:
    scheme = "vscode-insiders" if insiders else "vscode"
    return f"{scheme}:mcp/install?{quote(json.dumps(payload, separators=(',', ':')), safe='')}"


def render(
    client: str,
    root: Path,
    name: str,
    extra: list[str],
    http: str | None,
    only_json: bool,
    dev: dict[str, Any] | None = None,
) -> str:
    document = documents(client, root, name, extra, http, dev)
    doc = json.dumps(document, indent=2)
    if only_json:
        return doc
    lines: list[str] = []
    if client == "vscode":
        payload = install_payload(root, name, extra, http)
        if dev is not None:
            payload = {"name": name, **document["servers"][name]}
            payload["args"] = [str(root) if a == "${workspaceFolder}" else a for a in payload["args"]]
        compact = json.dumps(payload, separators=(",", ":"))
        lines += [
            f"# {root / '.vscode' / 'mcp.json'}",
            doc,
            "",
            "# Install link (open it in a browser, or: xdg-open '<link>')",
            install_link(payload),
            "",
            "# Command line",
            f"code --add-mcp {shlex.quote(compact)}",
        ]
    elif client == "claude":
        entry = documents(client, root, name, extra, http)["mcpServers"][name]
        lines += ["# Claude Desktop: add to claude_desktop_config.json", doc, "", "# Claude Code"]
        if http:
            lines.append(f"claude mcp add --transport http {shlex.quote(name)} {shlex.quote(http)}")
        else:
            lines.append(
                f"claude mcp add {shlex.quote(name)} -- "
                + " ".join(shlex.quote(p) for p in [entry["command"], *entry["args"]])
            )
    else:
        lines += [f"# {root / '.cursor' / 'mcp.json'}", doc]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    extra: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1 :]
    parser = argparse.ArgumentParser(
        prog="mcp-server-ide config", description="Print how to add this server to an MCP client."
    )
    parser.add_argument("client", choices=CLIENTS)
    parser.add_argument(
        "--workspace", "-w", type=Path, default=Path.cwd(), help="the workspace folder (default: here)"
    )
    parser.add_argument("--name", default="ide", help="the server's name in the client (default: ide)")
    parser.add_argument(
        "--http", metavar="URL", help="describe a running HTTP server (…/mcp) instead of stdio"
    )
    parser.add_argument(
        "--tools",
        metavar="LIST",
        help="the tools the server serves: a set (jetbrains, core, all), categories, names, -name (stdio only)",
    )
    parser.add_argument("--json", action="store_true", help="print only the configuration document")
    parser.add_argument(
        "--dev",
        action="store_true",
        help="vscode: add the development block (restart on a plugin change, debug with debugpy)",
    )
    parser.add_argument(
        "--watch",
        action="append",
        metavar="GLOB",
        help="with --dev: what VS Code watches, relative to the workspace (repeatable)",
    )
    args = parser.parse_args(argv)
    root = args.workspace.resolve()
    if not root.is_dir():
        print(f"mcp-server-ide config: {root} is not a folder", file=sys.stderr)
        return 2
    if args.tools:
        problem = _tools_problem(args.tools, args.http)
        if problem:
            print(f"mcp-server-ide config: {problem}", file=sys.stderr)
            return 2
        extra = ["--tools", args.tools, *extra]
    dev = None
    if args.dev or args.watch:
        if args.client != "vscode" or args.http:
            print("mcp-server-ide config: --dev/--watch describe a stdio server VS Code starts "
                  "(config vscode, without --http)", file=sys.stderr)  # fmt: skip
            return 2
        dev = dev_block(root, extra, args.watch)
    print(render(args.client, root, args.name, extra, args.http, args.json, dev))
    return 0


def _tools_problem(selection: str, http: str | None) -> str | None:
    """Why ``--tools selection`` cannot go in the server definition, or None."""
    if http:
        return "--tools selects what a server launched over stdio serves; with --http, start that server with --tools"
    from . import registry
    from .runner import enabled_specs
    from .toolsets import UnknownToolEntry

    registry.load_builtin_tools()
    try:
        chosen = enabled_specs([t.strip() for t in selection.split(",") if t.strip()])
    except UnknownToolEntry as exc:
        return str(exc)
    return None if chosen else f"--tools {selection!r} selects no tool"

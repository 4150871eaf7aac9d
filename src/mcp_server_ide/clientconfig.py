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


def documents(client: str, root: Path, name: str, extra: list[str], http: str | None) -> dict[str, Any]:
    """The configuration file's content for ``client``."""
    if client == "vscode":
        # ${workspaceFolder} keeps .vscode/mcp.json valid if the folder moves or is shared.
        return {"servers": {name: server_entry("${workspaceFolder}", name, extra, http, vscode=True)}}
    return {"mcpServers": {name: server_entry(str(root), name, extra, http, vscode=False)}}


def install_payload(root: Path, name: str, extra: list[str], http: str | None) -> dict[str, Any]:
    """The ``{"name": …, …}`` object VS Code's install link and ``--add-mcp`` take."""
    return {"name": name, **server_entry(str(root), name, extra, http, vscode=True)}


def install_link(payload: dict[str, Any], insiders: bool = False) -> str:
    scheme = "vscode-insiders" if insiders else "vscode"
    return f"{scheme}:mcp/install?{quote(json.dumps(payload, separators=(',', ':')), safe='')}"


def render(client: str, root: Path, name: str, extra: list[str], http: str | None, only_json: bool) -> str:
    doc = json.dumps(documents(client, root, name, extra, http), indent=2)
    if only_json:
        return doc
    lines: list[str] = []
    if client == "vscode":
        payload = install_payload(root, name, extra, http)
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
    print(render(args.client, root, args.name, extra, args.http, args.json))
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

"""Command line: argument parsing only.

mcp-server-ide [--workspace DIR]              MCP over stdio (what clients launch)
mcp-server-ide --http [--host H] [--port N]   Streamable HTTP at /mcp + the REST doors (POST /mcp/{tool})
mcp-server-ide call TOOL [JSON]               run one tool and print its {"status", "error"} envelope
mcp-server-ide tools [TOOL…] [--json]         list the tools without starting a server
mcp-server-ide config vscode|claude|cursor    print client set-up for this workspace
mcp-server-ide hosted --data DIR              the hosted, multi-user service (hosted/cli.py)
"""

from __future__ import annotations

import argparse
import importlib
import ipaddress
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from .runner import ToolRunner
    from .workspaces import LocalWorkspaces

LOOPBACK = ("127.0.0.1", "localhost", "::1")

# Subcommand -> (usage, what it does): the dispatch in main() and the "commands" part of --help.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "call": ("call TOOL [JSON] [options]", "run one tool in DIR and print its result (see call --help)"),
    "tools": ("tools [TOOL…] [--json]", "list the tools, or show some in full, without starting a server"),
    "config": ("config vscode|claude|cursor", "print how to add this server to an MCP client"),
    "journal": ("journal show|clear", "show where the change journal lives and its size, or clear it"),
    "hosted": ("hosted --data DIR | user|token|project", "serve the hosted multi-user service, or manage it"),
}

CALL_HELP = """\
usage: mcp-server-ide call TOOL ['{"param": "value"}'] [--workspace DIR] [server options]

Run one tool once, without a client or a server process, and print its result as JSON:
{"status": RESULT, "error": null} on success (exit 0), {"status": null, "error": "why"} when
the tool refuses or fails (exit 1), and exit 2 for invalid JSON arguments.

  TOOL        a tool name (`mcp-server-ide tools` lists them; `mcp-server-ide tools TOOL`
              shows one's parameters)
  JSON        the arguments, one JSON object (default {})

Server options work as they do for the server: --workspace DIR (default: the current folder),
--read-only, --untrusted, --protect PATH, --tools LIST, --plugin MODULE, --state-dir DIR.
A tool that needs the person's confirmation is refused (the command line cannot ask), unless
--confirm-policy allow.

example:
  mcp-server-ide call list_files_in_folder '{"pathInProject": "/"}' --workspace .
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="mcp-server-ide",
        description="An MCP server that gives an AI assistant IDE powers over a workspace.",
        epilog="commands:\n"
        + "\n".join(f"  mcp-server-ide {usage:<32} {what}" for usage, what in SUBCOMMANDS.values()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--workspace",
        "-w",
        type=Path,
        help="workspace root (default: the client's first root, else the current folder)",
    )
    p.add_argument(
        "--http",
        action="store_true",
        help="serve HTTP (Streamable HTTP at /mcp and the JetBrains-style REST doors, POST /mcp/{tool}) instead of stdio",
    )
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind with --http (default 127.0.0.1; anything else needs --token)",
    )
    p.add_argument(
        "--port",
        type=int,
        help="port for --http (default: the first free port in 9960-9990; 0 = any free port)",
    )
    p.add_argument("--stateless", action="store_true", help="serve Streamable HTTP without sessions")
    p.add_argument(
        "--token",
        default=None,
        help="bearer token every HTTP call must carry; visible to other processes in /proc/PID/cmdline: "
        "prefer --token-file or env MCP_IDE_TOKEN",
    )
    p.add_argument(
        "--token-file",
        metavar="PATH",
        help="read the bearer token from this file (its first line); then env MCP_IDE_TOKEN, then --token",
    )
    p.add_argument(
        "--allowed-host", action="append", default=[], help="extra Host header value to accept (repeatable)"
    )
    p.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        help="extra browser Origin allowed to call (repeatable)",
    )
    p.add_argument("--http-header-timeout", type=float, default=10.0, help="seconds a request head may take")
    p.add_argument("--http-body-timeout", type=float, default=30.0, help="seconds a request body may take")
    p.add_argument("--http-max-connections", type=int, default=256, help="open HTTP connections at most")
    p.add_argument(
        "--rate-limit", type=float, default=0.0, help="HTTP requests a second per caller (0 = none)"
    )
    p.add_argument(
        "--rate-burst", type=int, default=0, help="HTTP requests a caller may make at once (0 = 2x rate)"
    )
    p.add_argument(
        "--max-concurrent", type=int, default=0, help="HTTP requests in flight per caller (0 = none)"
    )
    p.add_argument(
        "--rate-key-header",
        metavar="NAME",
        help="tell callers apart by this header (set by a trusted proxy); default: token, else address",
    )
    p.add_argument(
        "--protect",
        action="append",
        default=[],
        metavar="PATH",
        help="extra protected write path, e.g. src/brand (repeatable)",
    )
    p.add_argument("--read-only", action="store_true", help="refuse every tool that changes the workspace")
    p.add_argument(
        "--structured-content",
        action="store_true",
        help="also send structuredContent and publish output schemas (for programmatic clients; models read the text)",
    )
    p.add_argument(
        "--untrusted",
        action="store_true",
        help="treat the workspace as untrusted: no git hooks/filters, confirm before running its commands",
    )
    p.add_argument(
        "--confirm-policy",
        choices=["refuse", "allow"],
        default="refuse",
        help="what a risky operation does when the client cannot ask the person (default refuse)",
    )
    p.add_argument(
        "--tools",
        help="comma-separated tools, categories or sets (jetbrains, core, all) to serve; prefix with - to remove "
        "(e.g. 'jetbrains,project_fs,-wait')",
    )
    p.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="MODULE",
        help="import a module that adds tools, resources or prompts (repeatable)",
    )
    p.add_argument(
        "--state-dir",
        type=Path,
        help="where workspace state (editor model, journal) is kept (default $XDG_STATE_HOME/mcp-server-ide)",
    )
    limits = p.add_argument_group(
        "resource limits (0 = none; sizes like 512M, 4G)",
        "per command (one-shot, job, terminal, task, language server) and per workspace (all its commands)",
    )
    for flag, env, kind, what in (
        ("--limit-pids", "MCP_IDE_LIMIT_PIDS", int, "processes a command may have at once (default 1024)"),
        ("--limit-memory", "MCP_IDE_LIMIT_MEMORY", str, "memory a command may use (default half the RAM)"),
        ("--limit-cpu", "MCP_IDE_LIMIT_CPU", int, "CPU seconds a process may use (default none)"),
        (
            "--limit-file-size",
            "MCP_IDE_LIMIT_FILE_SIZE",
            str,
            "largest file a command may write (default 4G)",
        ),
        (
            "--workspace-pids",
            "MCP_IDE_WORKSPACE_PIDS",
            int,
            "processes of all commands together (default 4096)",
        ),
        (
            "--workspace-memory",
            "MCP_IDE_WORKSPACE_MEMORY",
            str,
            "memory of all commands together (default 3/4 RAM)",
        ),
        (
            "--workspace-cpus",
            "MCP_IDE_WORKSPACE_CPUS",
            float,
            "CPU cores all commands together may keep busy (default none)",
        ),
    ):
        limits.add_argument(flag, type=kind, default=os.environ.get(env), help=f"{what} (or env {env})")
    p.add_argument(
        "--job-grace",
        type=float,
        default=float(os.environ.get("MCP_IDE_JOB_GRACE_S", "300")),
        metavar="SECONDS",
        help="how long a job outlives the client session that started it (default 300; or env MCP_IDE_JOB_GRACE_S)",
    )
    p.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    p.add_argument("--version", action="store_true", help="print the version and exit")
    return p


def _is_loopback(host: str) -> bool:
    if host in LOOPBACK:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in SUBCOMMANDS:
        return _subcommand(argv[0], argv[1:])
    args = build_parser().parse_args(argv)
    if args.version:
        from . import __version__

        print(__version__)
        return 0
    import logging

    logging.basicConfig(level=args.log_level, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    if not _take_token(args):
        return 2
    if args.http and not _is_loopback(args.host) and not args.token:
        print(
            "mcp-server-ide: binding to a non-loopback address needs --token (or MCP_IDE_TOKEN)",
            file=sys.stderr,
        )
        return 2
    handshake = None
    if not args.http:  # answer initialize while the SDK imports (doors/handshake.py)
        from .doors import handshake as fast_handshake

        handshake = fast_handshake.start(_server_options(args))
        from . import sdkimport

        sdkimport.import_sdk()  # without the HTTP server's and OAuth's extras (sdkimport.py)
    workspaces, server, runner = _build(args)
    workspaces.sweep_leftovers()

    import anyio

    if args.http:
        from .doors import http

        settings = http.HttpSettings(
            host=args.host,
            port=args.port,
            stateless=args.stateless,
            token=args.token,
            allowed_hosts=args.allowed_host,
            allowed_origins=args.allow_origin,
            limits=http.ConnectionLimits(
                args.http_header_timeout, args.http_body_timeout, args.http_max_connections
            ),
            rate=http.RateSettings(
                rate=args.rate_limit,
                burst=args.rate_burst,
                max_concurrent=args.max_concurrent,
                key_header=args.rate_key_header,
            ),
        )
        anyio.run(http.serve, server, runner, workspaces, settings)
    else:
        from .doors import stdio

        anyio.run(stdio.serve, server, workspaces, runner, handshake)
    return 0


def _take_token(args: argparse.Namespace) -> bool:
    """Put the token (``--token-file``, ``--token`` or ``MCP_IDE_TOKEN``) in ``args.token`` and hide it
    from every other process before anything runs (see :mod:`.secrecy`); False on a bad token option."""
    from . import secrecy

    on_argv = args.token is not None
    if on_argv:
        print(secrecy.CMDLINE_WARNING, file=sys.stderr)
    try:
        args.token = secrecy.resolve_token(args.token, args.token_file)
    except secrecy.TokenError as exc:
        print(f"mcp-server-ide: {exc}", file=sys.stderr)
        return False
    secrecy.hide_secrets(argv_token=on_argv)
    return True


def _server_options(args: argparse.Namespace) -> dict[str, object]:
    """The options a server build reads (what its ``initialize`` answer may derive from)."""
    skip = {"workspace", "log_level", "version", "http", "host", "port", "stateless", "token", "token_file"}
    skip |= {"rate_limit", "rate_burst", "max_concurrent", "rate_key_header"}
    return {k: v for k, v in vars(args).items() if k not in skip}


def _int_or_none(value: object) -> int | None:
    return None if value is None else int(str(value))


def _build(args: argparse.Namespace) -> tuple[LocalWorkspaces, MCPServer, ToolRunner]:
    from .server import ServerOptions, build_server
    from .workspace import Policy
    from .workspaces import LocalWorkspaces

    if args.workspace is not None and not args.workspace.is_dir():
        raise SystemExit(f"mcp-server-ide: --workspace {args.workspace} is not a folder")
    from .engines.processes.limits import from_options

    try:
        limits = from_options(
            pids=_int_or_none(args.limit_pids),
            memory=args.limit_memory,
            cpu_s=_int_or_none(args.limit_cpu),
            file_size=args.limit_file_size,
            workspace_pids=_int_or_none(args.workspace_pids),
            workspace_memory=args.workspace_memory,
            workspace_cpus=args.workspace_cpus,
        )
    except ValueError as exc:
        raise SystemExit(
            f"mcp-server-ide: a limit must be a number or a size like 512M, 4G, 0 (got {exc})"
        ) from None
    policy = Policy(
        protected=tuple(args.protect),
        read_only=args.read_only,
        trusted=not args.untrusted,
        confirm_policy=args.confirm_policy,
        job_grace_s=max(0.0, args.job_grace),
        limits=limits,
    )
    workspaces = LocalWorkspaces(args.workspace, policy, args.state_dir)
    options = ServerOptions(
        tools=[t.strip() for t in args.tools.split(",") if t.strip()] if args.tools else None,
        read_only=args.read_only,
        structured_content=args.structured_content,
        plugins=args.plugin,
        workspaces=workspaces,
    )
    from .toolsets import UnknownToolEntry

    try:
        server, runner = build_server(workspaces.for_context, options)
    except UnknownToolEntry as exc:
        workspaces.close()
        print(f"mcp-server-ide: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    return workspaces, server, runner


def _subcommand(name: str, rest: list[str]) -> int:
    if name == "call":
        return _call(rest)
    module_name = {
        "config": ".clientconfig",
        "tools": ".toollist",
        "journal": ".journalcli",
        "hosted": ".hosted.cli",
    }[name]
    try:
        module = importlib.import_module(module_name, __package__)
    except ImportError:
        print(f"mcp-server-ide: the {name} command is not available in this build", file=sys.stderr)
        return 2
    try:
        code = int(module.main(rest) or 0)
        sys.stdout.flush()
    except BrokenPipeError:  # `mcp-server-ide tools | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return code


def _call(rest: list[str]) -> int:
    """``mcp-server-ide call TOOL [JSON] [server options…]``: the CLI door."""
    if not rest:
        print(CALL_HELP.splitlines()[0], file=sys.stderr)
        return 2
    if rest[0] in ("-h", "--help"):
        print(CALL_HELP, end="")
        return 0
    tool_name, rest = rest[0], rest[1:]
    if "-h" in rest or "--help" in rest:  # call TOOL --help: that tool's description and parameters
        return _subcommand("tools", [tool_name])
    payload = "{}"
    if rest and not rest[0].startswith("-"):
        payload, rest = rest[0], rest[1:]
    args = build_parser().parse_args(rest)
    if not _take_token(args):
        return 2
    workspaces, _server, runner = _build(args)
    import anyio

    from .call import Call
    from .registry import ToolFailure

    async def run() -> int:
        try:
            arguments = json.loads(payload)
            if not isinstance(arguments, dict):
                raise ToolFailure("the arguments must be a JSON object")
            call = Call(workspace=workspaces.workspace, door="cli", tool=tool_name, arguments=arguments)
            result = await runner.run(tool_name, arguments, call)
        except json.JSONDecodeError as exc:
            print(json.dumps({"status": None, "error": f"invalid JSON arguments: {exc.msg}"}))
            return 2
        except ToolFailure as exc:
            print(json.dumps({"status": None, "error": str(exc)}, ensure_ascii=False))
            return 1
        finally:
            workspaces.close()
        print(json.dumps({"status": result, "error": None}, ensure_ascii=False, indent=2))
        return 0

    return anyio.run(run)


if __name__ == "__main__":
    raise SystemExit(main())

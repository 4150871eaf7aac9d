"""Starting the real server as a process, for tests that go through real doors."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx


def server_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "mcp_server_ide", *args]


def stdio_params(root: Path, *args: str, env: dict[str, str] | None = None):  # -> StdioServerParameters
    from mcp import StdioServerParameters

    full_env = dict(os.environ)
    full_env.update(env or {})
    return StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_server_ide", "--workspace", str(root), *args], env=full_env
    )


@dataclass
class HttpServer:
    process: subprocess.Popen[bytes]
    url: str
    log_path: Path

    @property
    def mcp_url(self) -> str:
        return self.url + "/mcp"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


def start_http_server(
    root: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 30
) -> HttpServer:
    """Start ``mcp-server-ide --http --port 0`` and wait until it prints the URL it listens on."""
    log_path = root.parent / f"server-{os.getpid()}-{time.monotonic_ns()}.log"
    full_env = dict(os.environ)
    full_env.update(env or {})
    extra = list(args)
    if "--port" not in extra:
        extra += ["--port", "0"]
    with open(log_path, "wb") as log:  # the child keeps its own copy of the descriptor
        process = subprocess.Popen(
            server_command("--http", "--workspace", str(root), *extra),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=full_env,
            start_new_session=True,
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log_path.read_text(errors="replace")
        found = re.search(r"listening on (http://\S+?)(/mcp)?\s", text)
        if found:
            url = found.group(1)
            server = HttpServer(process, url, log_path)
            try:
                httpx.get(url + "/mcp/status", timeout=5)
            except httpx.HTTPError:
                time.sleep(0.05)
                continue
            return server
        if process.poll() is not None:
            raise RuntimeError(f"server exited early:\n{text}")
        time.sleep(0.05)
    process.kill()
    raise RuntimeError(f"server did not start in {timeout}s:\n{log_path.read_text(errors='replace')}")

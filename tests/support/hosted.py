"""The hosted service as a real process, with users, tokens and projects made in its store first."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx


def hosted_cli(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``mcp-server-ide hosted ARGS --data DATA``, as an operator runs it."""
    return subprocess.run(
        [sys.executable, "-m", "mcp_server_ide", "hosted", *args, "--data", str(data)],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


@dataclass
class HostedService:
    data: Path
    process: subprocess.Popen[bytes]
    url: str
    log_path: Path
    tokens: dict[str, str] = field(default_factory=dict)
    token_ids: dict[str, str] = field(default_factory=dict)
    projects: dict[str, str] = field(default_factory=dict)

    def project_url(self, key_or_id: str, rest: str = "/mcp") -> str:
        return f"{self.url}/p/{self.projects.get(key_or_id, key_or_id)}{rest}"

    def auth(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[who]}"}

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self, timeout: float = 60) -> int | None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
                return None
        return self.process.returncode


def processes_naming(folder: Path) -> list[int]:
    """Live processes whose command line names ``folder`` (a test's own, unique path): a hosted
    project's sandboxes (bubblewrap names the project's folder it mounts at /workspace)."""
    marker = str(folder).encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
        except OSError:
            continue
        if marker in cmdline:
            found.append(int(name))
    return found


def start_hosted(data: Path, *args: str, timeout: float = 60) -> HostedService:
    log_path = data.parent / f"hosted-{os.getpid()}-{time.monotonic_ns()}.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "mcp_server_ide", "hosted", "--data", str(data), "--port", "0", *args],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = re.search(r"listening on (http://\S+)", log_path.read_text(errors="replace"))
        if found:
            service = HostedService(data, process, found.group(1), log_path)
            while time.monotonic() < deadline:
                try:
                    if httpx.get(service.url + "/healthz", timeout=5).status_code == 200:
                        return service
                except httpx.HTTPError:
                    pass
                time.sleep(0.1)
            break
        if process.poll() is not None:
            break
        time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"the hosted service did not start:\n{log_path.read_text(errors='replace')}")

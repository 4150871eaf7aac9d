"""What the fuzz suites share: a throwaway workspace beside an "outside" folder of marker files, a
snapshot of that folder, the real server started inside bubblewrap, and the checks on every answer.

Layout under ``base``: ``ws/`` (a git repository with a few files and links out), ``outside/``
(markers, never to change or be shown) and ``state/`` (the server's state folder). When bubblewrap
is here the server runs with the whole filesystem read-only except ``base`` and a private /tmp, so a
generated command line cannot harm the machine; the snapshot then checks ``outside`` itself.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from .servers import HttpServer

SECRET = "OUTSIDE-SECRET-7d1f"
"""Written in every outside marker: seeing it in an answer is a leak."""
TRACEBACK = "Traceback (most recent call last)"


@dataclass
class Sandbox:
    base: Path
    ws: Path = field(init=False)
    outside: Path = field(init=False)
    state: Path = field(init=False)

    def __post_init__(self) -> None:
        self.ws, self.outside, self.state = self.base / "ws", self.base / "outside", self.base / "state"

    @classmethod
    def create(cls, base: Path) -> Sandbox:
        box = cls(base)
        for folder in (box.ws, box.outside, box.state):
            folder.mkdir(parents=True)
        for name in ("secret.txt", "notes.md", "deep/er/marker.py"):
            target = box.outside / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(f"{SECRET} {name}\n")
        (box.ws / "src").mkdir()
        (box.ws / "src" / "app.py").write_text("def main() -> int:\n    return 1\n")
        (box.ws / "README.md").write_text("# fuzz\n")
        (box.ws / "data.txt").write_text("alpha\nbeta\ngamma\n")
        (box.ws / "leak").symlink_to(box.outside / "secret.txt")
        (box.ws / "out").symlink_to(box.outside)
        git = ["git", "-C", str(box.ws), "-c", "user.name=fuzz", "-c", "user.email=fuzz@example.invalid"]
        subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-q", "-m", "start"], check=True)
        return box

    def snapshot(self) -> dict[str, str]:
        """Every entry under ``outside`` with its kind, mode and content hash."""
        out: dict[str, str] = {}
        for dirpath, dirnames, filenames in os.walk(self.outside):
            for name in sorted(dirnames + filenames):
                path = Path(dirpath, name)
                st = path.lstat()
                digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
                out[str(path.relative_to(self.outside))] = f"{st.st_mode:o} {st.st_size} {digest}"
        return out

    def problems_in(self, body: str, sent: str = "") -> list[str]:
        """What must never be in an answer: a traceback, outside content, a host path beside ``ws``
        (one the caller ``sent`` itself may be echoed back)."""
        found = []
        if TRACEBACK in body:
            found.append("traceback")
        if SECRET in body:
            found.append("outside file content")
        for hit in re.finditer(re.escape(str(self.base)) + r"(/[^\s\"'\\]*)?", body):
            rest = hit.group(1) or ""
            if not (rest == "/ws" or rest.startswith("/ws/")) and hit.group(0) not in sent:
                found.append(f"host path outside the workspace: {hit.group(0)!r}")
        return found


REPOSITORY = Path(__file__).resolve().parents[2]


def kept_under_tmp(*paths: Path) -> list[str]:
    """``--ro-bind`` arguments that bring back, over the private /tmp, each of ``paths`` that lives
    under /tmp (a clone, its virtualenv or the interpreter there would otherwise be hidden)."""
    tmp = Path("/tmp").resolve()
    args: list[str] = []
    for path in dict.fromkeys(p.resolve() for p in paths):
        if path.is_relative_to(tmp) and path != tmp:
            args += ["--ro-bind", str(path), str(path)]
    return args


def sandboxed(command: list[str], box: Sandbox) -> list[str]:
    """``command`` inside bubblewrap (read-only root, writable ``base``), or as is when bwrap is absent.
    The checkout, its virtualenv and the interpreter stay visible wherever they live, /tmp included."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return command
    kept = kept_under_tmp(REPOSITORY, Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).parent)
    return [
        bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", *kept,
        "--bind", str(box.base), str(box.base), "--die-with-parent", *command,
    ]  # fmt: skip


def server_env(box: Sandbox) -> dict[str, str]:
    env = dict(os.environ)
    env.update(XDG_STATE_HOME=str(box.state), HOME=str(box.state), GIT_TERMINAL_PROMPT="0")
    env.pop("MCP_IDE_TOKEN", None)
    return env


def start_sandboxed_http(box: Sandbox, *args: str, timeout: float = 60) -> HttpServer:
    """The real ``--http`` server on a free port, sandboxed; waits until it answers."""
    log_path = box.base / f"server-{time.monotonic_ns()}.log"
    command = [sys.executable, "-m", "mcp_server_ide", "--http", "--port", "0", "--workspace", str(box.ws)]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            sandboxed([*command, *args], box),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=server_env(box),
            start_new_session=True,
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log_path.read_text(errors="replace")
        found = re.search(r"listening on (http://\S+?)(/mcp)?\s", text)
        if found:
            try:
                httpx.get(found.group(1) + "/mcp/status", timeout=5)
                return HttpServer(process, found.group(1), log_path)
            except httpx.HTTPError:
                pass
        if process.poll() is not None:
            raise RuntimeError(f"server exited early:\n{text}")
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    raise RuntimeError(f"server did not start in {timeout}s:\n{log_path.read_text(errors='replace')}")


def stop(server: HttpServer, sig: int = signal.SIGTERM) -> None:
    """Signal the server's whole process group (bwrap and the server in it), then reap it."""
    if server.process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.process.pid, sig)
        try:
            server.process.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(server.process.pid, signal.SIGKILL)
            server.process.wait(5)


def budget(variable: str, default: int) -> int:
    """A suite's budget: the environment variable's value, else ``default``."""
    return int(os.environ.get(variable, default))

"""PostgreSQL, Redis and HAProxy from Debian's packages, each a real process on a free loopback port.

Each lives in a temporary folder of its own and is stopped (and its folder removed) by ``stop()``.
PostgreSQL refuses to run as root, so when the tests run as root it runs as the ``postgres`` user
the Debian package makes (or ``nobody``), with its folder owned by that user. A missing program is
:func:`~.system.missing`: a failure under CI, a skip elsewhere.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from .net import free_port
from .system import missing


@dataclass
class Service:
    name: str
    process: subprocess.Popen[bytes]
    port: int
    folder: Path
    log_path: Path
    url: str = ""
    extra: dict[str, str] = field(default_factory=dict)
    stop_signal: int = signal.SIGTERM

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(self.stop_signal)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        shutil.rmtree(self.folder, ignore_errors=True)


def wait_port(port: int, process: subprocess.Popen[bytes], what: str, log: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    process.kill()
    text = log.read_text(errors="replace") if log.exists() else ""
    raise RuntimeError(f"{what} did not start on 127.0.0.1:{port}:\n{text[-4000:]}")


def postgres_bin(name: str) -> str | None:
    """``initdb``/``postgres`` from PATH, else from Debian's ``/usr/lib/postgresql/<version>/bin``."""
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def _unprivileged() -> tuple[int, int] | None:
    """The uid/gid PostgreSQL runs as when we are root (it refuses root); None when we are not."""
    if os.geteuid() != 0:
        return None
    for user in ("postgres", "nobody"):
        try:
            entry = pwd.getpwnam(user)
        except KeyError:
            continue
        return entry.pw_uid, entry.pw_gid
    raise RuntimeError("running as root with neither a 'postgres' nor a 'nobody' user to run PostgreSQL as")


def start_postgres() -> Service:
    """A fresh PostgreSQL cluster on a free loopback port; ``url`` is ``postgresql://…/mcp``."""
    initdb, postgres = postgres_bin("initdb"), postgres_bin("postgres")
    if initdb is None or postgres is None:
        missing("PostgreSQL (initdb, postgres)", "apt-get install -y postgresql")
    as_user = _unprivileged()
    folder = Path(tempfile.mkdtemp(prefix="mcp-ide-pg-"))
    data, sockets = folder / "data", folder / "run"
    sockets.mkdir()
    log_path = folder / "postgres.log"
    log_path.touch()
    user_kw: dict[str, int] = {}
    if as_user is not None:
        uid, gid = as_user
        for path in (folder, sockets, log_path):
            os.chown(path, uid, gid)
        user_kw = {"user": uid, "group": gid, "extra_groups": []}
    subprocess.run(
        [initdb, "-D", str(data), "-U", "mcp", "--auth=trust", "-E", "UTF8", "--no-sync"],
        check=True,
        capture_output=True,
        cwd=folder,
        timeout=180,
        **user_kw,  # pyright: ignore[reportArgumentType]
    )
    port = free_port()
    with open(log_path, "ab") as log:
        process = subprocess.Popen(
            [
                postgres,
                "-D",
                str(data),
                "-p",
                str(port),
                "-h",
                "127.0.0.1",
                "-k",
                str(sockets),
                "-c",
                "fsync=off",
                "-c",
                "synchronous_commit=off",
                "-c",
                "full_page_writes=off",
                "-c",
                "max_connections=200",
            ],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=folder,
            start_new_session=True,
            **user_kw,  # pyright: ignore[reportArgumentType]
        )
    wait_port(port, process, "PostgreSQL", log_path)
    service = Service("postgres", process, port, folder, log_path, stop_signal=signal.SIGINT)  # fast shutdown
    base = f"postgresql://mcp@127.0.0.1:{port}"
    _wait_pg(base + "/postgres")
    service.extra["base"] = base
    service.url = new_database(service, "mcp")
    return service


def _wait_pg(url: str, timeout: float = 60) -> None:
    import psycopg

    deadline = time.monotonic() + timeout
    while True:
        try:
            psycopg.connect(url, connect_timeout=5).close()
            return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def new_database(pg: Service, name: str) -> str:
    """Create database ``name`` in the cluster; its URL."""
    import psycopg

    with psycopg.connect(pg.extra["base"] + "/postgres", autocommit=True) as c:
        c.execute(f'CREATE DATABASE "{name}"')
    return f"{pg.extra['base']}/{name}"


def start_redis() -> Service:
    """A Redis server on a free loopback port, no persistence; ``url`` is ``redis://127.0.0.1:PORT/0``."""
    server = shutil.which("redis-server")
    if server is None:
        missing("redis-server", "apt-get install -y redis-server")
    folder = Path(tempfile.mkdtemp(prefix="mcp-ide-redis-"))
    port = free_port()
    log_path = folder / "redis.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [
                server,
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(folder),
                "--protected-mode",
                "yes",
            ],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    wait_port(port, process, "Redis", log_path)
    return Service("redis", process, port, folder, log_path, url=f"redis://127.0.0.1:{port}/0")


def haproxy_config(port: int, backends: dict[str, int], stats_socket: Path | None = None) -> str:
    """``backends`` (name -> loopback port), each checked on ``GET /healthz``, with project affinity as
    deploy/scaleout.sh has it: the project part of ``/p/{project}/…`` is hashed (consistent hashing),
    so a project's requests reach one worker while it is up, and another once it is down. Each server
    has weight 100: consistent hashing puts 16 points per unit of weight on its ring, and with weight 1
    two workers split the project ids ~44/56 instead of evenly."""
    servers = "\n".join(
        f"    server {name} 127.0.0.1:{p} weight 100 check inter 500ms fall 2 rise 2"
        for name, p in backends.items()
    )
    stats = f"    stats socket {stats_socket} mode 600 level admin\n" if stats_socket else ""
    return f"""global
    maxconn 4096
{stats}
defaults
    mode http
    timeout connect 2s
    timeout client 120s
    timeout server 120s
    timeout tunnel 1h
    retries 3
    option redispatch
    option http-server-close

frontend mcp
    bind 127.0.0.1:{port}
    default_backend workers

backend workers
    balance hash path,field(3,/)
    hash-type consistent
    option httpchk GET /healthz
    http-check expect status 200
    retry-on conn-failure
{servers}
"""


def start_haproxy(backends: dict[str, int], port: int | None = None) -> Service:
    """HAProxy on ``port`` (default: a free loopback one) in front of ``backends``; ``url`` is its
    ``http://…``."""
    binary = shutil.which("haproxy") or ("/usr/sbin/haproxy" if os.path.exists("/usr/sbin/haproxy") else None)
    if binary is None:
        missing("haproxy", "apt-get install -y haproxy")
    folder = Path(tempfile.mkdtemp(prefix="mcp-ide-haproxy-"))
    port = port or free_port()
    config = folder / "haproxy.cfg"
    config.write_text(haproxy_config(port, backends))
    log_path = folder / "haproxy.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [binary, "-db", "-f", str(config)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    wait_port(port, process, "HAProxy", log_path)
    return Service("haproxy", process, port, folder, log_path, url=f"http://127.0.0.1:{port}")

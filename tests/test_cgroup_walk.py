"""A cgroup's process count survives its child cgroups ending meanwhile.

The hosted load test found it: ``Cgroup.pids()`` walked the cgroup with ``Path.glob``, which raised
FileNotFoundError when a command's cgroup was removed mid-walk, and that ended the disk quota's
watchdog thread (``engines/quota.py``) until the next command. Here a folder tree shaped like a
cgroup (``cgroup.procs`` files) has child folders made and removed by a thread while ``pids()``
walks it: a real cgroup cannot be churned this fast by a test, the walk is the same code.
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path


def test_pids_never_fails_while_child_cgroups_come_and_go(tmp_path: Path):
    from mcp_server_ide.engines.processes.cgroups import Cgroup

    (tmp_path / "cgroup.procs").write_text("1\n")
    stop = threading.Event()

    def churn() -> None:
        i = 0
        while not stop.is_set():
            made = tmp_path / f"cmd-{i % 50}" / "sub"
            made.mkdir(parents=True, exist_ok=True)
            (made / "cgroup.procs").write_text("2\n")
            shutil.rmtree(tmp_path / f"cmd-{(i + 25) % 50}", ignore_errors=True)
            i += 1

    group = Cgroup.__new__(Cgroup)  # only its folders: no cgroup hierarchy is made for this
    group.dirs = {"unified": tmp_path}
    churner = threading.Thread(target=churn, daemon=True)
    churner.start()
    failures = []
    try:
        for _ in range(300):
            try:
                assert 1 in group.pids()
            except OSError as exc:
                failures.append(exc)
    finally:
        stop.set()
        churner.join(30)
    assert not failures, failures[:3]

"""``Repo.ensure`` re-finds the repository when ``.git`` changes; a call running meanwhile on another
thread keeps seeing the repository as it was, never none (craft issue, bug 9).

Engine level, with a real repository: the window is held open by making ``.git`` a FIFO (a real
one), so the re-check blocks reading it until the test writes the ``gitdir:`` line. No tool call
could stop a thread inside that window on purpose.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from mcp_server_ide.engines import git as git_engine
from mcp_server_ide.workspace import Workspace

from .support.gitrepo import init_repo, isolated_git


@pytest.fixture(autouse=True)
def _git_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolated_git(monkeypatch, tmp_path / "home")


def _open_writer(fifo: Path, deadline: float) -> int:
    """Open the FIFO for writing once a reader has it open (that reader is inside ``ensure``)."""
    while True:
        try:
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # ENXIO: nobody reads it yet
            if time.monotonic() > deadline:
                raise
            time.sleep(0.005)


def test_a_concurrent_call_sees_the_old_repository_while_ensure_rechecks(
    ws_path: Path, tmp_path: Path
) -> None:
    init_repo(ws_path).commit("first", {"a.txt": "a\n"})
    ws = Workspace.open(ws_path)
    try:
        repo = git_engine.repo(ws)
        old = repo.gitdir
        assert old == (ws_path / ".git").resolve()
        # The repository moves out and .git becomes a pointer to it, read through a FIFO.
        moved = tmp_path / "moved.git"
        os.rename(ws_path / ".git", moved)
        os.mkfifo(ws_path / ".git")
        errors: list[BaseException] = []

        def recheck() -> None:
            try:
                repo.ensure()
            except BaseException as exc:  # reported by the test below
                errors.append(exc)

        worker = threading.Thread(target=recheck)
        worker.start()
        fd = _open_writer(ws_path / ".git", time.monotonic() + 10)
        try:
            # ensure() is now reading .git: what another call sees in the meantime.
            assert repo.gitdir == old
            assert repo._env("read")["GIT_DIR"] == str(old)
            os.write(fd, f"gitdir: {moved}\n".encode())
        finally:
            os.close(fd)
        worker.join(10)
        assert not worker.is_alive()
        assert not errors, errors
        assert repo.gitdir == moved.resolve()
        assert repo._env("read")["GIT_DIR"] == str(moved.resolve())
    finally:
        ws.close()

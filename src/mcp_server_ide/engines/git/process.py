"""One git process: :func:`spawn`, the one seam between the git engine and the shared process engine.

Every git command of the server starts here, called by ``RepoCore._spawn``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import processes


@dataclass
class Completed:
    argv: list[str]
    returncode: int
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    truncated: bool = False
    """Stdout was longer than the cap: it holds the head and the tail around a marker."""

    @property
    def out(self) -> str:
        return self.stdout.decode("utf-8", "replace")

    @property
    def err(self) -> str:
        return self.stderr.decode("utf-8", "replace")


def spawn(
    argv: Sequence[str], *, env: dict[str, str | None], cwd: Path, timeout: float, max_output: int
) -> Completed:
    """Run one git command through the shared process engine (``engines.processes.run``).

    It gives the containment every child of the server gets: own session and process group, stdin on
    ``/dev/null``, the server's environment reduced to an allow-list (``env`` here adds git's own
    variables; ``None`` removes one), head + tail capture of at most ``max_output`` bytes per stream,
    and on timeout or cancellation the whole tree killed (TERM, then KILL, setsid escapees included);
    processes a command leaves behind are stopped too. ``ws`` is not passed on purpose: hosted
    commands go through bubblewrap without network, and git itself (not a user's command) runs here
    with the repository's programs already switched off.
    """
    result = processes.run(list(argv), cwd=cwd, env=env, timeout_s=timeout, max_output=max_output)
    return Completed(
        argv=list(argv),
        returncode=result.exit_code if result.exit_code is not None else -1,
        stdout=result.stdout_bytes,
        stderr=result.stderr_bytes,
        timed_out=result.timed_out,
        truncated=result.stdout_total > max_output,
    )

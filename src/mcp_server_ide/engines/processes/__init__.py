"""The process engine: every child process the server starts goes through here.

Containment (SECURITY.md §4), for one-shot commands, jobs, pty terminals and language servers
alike: each command runs in its own cgroup (or pid namespace) that it cannot leave, with resource
limits, in its own session and process group, with stdin on ``/dev/null`` (unless the caller gives
input), a scrubbed environment, a ``cwd`` resolved inside the workspace by the sandbox, a head +
tail output cap and a timeout; the whole tree is killed on timeout, cancellation, workspace close
and server exit, and what a finished command left running is stopped too. In a hosted workspace
commands run inside bubblewrap; without ``bwrap`` they are refused.

Which module holds what:

- :mod:`.env`: the child's environment (allow-list, no secrets) and the tree tag variable.
- :mod:`.command`: a command checked and resolved before it starts (argv, shell, cwd).
- :mod:`.containment`: starting a process contained (cgroup, session, ``PR_SET_PDEATHSIG``,
  bubblewrap) and killing its whole tree; :mod:`.procfs` reads ``/proc`` for it.
- :mod:`.cgroups`: a cgroup a command (v1 or v2), and killing one; :mod:`.limits`: what a command
  and a workspace may use, and how a hit is worded.
- :mod:`.capture`: head + tail capture, the rolling output log, reading pipes.
- :mod:`.sweeper`: the background thread that stops what finished commands left running.
- :mod:`.oneshot`: :func:`run` and :func:`run_async`, a command to completion.
- :mod:`.jobs`: background jobs; :mod:`.terminals`: persistent shells on a pty.
- :mod:`.shutdown`: nothing outlives the server.

Nothing here knows about MCP: tools in ``tools/terminal.py`` shape the results.
"""

from __future__ import annotations

from .capture import OutputLog, decode
from .command import default_shell
from .env import child_env, is_secret_name
from .jobs import Job, Jobs
from .oneshot import MAX_TIMEOUT_S, Completed, run, run_async
from .sendable import check_sendable
from .sweeper import flush_sweeps
from .terminals import Terminal, Terminals

__all__ = [
    "MAX_TIMEOUT_S",
    "Completed",
    "Job",
    "Jobs",
    "OutputLog",
    "Terminal",
    "Terminals",
    "check_sendable",
    "child_env",
    "decode",
    "default_shell",
    "flush_sweeps",
    "is_secret_name",
    "run",
    "run_async",
]

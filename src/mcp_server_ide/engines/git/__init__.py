"""The git engine: every git operation of the server runs here, through the real ``git`` CLI.

Rules (SECURITY.md §3), enforced in this package and nowhere else: arguments are data (checked
before any process starts, revisions after ``--end-of-options``, paths after ``--`` as literal
pathspecs, through :func:`sandbox.resolve`); the repository is the workspace's (``GIT_DIR`` and
``GIT_WORK_TREE`` set to the root); repository configuration is untrusted input (reads, and every
operation in an untrusted or hosted workspace, run with fsmonitor, hooks, filters and external
diff off); never a prompt; every call has a timeout and an output cap.

Modules, from the bottom up:

- ``args``: argument checks. ``process``: one git process (``spawn``, the seam to ``engines.processes``).
- ``messages``: git's words made fit for a caller (redacted, trimmed) and the shared failures.
- ``discovery``: finding git and the repository; file stamps. ``config``: the cached configuration.
- ``environment``: each process's environment and forced configuration (the containment).
- ``core``: ``RepoCore``, the repository and ``git()``, the one way to run a command in it.
- ``refs``: HEAD, revisions, branch names, paths. ``status``: changes (``StatusEntry``).
- ``history``: file history (cached), message search, commit details. ``diff``: diffs of a path.
- ``branches``: branch info, switch, create. ``commit``: commits. ``pull``: remotes and pull.
- ``repository``: ``Repo`` (all of the above) and ``repo(ws)``.
- ``query``: the read-only questions the MCP surface asks (resources, prompts, completion).
"""

from .args import check_remote, check_value
from .pull import NETWORK_DANGER
from .repository import Repo, repo
from .status import StatusEntry

__all__ = ["NETWORK_DANGER", "Repo", "StatusEntry", "check_remote", "check_value", "repo"]

"""The workspace's repository, :class:`Repo`: every operation the git tools need, in one object.

``Repo`` is the operation classes together (each a module of this package, each built on
``refs.Refs`` and ``core.RepoCore``); its method resolution order is
Pulls, Branches, Commits, Status, History, Diffs, Refs, RepoCore.
"""

from __future__ import annotations

from ...workspace import Workspace
from .commit import Commits
from .diff import Diffs
from .pull import Pulls


class Repo(Pulls, Commits, Diffs):
    """The git repository at the workspace root and every operation the tools need."""


def repo(ws: Workspace) -> Repo:
    """The workspace's git repository (one per workspace), or a ``Git not available`` failure."""
    r = ws.service(Repo)
    r.ensure()
    return r

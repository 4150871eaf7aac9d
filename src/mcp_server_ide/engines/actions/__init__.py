"""Actions: what this server can really do on a workspace right now, under VS Code's command ids.

Running an action starts the work without waiting for it to finish (seed 000: "doesn't wait"):
tests, tasks and run configurations are jobs of the process engine; in-process work gets a second
to fail, then goes on as a job.

Which module holds what:

- :mod:`.catalogue`: :class:`Action`, :func:`available` (the actions that do something now),
  :func:`find`, :func:`execute`, and :class:`ActionSource` (a service that adds its own, a VS
  Code bridge).
- :mod:`.work`: in-process work on a thread (:class:`ActionWork`), a job once it outlives a second.
- :mod:`.formatting`: formatting the active file, ruff rewrites (organize imports, fix all).
- :mod:`.testrunners`: the detected test runners (pytest, npm test, go test, cargo test).
"""

from __future__ import annotations

from .catalogue import Action, ActionSource, available, execute, find

__all__ = ["Action", "ActionSource", "available", "execute", "find"]

"""The debugger: a Debug Adapter Protocol client driving real adapters (debugpy for Python, vscode-js-debug
for node).

Modules, one idea each: ``wire`` (Content-Length framing), ``protocol`` (the DAP JSON schema shipped
with debugpy: requests are checked against it, never a second hand-written copy), ``client`` (one
adapter process: requests, events, reverse requests, spawned through the process engine),
``adapters`` (which adapter runs which launch type, and its launch arguments), ``jsdebug`` (js-debug's
DAP server, installed from npm on first use), ``attach`` (attach
only to the workspace's own processes), ``breakpoints`` (the editor model's breakpoints as DAP
source breakpoints, their options, the adapter's verdicts), ``render`` (variables bounded for a
model), ``session`` (one session's state machine), ``sessions`` (a workspace's sessions), ``vscode``
(sessions VS Code's own debugger runs, through the companion extension, when it is connected).
"""

from .render import Renderer, cut
from .session import Session
from .sessions import Debugging

__all__ = ["Debugging", "Renderer", "Session", "cut"]

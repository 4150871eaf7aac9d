"""Terminal tools (seed 000, "Terminal" and "Terminal Info"), by what a developer does.

Every process goes through the process engine (:mod:`...engines.processes`): own process group,
timeout that kills the whole tree, head + tail output caps, scrubbed environment, stdin closed,
``cwd`` inside the workspace. Three ways to run something:

- ``run_command_on_background``: run to completion and return the output (seed).
- ``execute_terminal_command``: type the command into a persistent pty terminal session (seed);
  read what it printed with ``read_terminal_output``.
- ``start_job``: a long command in the background (a server, a build, a watch); read its output
  with ``get_job_output`` from an offset, feed it input, cancel it.

Modules:

- :mod:`.commands`: running a command (in a terminal, to completion, per OS), ``wait``, OS and shell info;
- :mod:`.terminals`: interactive terminal sessions (create, read, send input, list, kill);
- :mod:`.jobs`: background jobs (start, read output, send input, list, cancel);
- :mod:`.params`: the parameters they share, their limits and checks; :mod:`.output`: output read
  from an offset and waiting for more; :mod:`.trust`: confirmation in an untrusted workspace.

Importing the package registers the tools of :data:`TOOL_MODULES`, in that order: the order of
``tools/list`` and of the reference page (an import sorter must not be able to change it).
"""

import importlib

TOOL_MODULES = ("commands", "terminals", "jobs")

for _module in TOOL_MODULES:
    importlib.import_module(f"{__name__}.{_module}")

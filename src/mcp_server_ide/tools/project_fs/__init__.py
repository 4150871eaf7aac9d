"""Sandbox file tools (seed 001, ``project_fs_*``): read, list, write and edit project files.

Paths are relative to the workspace root; ``/workspace/...`` names the root, as in the seed's
hosted service. Every path goes through the sandbox; every write through ``textio`` (atomic,
journaled, keeping encoding, BOM, line endings and mode).

Modules:

- :mod:`.read`: ``project_fs_read`` (slices, the head + tail cut of long reads and its marker,
  streaming reads of huge files);
- :mod:`.listing`: ``project_fs_list`` (.gitignore filtering, paging) and :mod:`.walk`, the walk behind
  it that never follows a link;
- :mod:`.writes`: ``project_fs_write`` and ``project_fs_edit`` (and the refusal of a truncated read's text);
- :mod:`.params`: the parameters they share.

Importing the package registers the tools of :data:`TOOL_MODULES`, in that order: the order of
``tools/list`` and of the reference page (an import sorter must not be able to change it).
"""

import importlib

TOOL_MODULES = ("read", "listing", "writes")

for _module in TOOL_MODULES:
    importlib.import_module(f"{__name__}.{_module}")

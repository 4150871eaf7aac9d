"""Hosted answers name the project's root ``/workspace``, never the folder it lives in on the host.

A hosted project's tools see their root as ``/workspace`` (the hosted-sandbox tools' convention);
the runner passes every result and failure message of a hosted workspace through :func:`masked` /
:func:`masked_text`, so no tool leaks the server's data layout (``/srv/data/projects/p_…/src/a.py``
becomes ``/workspace/src/a.py``).
"""

from __future__ import annotations

import os

SHOWN_ROOT = "/workspace"


def masked_text(text: str, root: str) -> str:
    """``text`` with each mention of ``root`` (as a whole path component) shown as ``/workspace``."""
    if root not in text:
        return text
    out, i = [], 0
    while (j := text.find(root, i)) >= 0:
        end = j + len(root)
        whole = end == len(text) or text[end] in (os.sep, "'", '"', " ", ":", ")", ",", "\n")
        out.append(text[i:j] + (SHOWN_ROOT if whole else root))
        i = end
    out.append(text[i:])
    return "".join(out)


def masked(value: object, root: str) -> object:
    """A JSON-ready result with every string that is the root, or a path under it, shown under
    ``/workspace`` (in place for lists and dicts; other values as they are)."""
    if isinstance(value, str):
        if value == root:
            return SHOWN_ROOT
        if value.startswith(root + os.sep):
            return SHOWN_ROOT + value[len(root) :]
        return value
    if isinstance(value, list):
        for i, item in enumerate(value):
            value[i] = masked(item, root)
    elif isinstance(value, dict):
        for key, item in value.items():
            value[key] = masked(item, root)
    return value


def shown_path(path: str, root: str) -> str:
    """A host path as the project sees it: under ``/workspace`` when it is the root or under it."""
    shown = masked(path, root)
    return shown if isinstance(shown, str) else path


def host_path(path: str, root: str) -> str:
    """A path the project names (``/workspace/src/a.py``) as the host's; any other path as it is."""
    if path == SHOWN_ROOT:
        return root
    if path.startswith(SHOWN_ROOT + "/"):
        return root + path[len(SHOWN_ROOT) :]
    return path

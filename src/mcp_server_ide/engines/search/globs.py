"""Gitignore-style globs matched against root-relative POSIX paths (the include/exclude filters)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..failures import ToolFailure

if TYPE_CHECKING:
    from ...workspace import Workspace

WILDCARDS = frozenset("*?[{")


def matcher(globs: tuple[str, ...]) -> Callable[[str], bool] | None:
    """A test of root-relative POSIX paths against gitignore-style globs (None: no globs, all pass).

    A glob without a slash matches a name at any depth ('*.py'); with one it is anchored at the root
    ('src/**', '/docs/*.md'); a glob that names a folder matches everything below it ('tests').
    """
    if not globs:
        return None
    from ..regex import compile_linear  # RE2: '*a*a*a*…' globs backtrack on Python's re

    patterns = [compile_linear(_glob_regex(check_glob(g)), what=f"glob {g!r}") for g in globs]
    return lambda path: any(p.match(path) for p in patterns)


def _glob_regex(glob: str) -> str:
    glob = glob.strip()
    anchored = glob.startswith("/") or "/" in glob.rstrip("/")
    body = glob.strip("/")
    out, i = [], 0
    while i < len(body):
        ch = body[i]
        if body.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if body.startswith("/**", i) and i + 3 == len(body):
            out.append("(?:/.*)?")
            i += 3
            continue
        if body.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            close = body.find("]", i + 2 if body[i + 1 : i + 2] in ("!", "^") else i + 1)
            if close < 0:
                out.append(re.escape(ch))
            else:
                inner = body[i + 1 : close]
                if inner[:1] in ("!", "^"):
                    inner = "^" + inner[1:]
                out.append("[" + inner.replace("\\", "\\\\") + "]")
                i = close + 1
                continue
        elif ch == "{":
            close = body.find("}", i)
            if close < 0:
                out.append(re.escape(ch))
            else:
                options = body[i + 1 : close].split(",")
                out.append("(?:" + "|".join(_glob_regex_part(o) for o in options) + ")")
                i = close + 1
                continue
        elif ch == "\\" and i + 1 < len(body):
            out.append(re.escape(body[i + 1]))
            i += 2
            continue
        else:
            out.append(re.escape(ch))
        i += 1
    core = "".join(out)
    prefix = "" if anchored else "(?:.*/)?"
    return f"^{prefix}{core}(?:/.*)?$"


def _glob_regex_part(text: str) -> str:
    return "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in text)


def exact_glob(rel: str) -> str | None:
    """A ripgrep glob matching the root-relative POSIX path ``rel`` and nothing else: anchored at the
    root (``/`` first), every character but ASCII letters, digits, ``/`` and ``_ . -`` escaped with a
    backslash (ripgrep's globs take ``\\c`` as a literal ``c`` for any ``c``). None when ripgrep
    could not take it as given: a character that is not printable (a control or format character,
    a space other than " ", a name that is not UTF-8), since ripgrep trims a glob's trailing
    white space and only reads UTF-8 globs."""
    if not rel.isprintable():
        return None
    return "/" + _NOT_PLAIN.sub(r"\\\g<0>", rel)


_NOT_PLAIN = re.compile(r"[^A-Za-z0-9/_.-]")


def check_glob(glob: str) -> str:
    if not glob or "\x00" in glob or "\n" in glob:
        raise ToolFailure(f"invalid glob {glob!r}: give a pattern such as '*.py' or 'src/**'")
    return glob


def confined(ws: Workspace, glob: str) -> str:
    """``glob`` as a root-relative glob, refused (a ``ToolFailure`` naming the rule) when its literal
    folders lead outside the workspace: ``..``, an absolute path elsewhere, a symlink that points out.

    The literal part is the segments before the first one with a wildcard ('src/**' -> 'src'); it
    goes through the sandbox like any path a caller gives, so a glob filter follows the same walls.
    """
    from .. import sandbox

    check_glob(glob)
    parts = glob.replace("\\", "/").split("/")
    cut = next((i for i, part in enumerate(parts) if WILDCARDS & set(part)), len(parts))
    literal, rest = "/".join(parts[:cut]), "/".join(parts[cut:])
    if not literal.strip("/"):
        return glob
    resolved = sandbox.resolve(ws, literal)
    return "/".join(p for p in (resolved.rel, rest) if p) or glob

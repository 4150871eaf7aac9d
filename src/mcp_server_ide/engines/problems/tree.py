"""The state of the tree a source looks at, cheaply: the paths, sizes and mtimes of its files.

One walk of every root (skipping ``.git``, ``node_modules``, ``dist``, virtualenvs and tool caches)
collects the files by kind; a source's key is a hash over the files of the kinds it reads (its
sources and its configuration files), so an edit to a TypeScript file does not make the Python
sources run again.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from ...workspace import Workspace
from .. import sandbox

SKIP_DIRS = frozenset(
    {".git", "node_modules", "dist", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache",
     ".pytest_cache", ".ruff_cache", ".hg", ".svn"}
)  # fmt: skip

PYTHON = frozenset({".py", ".pyi", ".pyw"})
SCRIPT = frozenset({".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"})
CONFIG_NAMES = frozenset(
    {"pyproject.toml", "pyrightconfig.json", "setup.cfg", "ruff.toml", ".ruff.toml", ".gitignore",
     "package.json", "tsconfig.json", "jsconfig.json", ".eslintrc", ".eslintrc.json", ".eslintrc.js",
     ".eslintrc.cjs", ".eslintrc.yml", ".eslintrc.yaml", "eslint.config.js", "eslint.config.mjs",
     "eslint.config.cjs", "eslint.config.ts"}
)  # fmt: skip


@dataclass
class Tree:
    python: list[tuple[str, int, int]] = field(default_factory=list)
    script: list[tuple[str, int, int]] = field(default_factory=list)
    config: list[tuple[str, int, int]] = field(default_factory=list)
    """(root-relative path, size, mtime_ns) of each file, by kind."""

    def key(self, *kinds: str) -> str:
        digest = hashlib.blake2b(digest_size=16)
        for kind in kinds:
            for rel, size, mtime in getattr(self, kind):
                digest.update(f"{rel}\0{size}\0{mtime}\n".encode("utf-8", "surrogateescape"))
        return digest.hexdigest()


def scan(ws: Workspace) -> Tree:
    """Walk every root once (symlinks are not followed)."""
    tree = Tree()
    for index, root in enumerate(ws.roots):
        prefix = "" if index == 0 else f"{root.name}/"
        _walk(Path(root), prefix, tree)
    for kind in (tree.python, tree.script, tree.config):
        kind.sort()
    return tree


def _walk(root: Path, prefix: str, tree: Tree) -> None:
    stack = [(str(root), prefix)]
    while stack:
        folder, rel = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if name not in SKIP_DIRS and not sandbox.is_temp_name(name):
                        stack.append((entry.path, f"{rel}{name}/"))
                    continue
                if not entry.is_file(follow_symlinks=False):
                    continue
                ext = os.path.splitext(name)[1]
                bucket = (
                    tree.python if ext in PYTHON else tree.script if ext in SCRIPT
                    else tree.config if name in CONFIG_NAMES or name.startswith("tsconfig.") else None
                )  # fmt: skip
                if bucket is None:
                    continue
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            bucket.append((rel + name, st.st_size, st.st_mtime_ns))

"""Formatting the active file: the code engine's formatter, and ruff rewrites (imports, fixes).

Python files are formatted and fixed by the ruff installed with this server (a dependency, else
one on PATH); other languages by a running language server that formats. Rewrites go through the
sandbox: atomic, encoding and line endings kept, journaled.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ...workspace import Workspace
from .. import sandbox, textio
from ..failures import ToolFailure

if TYPE_CHECKING:
    from ..lsp.manager import LanguageServers

RUFF_TIMEOUT_S = 30.0
_LSP_MANAGER = __name__.rsplit(".", 2)[0] + ".lsp.manager"


def ruff_bin() -> str | None:
    """The ruff executable installed with this server (a dependency), else one on PATH."""
    candidate = Path(sys.executable).parent / "ruff"
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return str(candidate)
    try:
        from ruff.__main__ import find_ruff_bin

        return str(find_ruff_bin())
    except Exception:
        return shutil.which("ruff")


def document_formatter(ws: Workspace, path: Path) -> Callable[[], bool] | None:
    """How to format ``path`` now, or None when nothing here can: the code engine's ``format_file``
    (ruff for Python; a running language server that formats, for other languages)."""
    if path.suffix in (".py", ".pyi", ".pyw"):
        if ruff_bin() is None:
            return None
    else:
        service = _loaded_language_servers(ws)
        server = service.running_for(path) if service is not None else None
        if server is None or not server.supports("document_formatting_provider"):
            return None

    def run() -> bool:
        from .. import code

        return code.format_file(ws, sandbox.resolve_for_write(ws, str(path)))

    return run


def _loaded_language_servers(ws: Workspace) -> LanguageServers | None:
    """The workspace's language servers when the LSP engine is loaded already (asking must not import it)."""
    manager = sys.modules.get(_LSP_MANAGER)
    if manager is None:
        return None
    servers: type[LanguageServers] = manager.LanguageServers
    return next((s for s in ws.services() if isinstance(s, servers)), None)


def ruff_rewrite(ws: Workspace, path: Path, args: list[str]) -> bool:
    """Run ``ruff <args> --stdin-filename PATH -`` on the file's text and write the result back
    through the sandbox (atomic, encoding and line endings kept, journaled). Refuses, changing
    nothing, when the file changed meanwhile. True when the file changed."""
    from ..processes import run

    binary = ruff_bin()
    if binary is None:
        raise ToolFailure("unavailable: ruff is not installed", kind="unavailable")
    resolved = sandbox.resolve_for_write(ws, str(path))
    before = textio.read_current(ws, resolved)  # an unsaved buffer in VS Code is what gets formatted
    result = run(
        [binary, *args, "--stdin-filename", str(resolved.path), "-"],
        ws=ws,
        cwd=str(resolved.path.parent),
        stdin=before.text.encode("utf-8"),
        timeout_s=RUFF_TIMEOUT_S,
    )
    if result.exit_code not in (0, 1) or result.timed_out or (not result.stdout_bytes and before.text):
        raise ToolFailure(
            f"ruff could not process {resolved.display_rel!r}: {result.stderr.strip()[:500] or result.exit_code}",
            kind="invalid",
        )
    new_text = result.stdout
    if new_text == before.text:
        return False
    textio.edit_text(ws, resolved, lambda tf: new_text, expected_hash=before.hash)
    return True

"""Cold start stays small: building the server imports no engine that a first call may not need.

Language tooling (tree-sitter, rope, lsprotocol, jedi) and the HTTP stack are imported when a tool
or door needs them, not when stdio starts (issue 2: cold start to first result ≤ 0.6 s; the
benchmark measures it, this test keeps the imports that would break it out).
"""

from __future__ import annotations

import subprocess
import sys

HEAVY = ["tree_sitter", "tree_sitter_language_pack", "rope", "lsprotocol", "jedi", "pygments", "basedpyright"]


def test_building_the_server_imports_no_heavy_engine(tmp_path) -> None:
    code = (
        "import sys, pathlib\n"
        "from mcp_server_ide.server import build_server\n"
        "from mcp_server_ide.workspaces import LocalWorkspaces\n"
        "from mcp_server_ide.workspace import Policy\n"
        f"w = LocalWorkspaces(pathlib.Path({str(tmp_path)!r}), Policy())\n"
        "build_server(w.for_context)\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "", f"imported at start-up: {out.stdout.strip()}"

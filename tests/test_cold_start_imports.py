"""Cold start stays small: building the server imports no engine that a first call may not need.

Language tooling (tree-sitter, rope, lsprotocol, jedi) and the HTTP stack are imported when a tool
or door needs them, not when stdio starts (issue 2: cold start to first result ≤ 0.6 s; the
benchmark measures it, this test keeps the imports that would break it out).
"""

from __future__ import annotations

import os
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


def test_the_handshake_reads_and_answers_with_the_standard_library_alone(tmp_path) -> None:
    """The stdio handshake (doors/handshake.py) answers while the SDK imports: the CLI, the key of a
    kept answer and reading it import neither the SDK nor pydantic."""
    code = (
        "import sys\n"
        "import mcp_server_ide.cli\n"
        "from mcp_server_ide.doors import handshake\n"
        "handshake._load(handshake.cache_path(handshake.cache_key({})))\n"
        "handshake.plain_initialize(b'{}')\n"
        "print(','.join(m for m in ('mcp', 'mcp_types', 'pydantic', 'anyio') if m in sys.modules))\n"
    )
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True, env=env
    )
    assert out.stdout.strip() == "", f"imported before the handshake answers: {out.stdout.strip()}"

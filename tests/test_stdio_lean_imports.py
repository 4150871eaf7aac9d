"""A stdio server does not load what only the HTTP server or OAuth needs (sdkimport.py).

Each server here runs with ``python -v``: CPython writes ``import 'NAME' # <LOADER>`` to stderr for
every module whose code it loads, so the log says what a session loaded, whoever loaded it (a module
refused, or a placeholder that ``sdkimport`` hands the SDK, loads no file and does not count).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from mcp_types import ElicitResult

from .support.results import payload
from .support.servers import stdio_params

pytestmark = pytest.mark.anyio

NOT_OVER_STDIO = ("cryptography", "uvicorn", "click", "watchfiles", "rich", "python_multipart")
"""Top-level packages a stdio session never needs (the last four come with the first two)."""


def _imported(log: Path) -> set[str]:
    """Top-level names of every module a ``python -v`` log shows loaded from a file."""
    loaded = re.compile(r"^import '([\w.]+)' # <_frozen_importlib_external\.\w*FileLoader ", re.MULTILINE)
    return {name.partition(".")[0] for name in loaded.findall(log.read_text(errors="replace"))}


def _client(root: Path, log: Path, **kwargs: object):  # -> Client
    from mcp import Client
    from mcp.client.stdio import stdio_client

    params = stdio_params(root)
    params.command, params.args = sys.executable, ["-v", *params.args]
    return Client(stdio_client(params, errlog=log.open("w")), **kwargs)  # pyright: ignore[reportArgumentType]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_stdio_session_loads_neither_the_http_server_nor_cryptography(
    ws_path: Path, tmp_path: Path, mode: str
) -> None:
    (ws_path / "a.py").write_text("def greet():\n    return 'hi'\n")
    log = tmp_path / "imports.log"
    async with _client(ws_path, log, mode=mode) as client:
        assert len((await client.list_tools()).tools) > 40
        read = await client.call_tool("get_file_text_by_path", {"pathInProject": "a.py"})
        assert not read.is_error and "greet" in read.content[0].text
        found = await client.call_tool("search_in_files_content", {"searchText": "greet"})
        assert not found.is_error and "a.py" in found.content[0].text
        listed = await client.call_tool("project_fs_list", {"recursive": True})
        assert [e["path"] for e in payload(listed)["entries"]] == ["a.py"]
    imported = _imported(log)
    assert {"mcp", "mcp_server_ide", "starlette"} <= imported  # the log is read right
    assert sorted(imported & set(NOT_OVER_STDIO)) == []


async def test_a_2026_round_trip_seals_its_request_state_with_cryptography_loaded_then(
    ws_path: Path, tmp_path: Path
) -> None:
    """A 2026-era question (InputRequiredResult, then a retry with its sealed requestState) works
    over stdio: the SDK's AES-GCM codec is built at the first seal, cryptography imported then."""
    (ws_path / "a.py").write_text("old\n")
    asked: list[str] = []

    async def elicit(ctx: object, params: object) -> ElicitResult:
        asked.append(getattr(params, "message", ""))
        return ElicitResult(action="accept", content={"confirm": True})

    log = tmp_path / "imports.log"
    async with _client(ws_path, log, mode="2026-07-28", elicitation_callback=elicit) as client:
        result = await client.call_tool("rewrite_file_content", {"pathInProject": "a.py", "text": "new\n"})
    assert not result.is_error, result.content[0].text
    assert asked == ["Overwrite 'a.py'? The assistant has not read this file in this session."]
    assert (ws_path / "a.py").read_text() == "new\n"
    assert "cryptography" in _imported(log)


def test_when_the_sdk_imports_otherwise_it_is_imported_in_full(tmp_path: Path) -> None:
    """An SDK that takes a name the lean import does not expect (here: the list of deferred names
    lacks one the SDK takes) is imported in full: real cryptography, no placeholder left, the
    server built with the SDK's own request-state policy."""
    import subprocess

    code = (
        "import sys, logging, pathlib\n"
        "logging.basicConfig(level=logging.WARNING, stream=sys.stdout, format='%(message)s')\n"
        "from mcp_server_ide import sdkimport\n"
        "sdkimport.DEFERRED['cryptography.exceptions'] = ()\n"
        "sdkimport.import_sdk()\n"
        "import mcp.server.request_state as rs\n"
        "from cryptography.exceptions import InvalidTag\n"
        "from mcp_server_ide.server import build_server\n"
        "from mcp_server_ide.workspace import Policy\n"
        "from mcp_server_ide.workspaces import LocalWorkspaces\n"
        f"w = LocalWorkspaces(pathlib.Path({str(tmp_path)!r}), Policy())\n"
        "build_server(w.for_context)\n"
        "print('real', rs.InvalidTag is InvalidTag, 'deferred', sdkimport.deferred())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "the lean SDK import failed (ImportError" in out.stdout
    assert out.stdout.strip().endswith("real True deferred False")

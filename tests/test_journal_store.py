"""The change journal on disk: its byte budget, and ``mcp-server-ide journal show|clear``.

Through real processes: HTTP servers on loopback (the seed's REST doors) with the budget set in
their environment, and the CLI run as a subprocess.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import httpx

from .support.servers import server_command

BUDGET = 100 * 1024
FILLER = "x" * 22_000 + "\n"
"""Each version of the test file stores ~22 KB: the budget holds four at most."""


def rest(server: Any, tool: str, **args: Any) -> httpx.Response:
    return httpx.post(f"{server.url}/mcp/{tool}", json=args, timeout=30)


def ok(server: Any, tool: str, **args: Any) -> Any:
    answer = rest(server, tool, **args).json()
    assert answer["error"] is None, f"{tool}({args}): {answer['error']}"
    return answer["status"]


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        server_command(*args),
        capture_output=True,
        text=True,
        env=full_env,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def show(ws_path: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, str]:
    """``journal show``'s lines as a dict (``folder``, ``size``, ``budget``, ``changes``...)."""
    done = cli("journal", "--workspace", str(ws_path), *args, "show", env=env)
    assert done.returncode == 0, done.stderr
    fields = dict(re.findall(r"^  (\w+):\s+(.*)$", done.stdout, re.M))
    assert {"folder", "size", "budget", "changes", "checkpoints"} <= set(fields), done.stdout
    return fields


def size_of(fields: dict[str, str]) -> int:
    return int(fields["size"].split()[0])


def bytes_in(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def test_budget_forgets_oldest_changes_and_the_checkpoints_they_held(http_server: Any, ws_path: Path) -> None:
    server = http_server(ws_path, env={"MCP_IDE_JOURNAL_BUDGET": "100K"})
    ok(server, "create_new_file_with_text", pathInProject="a.txt", text="v0\n" + FILLER)  # 1
    ok(server, "create_checkpoint", name="early")
    for i in range(1, 9):  # 2..9
        if i == 8:
            ok(server, "create_checkpoint", name="late")
        ok(
            server,
            "replace_specific_text",
            pathInProject="a.txt",
            searchText=f"v{i - 1}\n",
            replaceText=f"v{i}\n",
        )

    page = ok(server, "list_recent_changes", limit=50, includeDiff=False)
    ids = [c["id"] for c in page["changes"]]
    assert ids[0] == 9 and ids == list(range(9, 9 - len(ids), -1)) and 2 <= len(ids) < 9
    assert [c["name"] for c in ok(server, "list_checkpoints")] == ["late"]
    fields = show(ws_path, env={"MCP_IDE_JOURNAL_BUDGET": "100K"})
    folder = Path(fields["folder"])
    assert size_of(fields) <= BUDGET and size_of(fields) == bytes_in(folder)
    assert fields["budget"].startswith(f"{BUDGET} bytes")

    missing = rest(server, "restore_checkpoint", name="early")
    assert missing.status_code == 404 and "pruned" in missing.json()["error"]

    # What is kept restores byte for byte, and new changes go on numbering after the pruned ones.
    ok(server, "restore_checkpoint", name="late")
    assert (ws_path / "a.txt").read_text() == "v7\n" + FILLER
    assert ok(server, "list_recent_changes", limit=1, includeDiff=False)["changes"][0]["id"] == 10
    ok(server, "undo_changes", changeId=10)
    assert (ws_path / "a.txt").read_text() == "v8\n" + FILLER


def test_a_checkpoint_bigger_than_the_budget_is_refused(http_server: Any, ws_path: Path) -> None:
    server = http_server(ws_path, env={"MCP_IDE_JOURNAL_BUDGET": "50K"})
    ok(server, "create_new_file_with_text", pathInProject="big.txt", text=FILLER)
    (ws_path / "big.txt").write_text(FILLER * 3)  # grown by other hands past the budget
    refused = rest(server, "create_checkpoint", name="too-big")
    assert refused.status_code == 413
    assert "MCP_IDE_JOURNAL_BUDGET" in refused.json()["error"] and "51200" in refused.json()["error"]
    assert ok(server, "list_checkpoints") == []
    fields = show(ws_path)
    assert size_of(fields) == bytes_in(Path(fields["folder"])) < 50 * 1024  # nothing of it was kept


def test_journal_show_and_clear_through_the_cli(ws_path: Path, tmp_path: Path) -> None:
    state = tmp_path / "custom-state"
    fields = show(ws_path, "--state-dir", str(state))
    assert fields["changes"] == "0" and "(none yet)" in fields["folder"] and not state.exists()

    for text in ("one\n", "two\n"):
        arguments = json.dumps({"pathInProject": "n.txt", "text": text})
        done = cli(
            "call", "rewrite_file_content", arguments, "--workspace", str(ws_path), "--state-dir", str(state)
        )
        assert done.returncode == 0, done.stdout + done.stderr
    fields = show(ws_path, "--state-dir", str(state))
    folder = Path(fields["folder"])
    assert folder.is_dir() and state in folder.parents
    assert fields["changes"] == "2 (#1..#2)" and fields["checkpoints"] == "0"
    assert size_of(fields) == bytes_in(folder) > 0
    assert "the default" in fields["budget"] and fields["budget"].startswith(f"{256 * 1024 * 1024} bytes")

    cleared = cli("journal", "clear", "--workspace", str(ws_path), "--state-dir", str(state))
    assert cleared.returncode == 0, cleared.stderr
    assert "removed 2 changes, 0 checkpoints and 2 stored contents" in cleared.stdout
    assert f"{size_of(fields)} bytes" in cleared.stdout
    assert not list((folder / "blobs").iterdir())
    fields = show(ws_path, "--state-dir", str(state))
    assert fields["changes"] == "0" and size_of(fields) == bytes_in(folder)
    again = cli("journal", "clear", "--workspace", str(ws_path), "--state-dir", str(state))
    assert again.returncode == 0 and "nothing to remove" in again.stdout


def test_clearing_under_a_running_server(http_server: Any, ws_path: Path) -> None:
    """A server that has the journal open sees it empty after a clear and goes on numbering after it."""
    server = http_server(ws_path)
    ok(server, "create_new_file_with_text", pathInProject="a.txt", text="a\n")
    ok(server, "create_checkpoint", name="cp")
    ok(server, "append_file_content", pathInProject="a.txt", text="b\n")
    cleared = cli("journal", "clear", "--workspace", str(ws_path))
    assert (
        cleared.returncode == 0 and "removed 2 changes, 1 checkpoint and 2 stored contents" in cleared.stdout
    )

    assert ok(server, "list_recent_changes")["changes"] == []
    assert ok(server, "list_checkpoints") == []
    ok(server, "append_file_content", pathInProject="a.txt", text="c\n")
    changes = ok(server, "list_recent_changes")["changes"]
    assert [c["id"] for c in changes] == [3]
    ok(server, "undo_changes", changeId=3)
    assert (ws_path / "a.txt").read_text() == "a\nb\n"


def test_a_budget_that_is_not_a_size_is_named(ws_path: Path) -> None:
    done = cli("journal", "show", "--workspace", str(ws_path), env={"MCP_IDE_JOURNAL_BUDGET": "lots"})
    assert done.returncode == 1
    assert "MCP_IDE_JOURNAL_BUDGET is ignored: 'lots' is not a size" in done.stderr
    assert "e.g. 256M" in done.stderr
    missing = cli("journal", "show", "--workspace", str(ws_path / "nope"))
    assert missing.returncode == 2 and "is not a folder" in missing.stderr

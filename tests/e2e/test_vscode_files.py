"""Files open in a real VS Code (code-server in headless Chromium, the companion extension's .vsix
installed): a tool reading a file the person has unsaved changes in sees their text; a tool writing it
edits the buffer (nothing saved) and Ctrl+Z in the page gives the person's text back (issue 15,
acceptance 3); a clean open file a tool changed shows the new text in the page; a diagnostic VS Code
has (its JSON language features on a broken .json) is in get_file_problems. One code-server start for
the file. Own README command: ``.venv/bin/python -m pytest -m e2e tests/e2e/test_vscode_files.py``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.browser import artifact
from tests.support.codeserver import Workbench, workbench
from tests.support.vscode import rest_status

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def vscode(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Workbench, int, Path]]:
    from tests.support.extension import build_vsix

    tmp = tmp_path_factory.mktemp("vscode-files")
    ws = (tmp / "ws").resolve()
    ws.mkdir()
    (ws / "notes.py").write_text("x = 1\n")
    (ws / "other.py").write_text("y = 1\n")
    (ws / "bad.json").write_text('{\n  "a": 1,,\n  "b": 2\n}\n')
    vsix = build_vsix(tmp / "mcp-server-ide.vsix")
    settings = {
        "mcpServerIde.server.command": sys.executable,
        "mcpServerIde.server.args": ["-m", "mcp_server_ide"],
        "files.autoSave": "off",  # the person's text stays unsaved
        "editor.autoClosingBrackets": "never",
        "editor.autoClosingQuotes": "never",
    }
    bench = None
    try:
        with workbench(ws, tmp, settings, vsix) as bench:
            yield bench, bench.status_port(), ws
    finally:
        for log in bench.extension_logs() if bench else []:
            artifact("vscode-files-ext-log.txt").write_text(log.read_text(errors="replace"))


def rest(port: int, tool: str, **args: object) -> Any:
    return rest_status(f"http://127.0.0.1:{port}", tool, args, timeout=30)


def open_in_page(bench: Workbench, name: str, first_text: str) -> None:
    bench.page.locator(".explorer-folders-view .monaco-list-row", has_text=name).first.click()
    bench.page.locator(".monaco-editor .view-lines", has_text=first_text).first.wait_for()
    time.sleep(1)


def until(check: Callable[[], bool], what: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.5)


def test_a_tool_writing_a_file_with_unsaved_changes_edits_the_buffer_and_ctrl_z_restores_the_persons_text(
    vscode: tuple[Workbench, int, Path],
) -> None:
    bench, port, ws = vscode
    page = bench.page
    open_in_page(bench, "notes.py", "x = 1")
    page.locator(".monaco-editor .view-lines").first.click()
    page.keyboard.press("Control+End")
    page.keyboard.type("# typed by the person")  # unsaved
    time.sleep(1)
    read = rest(port, "get_file_text_by_path", pathInProject="notes.py")
    assert read["content"] == "x = 1\n# typed by the person" and read["buffer"] == "unsaved", read

    done = rest(
        port, "replace_specific_text", pathInProject="notes.py", searchText="x = 1", replaceText="x = 2"
    )
    assert done["buffer"] == "edited in VS Code, unsaved", done
    read = rest(port, "get_file_text_by_path", pathInProject="notes.py")
    done = rest(port, "rewrite_file_content", pathInProject="notes.py", text="replaced = True\n",
                expectedHash=read["hash"])  # fmt: skip
    assert done["buffer"] == "edited in VS Code, unsaved", done
    time.sleep(1)
    page.screenshot(path=str(artifact("vscode-files-buffer-edited.png")))
    assert "replaced = True" in bench.editor_text()
    assert (ws / "notes.py").read_text() == "x = 1\n"  # nothing written under the person's feet
    assert "notes.py" in str(rest(port, "list_recent_changes"))  # journaled

    page.locator(".monaco-editor .view-lines").first.click()
    page.keyboard.press("Control+Z")  # undoes the tool's rewrite: the person's text is back
    until(
        lambda: "# typed by the person" in bench.editor_text(), "Ctrl+Z did not restore the person's text", 10
    )
    page.screenshot(path=str(artifact("vscode-files-undone.png")))
    assert "x = 2" in bench.editor_text()
    page.keyboard.press("Control+Z")
    until(lambda: "x = 1" in bench.editor_text(), "Ctrl+Z did not undo the tool's first edit", 10)
    assert "# typed by the person" in bench.editor_text()


def test_a_clean_open_file_a_tool_changed_shows_the_new_text(vscode: tuple[Workbench, int, Path]) -> None:
    bench, port, ws = vscode
    open_in_page(bench, "other.py", "y = 1")
    rest(
        port,
        "replace_specific_text",
        pathInProject="other.py",
        searchText="y = 1",
        replaceText="y = 'reloaded'",
    )
    assert (ws / "other.py").read_text() == "y = 'reloaded'\n"  # clean: written to the file
    until(lambda: "y = 'reloaded'" in bench.editor_text(), "the editor did not show the new text")
    bench.page.screenshot(path=str(artifact("vscode-files-reloaded.png")))
    assert str(ws / "other.py") not in rest(port, "get_editor_state").get("unsavedFiles", [])


def test_a_diagnostic_vscode_has_is_in_the_problems_tool(vscode: tuple[Workbench, int, Path]) -> None:
    bench, port, _ = vscode
    open_in_page(bench, "bad.json", "{")
    found: dict[str, Any] = {}

    def has_vscode_problem() -> bool:
        found.update(rest(port, "get_file_problems", pathInProject="bad.json"))
        return any(p["source"].startswith("vscode") for p in found["problems"])

    until(has_vscode_problem, "VS Code's JSON diagnostic did not reach get_file_problems", 60)
    bench.page.screenshot(path=str(artifact("vscode-files-json-problem.png")))
    ours = [p for p in found["problems"] if p["source"].startswith("vscode")]
    assert ours[0]["source"] == "vscode/json" and ours[0]["line"] == 1, found

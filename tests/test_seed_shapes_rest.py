"""The REST door (seed 000) keeps the seed's example shapes of the tools whose MCP answers are compact.

MCP answers drop fields equal to their defaults, absolute paths and LSP ranges (see
``test_code_outline.py`` and ``test_compact_shapes.py``); the seed's HTTP interface answers with every
field its examples show. One real server process, the seed's own example requests.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from .support.gitrepo import init_repo, isolated_git


def post(url: str, tool: str, body: dict[str, Any]) -> Any:
    envelope = httpx.post(f"{url}/mcp/{tool}", json=body, timeout=60).json()
    assert envelope["error"] is None, (tool, envelope)
    return envelope["status"]


@pytest.fixture
def seed_repo(ws_path: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    isolated_git(monkeypatch, tmp_path / "home")
    git = init_repo(ws_path)
    git.write("src/utils/helper.js", "function helper() {\n  return 'Hello';\n}\nhelper();\n")
    git.write("src/index.js", "const { helper } = require('./utils/helper');\nhelper();\n")
    git("add", "-A")
    git("commit", "-q", "-m", "Update helper function")
    return ws_path


def test_rest_keeps_the_seed_shapes(http_server: Any, seed_repo: Path) -> None:
    url = http_server(seed_repo).url
    symbols = post(url, "get_symbols_in_file", {"pathInProject": "src/utils/helper.js"})["symbols"]
    helper = symbols[0]
    assert {"name", "kind", "range", "text", "detail"} <= set(helper)
    assert helper["range"] == {"startLine": 0, "startCharacter": 0, "endLine": 2, "endCharacter": 1}
    assert (helper["name"], helper["kind"], helper["text"]) == ("helper", "Function", "helper")
    refs = post(url, "find_references", {"pathInProject": "src/utils/helper.js", "line": 0, "character": 12})
    assert refs["references"], refs
    for ref in refs["references"]:
        assert {"path", "line", "character", "endLine", "endCharacter"} <= set(ref)
    assert [(r["line"], r["character"], r["endCharacter"]) for r in refs["references"]] == [
        (0, 9, 15),
        (3, 0, 6),
    ]
    ran = post(url, "run_command_on_background", {"command": "true"})  # MCP: the text "exit code 0\n"
    assert {k: ran[k] for k in ("stdout", "stderr", "exitCode", "timedOut")} == {
        "stdout": "",
        "stderr": "",
        "exitCode": 0,
        "timedOut": False,
    }
    (seed_repo / "src/utils/helper.js").write_text("function helper() {}\n")
    assert post(url, "get_project_vcs_status", {}) == [
        {"pathInProject": "src/utils/helper.js", "type": "MODIFICATION", "staged": False, "unstaged": True}
    ]
    done = post(url, "commit_changes", {"message": "Add new feature", "files": ["src/utils/helper.js"]})
    assert (
        done["success"] is True and done["files"] == ["src/utils/helper.js"] and done["hooksEnabled"] is True
    )
    assert done["fileChanges"] == [{"path": "src/utils/helper.js", "type": "MODIFICATION"}]
    diff = post(url, "get_file_diff", {"pathInProject": "src/utils/helper.js", "commit2": "HEAD"})
    header = diff.split("@@")[0].splitlines()
    assert header[0] == "diff --git a/src/utils/helper.js b/src/utils/helper.js" and header[1].startswith(
        "index "
    )
    assert header[2:] == ["--- a/src/utils/helper.js", "+++ b/src/utils/helper.js"]
    details = post(url, "get_commit_details", {"commitHash": done["commitHash"]})
    assert {"hash", "message", "author", "date", "files", "committer", "committerDate"} <= set(details)
    history = post(url, "get_file_history", {"pathInProject": "src/utils/helper.js", "maxEntries": 10})
    assert [h["message"] for h in history] == ["Add new feature", "Update helper function"]
    assert all({"hash", "message", "author", "date", "authorEmail", "path"} <= set(h) for h in history)
    hits = post(url, "search_in_files_content", {"searchText": "function helper"})
    assert hits[0]["matchCount"] == 1 and hits[0]["absolutePath"].endswith("helper.js")  # MCP: neither
    found = post(url, "find_files_by_name_substring", {"nameSubstring": "helper"})
    assert set(found[0]) == {"path", "name", "directory", "absolutePath"}
    read = post(url, "get_file_text_by_path", {"pathInProject": "src/utils/helper.js"})
    assert (
        read["path"] == str(seed_repo / "src/utils/helper.js")
        and read["relativePath"] == "src/utils/helper.js"
    )
    assert read["encoding"] == "utf-8" and read["lineEnding"] == "LF"
    assert len(read["hash"]) == 64  # MCP sends 16 digits of it
    wrote = post(url, "create_new_file_with_text", {"pathInProject": "src/n.js", "text": "n\n"})
    assert {"path", "relativePath", "operationTimeMs"} <= set(wrote)
    replaced = post(
        url, "replace_specific_text", {"pathInProject": "src/n.js", "searchText": "n", "replaceText": "m"}
    )
    assert {"path", "replacements", "operationTimeMs"} <= set(replaced)

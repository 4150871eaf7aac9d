"""``files_skipping``: ripgrep's ``--files`` of the root but for some folders, each skipped by a glob
matching its path alone (``exact_glob``). The files it names in the folders it does enter are the
ones a whole run names there, whatever the folders' names hold (glob characters, spaces, a leading
``!`` or ``#``) and whatever the ignore files say (real ripgrep, real folders)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from mcp_server_ide.engines.search import Filters, files_skipping, rg_binary
from mcp_server_ide.engines.search.globs import exact_glob
from mcp_server_ide.engines.search.scope import common_args

NAMES = (
    "a*",
    "a1",
    "[x]",
    "x",
    "{a,b}",
    "a",
    "sp ace",
    "trail ",
    "back\\slash",
    "!bang",
    "#hash",
    "é",
    "?",
    "**",
)


def _whole(root: Path) -> set[str]:
    args = [rg_binary(), *common_args(Filters()), "--files", "--null", "--", "."]
    out = subprocess.run(args, cwd=root, stdout=subprocess.PIPE, check=True).stdout
    return {n.removeprefix("./") for n in out.decode().split("\0") if n}


def _tree(root: Path) -> list[str]:
    (root / ".gitignore").write_text("/a1/kept-not.txt\n*.log\n!a*/*.log\nx/\n")
    folders = []
    for outer in NAMES:
        for inner in ("", *NAMES[:4]):
            rel = f"{outer}/{inner}" if inner else outer
            (root / rel).mkdir(parents=True, exist_ok=True)
            for name in ("f.txt", "kept-not.txt", "n.log", "[g].txt"):
                (root / rel / name).write_text(rel)
            folders.append(rel)
    return folders


def test_every_folder_alone_names_what_a_whole_run_names_there(tmp_path: Path) -> None:
    folders = _tree(tmp_path)
    whole = _whole(tmp_path)
    assert whole and any(f.endswith(".log") for f in whole) and "a1/f.txt" in whole
    for folder in folders:
        on_the_way = {"", folder.split("/")[0], folder}
        skipped = [f for f in folders if f not in on_the_way and f.rpartition("/")[0] in on_the_way]
        named = files_skipping(tmp_path, skipped)
        assert named is not None, folder
        here = {f for f in whole if f.rpartition("/")[0] == folder}
        assert {f for f in named if f.rpartition("/")[0] == folder} == here, folder
        assert all(f.rpartition("/")[0] in on_the_way for f in named), folder  # the rest was skipped


def test_a_name_ripgrep_cannot_take_as_a_glob_is_refused(tmp_path: Path) -> None:
    (tmp_path / "tab\there").mkdir()
    (tmp_path / "ok").mkdir()
    assert (
        exact_glob("tab\there") is None and exact_glob("\udcff") is None and exact_glob("nbsp\u00a0") is None
    )
    assert exact_glob("sp ace/trail ") == "/sp\\ ace/trail\\ "
    assert files_skipping(tmp_path, ["ok", "tab\there"]) is None
    assert files_skipping(tmp_path, ["ok"]) == set()

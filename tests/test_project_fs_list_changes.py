"""A recursive ``project_fs_list`` right after the tree changed gives the answer a fresh server gives.

A listing of a folder listed before is brought up to date from the remembered one
(``tools/project_fs/since.py``): ripgrep is asked again only about the files of the folders that
changed, the other files keep their verdicts. Each step here changes a tree full of ignore rules
(negations, anchored patterns, folder rules, nested .gitignore/.ignore/.rgignore, .git/info/exclude,
names with glob characters), lists it through an MCP session, and compares the answer with the one
worked out from nothing (a fresh walk and ripgrep over the whole tree: the module state a new server
starts with) and its files with ``rg --files`` itself. Folders count as settled after 50 ms here
(not 2 s), and the tests wait 0.2 s where a read or an ignore file must have settled; waiting
longer changes nothing (a later listing only finds more of the tree settled).
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from .test_project_fs_tools import call, write

pytestmark = pytest.mark.anyio

SETTLE = 0.2
"""Seconds to wait for a change to count as settled (the window is 50 ms here)."""

ROOT_IGNORE = "build/\n*.log\n!keep.log\n/anchored.txt\ndocs/**/*.tmp\ngen/*\n!gen/wanted/\n"


def _tree(root: Path) -> None:
    write(root, ".gitignore", ROOT_IGNORE)
    write(root, ".git/info/exclude", "*.excl\n")
    write(root, "sub/.gitignore", "*.bak\n!important.bak\nnested/\n")
    write(root, "sub/deep/.ignore", "secret*\n")
    write(root, "other/.rgignore", "*.dat\n")
    for rel in (
        "README.md",
        "anchored.txt",
        "app.log",
        "keep.log",
        "notes.excl",
        "src/main.py",
        "src/pkg/mod.py",
        "src/pkg/anchored.txt",
        "src/pkg/deeper/leaf.py",
        "build/out.js",
        "src/build/gen.js",
        "docs/a/b/c.tmp",
        "docs/a/b/c.md",
        "gen/wanted/w.py",
        "gen/other/o.py",
        "sub/x.bak",
        "sub/important.bak",
        "sub/nested/n.py",
        "sub/deep/secret.txt",
        "sub/deep/open.txt",
        "other/data.dat",
        "other/ok.txt",
        "a1/one.py",
        "a*/star.py",
        "trail /t.py",
        "we!rd [dir]{x,y}/w.py",
    ):
        write(root, rel, rel)
    (root / "empty").mkdir()
    (root / "src/link.py").symlink_to("main.py")


@contextmanager
def _fresh_state() -> Iterator[None]:
    """The module state a new server starts with (nothing remembered, no folder read kept), for
    one listing; the session's own state back afterwards, so its next listing goes on from it."""
    from mcp_server_ide.tools.project_fs import kept, walk

    saved = (kept._remembered, kept._last, walk._READS)
    kept._remembered, kept._last, walk._READS = None, None, walk._Reads()
    try:
        yield
    finally:
        kept._remembered, kept._last, walk._READS = saved


def _rg_files(root: Path) -> set[str]:
    from mcp_server_ide.engines.search import Filters, rg_binary
    from mcp_server_ide.engines.search.scope import common_args

    args = [rg_binary(), *common_args(Filters()), "--files", "--null", "--", "."]
    out = subprocess.run(args, cwd=root, stdout=subprocess.PIPE, check=False).stdout
    return {name.removeprefix("./") for name in out.decode("utf-8", "surrogateescape").split("\0") if name}


@pytest.fixture
def updates(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Each time a listing tried to bring the remembered one up to date: whether it could (a spy on
    ``since.update``, so each step can say which way its listing went)."""
    from mcp_server_ide.tools.project_fs import since, walk

    monkeypatch.setattr(walk, "SETTLED_NS", 50_000_000)
    tried: list[bool] = []
    real = since.update

    def spy(*args: Any) -> Any:
        got = real(*args)
        tried.append(got is not None)
        return got

    monkeypatch.setattr(since, "update", spy)
    return tried


WAYS = {
    "update": ([True],),
    "whole": ([], [False]),
    "quiet": ([], [True]),
}
"""Which way a listing may go: brought up to date (``update``); ripgrep over the whole tree, as
nothing was remembered or bringing it up to date was refused (``whole``); or either the remembered
answer as it stands or brought up to date, but not refused (``quiet``)."""


def _checker(client: Any, root: Path, updates: list[bool]) -> Callable[..., Any]:
    async def listed(**args: Any) -> dict[str, Any]:
        return await call(client, "project_fs_list", {"recursive": True, "maxEntries": 20000, **args})

    async def check(what: str, way: str = "update", **args: Any) -> None:
        tried = len(updates)
        got = await listed(**args)
        assert updates[tried:] in WAYS[way], (what, way, updates[tried:])
        with _fresh_state():
            fresh = await listed(**args)
        assert got == fresh, what
        top = args.get("dir", "")
        under = top + "/" if top else ""
        files = {e["path"].replace(os.sep, "/") for e in got["entries"] if e["type"] == "file"}
        assert files == {p for p in _rg_files(root) if p.startswith(under)}, what
        page = {**args, "offset": 3, "maxEntries": 4}
        got = await listed(**page)
        with _fresh_state():
            assert got == await listed(**page), what

    return check


async def test_listings_after_changes_equal_a_fresh_servers(
    mcp: Any, ws_path: Path, updates: list[bool]
) -> None:
    _tree(ws_path)
    time.sleep(SETTLE)
    async with mcp(ws_path) as client:
        check = _checker(client, ws_path, updates)
        await check("the first listing", "whole")
        assert updates == []  # nothing remembered yet: ripgrep ran over the whole tree
        await check("the same tree again", "quiet")
        steps: list[tuple[str, Callable[[], object]]] = [
            ("a file added deep down", lambda: write(ws_path, "src/pkg/deeper/new.py", "")),
            ("a file removed", lambda: (ws_path / "src/pkg/mod.py").unlink()),
            ("a file renamed", lambda: (ws_path / "src/main.py").rename(ws_path / "src/renamed.py")),
            ("a file moved across", lambda: (ws_path / "other/ok.txt").rename(ws_path / "sub/deep/ok.txt")),
            ("an ignored file added", lambda: write(ws_path, "src/pkg/deeper/debug.log", "")),
            ("a file a negation keeps", lambda: write(ws_path, "src/pkg/keep.log", "")),
            ("an anchored name below the root", lambda: write(ws_path, "src/anchored.txt", "")),
            ("an anchored name at the root", lambda: write(ws_path, "anchored.txt.2", "")),
            ("an ignored folder gets a file", lambda: write(ws_path, "build/more.js", "")),
            ("a folder rule's folder gets one", lambda: write(ws_path, "src/build/more.js", "")),
            ("gen/*, but for gen/wanted/", lambda: write(ws_path, "gen/wanted/more/m.py", "")),
            ("gen/* hides a new folder", lambda: write(ws_path, "gen/new/n.py", "")),
            ("a nested folder rule", lambda: write(ws_path, "sub/nested/again/x.py", "")),
            ("a nested negation", lambda: write(ws_path, "sub/important.bak.2", "")),
            ("a nested .ignore's pattern", lambda: write(ws_path, "sub/deep/secret2.txt", "")),
            ("an .rgignore's pattern", lambda: write(ws_path, "other/more.dat", "")),
            ("info/exclude's pattern", lambda: write(ws_path, "src/x.excl", "")),
            ("docs/**/*.tmp", lambda: write(ws_path, "docs/a/b/d/e.tmp", "")),
            ("a folder added", lambda: write(ws_path, "fresh/dir/f.py", "")),
            ("an empty folder added", lambda: (ws_path / "fresh/hollow").mkdir()),
            ("beside a folder named a*", lambda: write(ws_path, "a1/two.py", "")),
            ("in a folder named a*", lambda: write(ws_path, "a*/two.py", "")),
            ("in a folder with glob characters", lambda: write(ws_path, "we!rd [dir]{x,y}/[b]*?.py", "")),
            ("in a folder ending with a space", lambda: write(ws_path, "trail /u.py", "")),
            ("a folder renamed", lambda: (ws_path / "src/pkg").rename(ws_path / "src/pkg2")),
            (
                "a folder renamed into an ignored name",
                lambda: (ws_path / "fresh").rename(ws_path / "gen/fresh"),
            ),
            ("a folder moved under build/", lambda: (ws_path / "gen/fresh").rename(ws_path / "build/inner")),
            ("a folder moved out of build/", lambda: (ws_path / "build/inner").rename(ws_path / "src/inner")),
            ("a file turned folder", lambda: _file_to_folder(ws_path / "src/renamed.py")),
            ("a folder removed", lambda: _remove_tree(ws_path / "docs")),
            ("a symlink added", lambda: (ws_path / "other/link").symlink_to("../src")),
        ]
        for what, change in steps:
            change()
            await check(what)
            await check(what + ", listed again", "quiet")
        time.sleep(SETTLE)
        await check("all settled", "quiet")


async def test_a_changed_ignore_file_lists_the_whole_tree_again(
    mcp: Any, ws_path: Path, updates: list[bool]
) -> None:
    """A changed ignore file (edited, added, a negation turning a folder back on) changes verdicts
    anywhere below it: no listing brings the remembered one up to date then, ripgrep runs over the
    whole tree, and once the ignore file has settled, later changes are brought up to date again."""
    _tree(ws_path)
    time.sleep(SETTLE)
    async with mcp(ws_path) as client:
        check = _checker(client, ws_path, updates)
        await check("the first listing", "whole")
        steps: list[tuple[str, Callable[[], object]]] = [
            ("a pattern added", lambda: _append(ws_path / ".gitignore", "*.md\n")),
            ("a negation turns build/ back on", lambda: _append(ws_path / ".gitignore", "!build/\n")),
            ("a new .ignore below", lambda: write(ws_path, "src/.ignore", "*.py\n")),
            ("a nested .gitignore removed", lambda: (ws_path / "sub/.gitignore").unlink()),
            ("info/exclude edited", lambda: _append(ws_path / ".git/info/exclude", "*.txt\n")),
        ]
        for what, change in steps:
            change()
            write(ws_path, f"src/pkg/touched {len(updates)}.py", what)  # a folder changed too
            await check(what, "whole")
            time.sleep(SETTLE)
            await check(what + ", settled", "quiet")  # remembered by now, or by this listing
            write(ws_path, "src/pkg/after.py", what)
            await check(what + ", then a file added")
            (ws_path / "src/pkg/after.py").unlink()


async def test_a_folder_below_the_root_listed_after_changes(
    mcp: Any, ws_path: Path, updates: list[bool]
) -> None:
    """Listing ``sub``: the folders beside the way down to it are skipped too, and the root's
    ignore files still bear on it."""
    _tree(ws_path)
    write(ws_path, "sub/deep/more/m.py", "")
    write(ws_path, "sub2/s.py", "")
    time.sleep(SETTLE)
    async with mcp(ws_path) as client:
        check = _checker(client, ws_path, updates)
        await check("the first listing", "whole", dir="sub")
        for what, change in [
            ("a file added", lambda: write(ws_path, "sub/deep/more/n.py", "")),
            ("an ignored one (the root's *.log)", lambda: write(ws_path, "sub/deep/x.log", "")),
            ("its own folder rule", lambda: write(ws_path, "sub/nested/y.py", "")),
        ]:
            change()
            await check(what, dir="sub")
        write(ws_path, "sub2/t.py", "")  # beside it: the walk of sub may find nothing changed
        await check("a file added outside the listing", "quiet", dir="sub")


async def test_a_name_ripgrep_cannot_take_as_a_glob_lists_the_whole_tree(
    mcp: Any, ws_path: Path, updates: list[bool]
) -> None:
    """A folder to skip whose name holds a tab (ripgrep trims a glob's white space): the listing
    runs ripgrep over the whole tree instead, with the same answer, and the next ones start it
    beside their walk until the name is gone."""
    _tree(ws_path)
    write(ws_path, "tab\there/t.py", "")
    time.sleep(SETTLE)
    async with mcp(ws_path) as client:
        check = _checker(client, ws_path, updates)
        await check("the first listing", "whole")
        write(ws_path, "src/new.py", "")
        await check("a file added beside it", "whole")
        write(ws_path, "src/newer.py", "")  # refused before: ripgrep ran beside the walk
        await check("another one", "whole")
        (ws_path / "tab\there").rename(ws_path / "tab here")
        await check("the folder renamed: brought up to date again (ripgrep beside the walk stopped)")
        write(ws_path, "src/newest.py", "")
        await check("and after")


def _append(path: Path, text: str) -> None:
    with path.open("a") as f:  # in place: the folder's times stay, only the file's move
        f.write(text)


def _file_to_folder(path: Path) -> None:
    path.unlink()
    write(path.parent, path.name + "/inside.py", "")


def _remove_tree(path: Path) -> None:
    for below in sorted(path.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        below.rmdir() if below.is_dir() and not below.is_symlink() else below.unlink()
    path.rmdir()


async def test_too_many_folders_to_skip_lists_the_whole_tree(
    mcp: Any, ws_path: Path, updates: list[bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    """More folders to skip than ripgrep's command line holds (here: any): the whole tree again."""
    from mcp_server_ide.tools.project_fs import since

    _tree(ws_path)
    time.sleep(SETTLE)
    async with mcp(ws_path) as client:
        check = _checker(client, ws_path, updates)
        await check("the first listing", "whole")
        monkeypatch.setattr(since, "MAX_SKIPPED_CHARS", 1)
        write(ws_path, "src/pkg/new.log", "")
        await check("an ignored file added", "whole")
        monkeypatch.setattr(since, "MAX_SKIPPED_CHARS", 256 * 1024)
        write(ws_path, "src/pkg/new.py", "")
        await check("a file added, with room again")

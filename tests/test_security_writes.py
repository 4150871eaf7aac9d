"""SECURITY.md §2, the write rules, attacked through the real doors.

Protected paths (``.git`` and ``node_modules`` at any depth, and the configured ``src/brand`` and
``src/onchain``, as the seed's hosted service has them) are refused for every mutating tool, on the
normalised and on the resolved path, per component, case-insensitively; their neighbours
(``.gitignore``, ``.github/``, ``x.git``, ``src/brandnew/``) stay writable. A write through a
symlink never touches what the link points at outside the workspace; ``--read-only`` refuses every
mutating tool and keeps the read tools.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from mcp_server_ide.server import ServerOptions
from mcp_server_ide.workspace import Policy

from .support.security import (
    CORE_CATEGORIES,
    args_for,
    is_crash,
    path_key,
    registered_specs,
    result_text,
    snapshot,
)

pytestmark = pytest.mark.anyio

CONFIGURED = ("src/brand", "src/onchain")


def _schemas(specs: list[Any]) -> dict[str, dict[str, Any]]:
    from mcp_server_ide.runner import ToolRunner

    runner = ToolRunner(specs, lambda *a: None)  # type: ignore[arg-type,return-value]
    return {s.name: runner.input_schema(s.name) for s in specs}


ALL_SPECS = registered_specs()
ALL_SCHEMAS = _schemas(ALL_SPECS)
WRITE_TOOLS = [
    s.name
    for s in ALL_SPECS
    if s.category in CORE_CATEGORIES and not s.read_only and path_key(ALL_SCHEMAS[s.name])
]
CREATORS = [
    t
    for t in ("rewrite_file_content", "create_new_file_with_text", "append_file_content", "project_fs_write")
    if t in WRITE_TOOLS
]


class Tree:
    """A workspace with protected folders, their look-alike neighbours, and links into both."""

    def __init__(self, base: Path, ws: Path) -> None:
        self.base, self.ws = base, ws
        files = {
            ".git/config": "[core]\n\tbare = false\n",
            ".git/HEAD": "ref: refs/heads/main\n",
            ".git/hooks/README": "hooks root\n",
            "node_modules/pkg/index.js": "module.exports = 'root';\n",
            "a/node_modules/b.js": "root\n",
            "vendor/lib/.git/config": "[core] root\n",
            "src/brand/logo.txt": "BRAND root\n",
            "src/onchain/c.txt": "CHAIN root\n",
            "src/app.py": "print('root')\n",
            ".gitignore": "dist/\n# root\n",
            ".github/workflows/ci.yml": "on: push # root\n",
            "x.git": "not a repo, root\n",
            "src/brandnew/x": "root\n",
            "src/brand.txt": "root\n",
            "docs/src/brand/x": "root\n",
            "brand/x": "root\n",
        }
        for rel, text in files.items():
            path = ws / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        links = {
            "cfg": ".git",
            "gl": ".git/config",
            "nm": "node_modules",
            "brandlink": "src/brand",
            "srclink": "src",
            "deep": "vendor/lib",
            "dl_git": ".git/new-file",  # dangling, into .git
            "dl_brand": "src/brand/new.txt",  # dangling, into a configured path
        }
        for name, target in links.items():
            os.symlink(target, ws / name)
        self.protected_before = self.protected_state()

    def protected_state(self) -> dict[str, Any]:
        state = {}
        for top in (".git", "node_modules", "a/node_modules", "vendor/lib/.git", "src/brand", "src/onchain"):
            for rel, item in snapshot(self.ws / top).items():
                state[f"{top}/{rel}"] = item
        return state

    def check_protected_untouched(self) -> None:
        assert self.protected_state() == self.protected_before, "a protected folder changed"
        for ghost in ("SRC", ".GIT", ".Git", "NODE_MODULES", "src/BRAND", "src/Brand"):
            assert not os.path.lexists(self.ws / ghost), f"a write created {ghost!r}"


@pytest.fixture
def tree(ws_path: Path) -> Tree:
    return Tree(ws_path.parent, ws_path)


PROTECTED = [
    ".git/config",
    ".git/HEAD",
    ".git/new-file",
    ".git/hooks/pre-commit",
    ".git",
    "src/../.git/config",
    "./.git//config",
    ".git/./config",
    ".git/hooks/../config",
    "src/app.py/../../.git/config",
    "cfg/config",
    "cfg/hooks/post-checkout",
    "gl",
    "dl_git",
    "vendor/lib/.git/config",
    "deep/.git/config",
    "vendor/lib/.git/hooks/pre-push",
    ".GIT/config",
    ".Git/HEAD",
    ".git\\config",
    "/workspace/.git/config",
    "{ws}/.git/config",
    "node_modules/pkg/index.js",
    "node_modules/x",
    "node_modules",
    "a/node_modules/b.js",
    "a/b/c/node_modules/d.js",
    "NODE_MODULES/x",
    "Node_Modules/pkg/index.js",
    "nm/pkg/index.js",
    "nm/new.js",
    "src/brand/logo.txt",
    "src/brand/new.txt",
    "src/brand",
    "src/brand/deep/er/x.txt",
    "SRC/Brand/x",
    "src/BRAND/logo.txt",
    "Src/bRaNd/logo.txt",
    "src//brand/x",
    "src/./brand/x",
    "./src/brand/x",
    "src/brand/../brand/x",
    "src/brandnew/../brand/logo.txt",
    "src\\brand\\logo.txt",
    "brandlink/logo.txt",
    "brandlink/new.txt",
    "srclink/brand/logo.txt",
    "srclink/onchain/c.txt",
    "dl_brand",
    "src/onchain/c.txt",
    "src/onchain/new.sol",
    "SRC/ONCHAIN/x",
    "/workspace/src/brand/logo.txt",
    "{ws}/src/brand/logo.txt",
    "{ws}/src/onchain/c.txt",
]

ALLOWED = [
    ".gitignore",
    ".github/workflows/ci.yml",
    ".github/new.yml",
    "x.git",
    "y.git/file",
    ".gitattributes",
    ".git_old/x",
    "git/x",
    "node_modulesx/y",
    "my.node_modules/x",
    "src/brandnew/x",
    "src/brand.txt",
    "src/brands/x",
    "src/onchainx/y",
    "brand/x",
    "docs/src/brand/x",
    "onchain/x",
]


def _fmt(path: str, ws: Path) -> str:
    return path.format(ws=ws)


async def _call(client: Any, tool: str, args: dict[str, Any]) -> Any:
    with anyio.fail_after(20):
        return await client.call_tool(tool, args)


def test_the_write_tools_are_found() -> None:
    for name in (
        "rewrite_file_content",
        "create_new_file_with_text",
        "append_file_content",
        "replace_specific_text",
    ):
        assert name in WRITE_TOOLS
    assert {"project_fs_write", "project_fs_edit"} <= set(WRITE_TOOLS)


@pytest.mark.parametrize("tool", WRITE_TOOLS)
async def test_protected_paths_are_refused(mcp, tree: Tree, tool: str) -> None:
    async with mcp(tree.ws, policy=Policy(protected=CONFIGURED)) as client:
        for raw in PROTECTED:
            target = _fmt(raw, tree.ws)
            result = await _call(client, tool, args_for(tool, ALL_SCHEMAS[tool], target))
            text = result_text(result)
            where = f"{tool}({target!r})"
            assert result.is_error, f"{where} was written: {text[:300]}"
            assert not is_crash(tool, text), f"{where} crashed: {text}"
            assert "protected" in text and "rule:" in text, (
                f"{where}: the refusal does not name the rule: {text}"
            )
    tree.check_protected_untouched()


@pytest.mark.parametrize("tool", CREATORS)
async def test_look_alike_neighbours_stay_writable(mcp, tree: Tree, tool: str) -> None:
    async with mcp(tree.ws, policy=Policy(protected=CONFIGURED)) as client:
        for raw in ALLOWED:
            target = _fmt(raw, tree.ws)
            path = tree.ws / target
            if path.exists():
                # Overwriting a file this session never read may ask first: read it.
                await _call(client, "get_file_text_by_path", {"pathInProject": target})
            if tool == "create_new_file_with_text" and path.exists():
                path.unlink()
            args = args_for(tool, ALL_SCHEMAS[tool], target, marker="written by the test\n")
            result = await _call(client, tool, args)
            assert not result.is_error, f"{tool}({target!r}) was refused: {result_text(result)}"
            assert "written by the test" in path.read_text(), f"{tool}({target!r}) did not write"
    tree.check_protected_untouched()


async def test_edit_tools_edit_the_neighbours(mcp, tree: Tree) -> None:
    edits = [t for t in WRITE_TOOLS if t not in CREATORS]
    assert "replace_specific_text" in edits
    async with mcp(tree.ws, policy=Policy(protected=CONFIGURED)) as client:
        for tool in edits:
            for raw in (
                ".gitignore",
                ".github/workflows/ci.yml",
                "x.git",
                "src/brandnew/x",
                "docs/src/brand/x",
            ):
                args = args_for(tool, ALL_SCHEMAS[tool], raw, marker="edited")
                before = (tree.ws / raw).read_text()
                result = await _call(client, tool, args)
                assert not result.is_error, f"{tool}({raw!r}) was refused: {result_text(result)}"
                assert (tree.ws / raw).read_text() != before
                (tree.ws / raw).write_text(before)
    tree.check_protected_untouched()


async def test_defaults_protect_git_and_node_modules_without_configuration(mcp, tree: Tree) -> None:
    async with mcp(tree.ws) as client:
        for target in (".git/config", "cfg/config", "vendor/lib/.git/config", "nm/x", ".GIT/config"):
            result = await _call(client, "rewrite_file_content", {"pathInProject": target, "text": "x"})
            assert result.is_error and "protected" in result_text(result)
        # Without --protect, src/brand is an ordinary folder.
        await _call(client, "get_file_text_by_path", {"pathInProject": "src/brand/logo.txt"})
        ok = await _call(
            client, "rewrite_file_content", {"pathInProject": "src/brand/logo.txt", "text": "new\n"}
        )
        assert not ok.is_error, result_text(ok)
    assert (tree.ws / "src/brand/logo.txt").read_text() == "new\n"


def test_protect_flag_on_the_rest_door(http_server, tree: Tree) -> None:
    server = http_server(tree.ws, "--protect", "src/brand", "--protect", "src/onchain/")
    with httpx.Client(base_url=server.url, timeout=20) as http:
        for tool in [
            t
            for t in ("rewrite_file_content", "project_fs_write", "replace_specific_text", "project_fs_edit")
            if t in WRITE_TOOLS
        ]:
            for raw in PROTECTED:
                target = _fmt(raw, tree.ws)
                args = args_for(tool, ALL_SCHEMAS[tool], target)
                for body in (
                    args,
                    {
                        "jsonrpc": "2.0",
                        "id": 7,
                        "method": "tools/call",
                        "params": {"name": tool, "arguments": args},
                    },
                ):
                    r = http.post(f"/mcp/{tool}", json=body)
                    assert r.status_code == 403, f"REST {tool}({target!r}): {r.status_code} {r.text[:300]}"
                    error = r.json()["error"]
                    assert "protected" in error and "rule:" in error
        r = http.post("/mcp/rewrite_file_content", json={"pathInProject": "src/brandnew/x", "text": "ok\n"})
        assert r.status_code == 200, r.text
    tree.check_protected_untouched()
    assert (tree.ws / "src/brandnew/x").read_text() == "ok\n"


# ----------------------------------------------------------------------------- symlinks


async def test_writes_through_links_never_touch_an_outside_target(mcp, ws_path: Path) -> None:
    base = ws_path.parent
    outside = base / "outside"
    outside.mkdir()
    secret = outside / "secret.txt"
    secret.write_text("OUTSIDE root\n")
    hard_target = outside / "hard.txt"
    hard_target.write_text("HARD root\n")
    os.symlink(secret, ws_path / "leak")
    os.symlink(outside / "missing.txt", ws_path / "dangling")  # dangling, target outside
    os.symlink("../outside/also-missing.txt", ws_path / "dangling_rel")
    os.symlink(outside, ws_path / "outdir")
    os.link(hard_target, ws_path / "hard.txt")  # a hard link shares the inode with a file outside
    (ws_path / "in.txt").write_text("inside root\n")
    os.symlink("in.txt", ws_path / "inlink")
    before = snapshot(outside)
    async with mcp(ws_path) as client:
        for tool in WRITE_TOOLS:
            for target in (
                "leak",
                "dangling",
                "dangling_rel",
                "outdir/secret.txt",
                "outdir/new.txt",
                "outdir/d/new.txt",
            ):
                result = await _call(client, tool, args_for(tool, ALL_SCHEMAS[tool], target))
                text = result_text(result)
                assert result.is_error and "outside the workspace" in text, (
                    f"{tool}({target!r}): {text[:300]}"
                )
        assert snapshot(outside) == before
        assert not (outside / "missing.txt").exists() and not (outside / "also-missing.txt").exists()
        # A hard link: the write replaces the workspace's name, never the shared inode outside.
        await _call(client, "get_file_text_by_path", {"pathInProject": "hard.txt"})
        result = await _call(
            client,
            "replace_specific_text",
            {"pathInProject": "hard.txt", "searchText": "HARD", "replaceText": "EDITED"},
        )
        assert not result.is_error, result_text(result)
        assert (ws_path / "hard.txt").read_text() == "EDITED root\n"
        assert hard_target.read_text() == "HARD root\n", "the write went through the shared inode"
        # A link inside the workspace: its target is edited and the link stays a link.
        await _call(client, "get_file_text_by_path", {"pathInProject": "inlink"})
        result = await _call(
            client, "rewrite_file_content", {"pathInProject": "inlink", "text": "via link\n"}
        )
        assert not result.is_error, result_text(result)
        assert (ws_path / "inlink").is_symlink() and (ws_path / "in.txt").read_text() == "via link\n"
    assert (ws_path / "leak").is_symlink() and os.readlink(ws_path / "leak") == str(secret)


async def test_create_never_follows_or_replaces_an_existing_link(mcp, ws_path: Path) -> None:
    (ws_path / "real.txt").write_text("real\n")
    os.symlink("real.txt", ws_path / "alias")
    os.symlink("nowhere-inside.txt", ws_path / "dangling_in")
    async with mcp(ws_path) as client:
        result = await _call(client, "create_new_file_with_text", {"pathInProject": "alias", "text": "new"})
        assert result.is_error and "already exists" in result_text(result)
        assert (ws_path / "real.txt").read_text() == "real\n" and (ws_path / "alias").is_symlink()
        # A dangling link inside the workspace resolves to a path inside: creating it is fine,
        # and it creates the link's target, never replaces the link with a file.
        result = await _call(
            client, "create_new_file_with_text", {"pathInProject": "dangling_in", "text": "made"}
        )
        assert not result.is_error, result_text(result)
        assert (ws_path / "dangling_in").is_symlink()
        assert (ws_path / "nowhere-inside.txt").read_text() == "made"


# ----------------------------------------------------------------------------- read-only


def _example_args(spec: Any, schema: dict[str, Any]) -> dict[str, Any]:
    if spec.example:
        return dict(spec.example)
    key = path_key(schema)
    return args_for(spec.name, schema, "a.txt") if key else {}


async def test_read_only_refuses_every_mutating_tool_and_keeps_reads(mcp, ws_path: Path) -> None:
    (ws_path / "a.txt").write_text("alpha root\n")
    subprocess.run(["git", "init", "-q", str(ws_path)], check=True)  # so git tools are offered, and refused
    before = snapshot(ws_path)
    policy = Policy(read_only=True)
    async with mcp(ws_path, policy=policy, options=ServerOptions(read_only=True)) as client:
        for spec in ALL_SPECS:
            if spec.read_only:
                continue
            result = await _call(client, spec.name, _example_args(spec, ALL_SCHEMAS[spec.name]))
            text = result_text(result)
            assert result.is_error, f"{spec.name} ran in read-only mode: {text[:300]}"
            # Refused by the read-only rule, or earlier for a feature this workspace lacks.
            assert ("read-only" in text or "unavailable" in text) and "rule:" in text, (
                f"{spec.name}: {text[:300]}"
            )
        for tool, args in (
            ("get_file_text_by_path", {"pathInProject": "a.txt"}),
            ("list_files_in_folder", {"pathInProject": "/"}),
            ("project_fs_read", {"path": "a.txt"}),
            ("project_fs_list", {}),
            ("search_in_files_content", {"searchText": "alpha"}),
            ("find_files_by_name_substring", {"nameSubstring": "a.t"}),
        ):
            if tool in ALL_SCHEMAS:
                result = await _call(client, tool, args)
                assert not result.is_error, f"{tool} refused in read-only mode: {result_text(result)}"
    assert snapshot(ws_path) == before


def test_read_only_flag_on_http(http_server, ws_path: Path) -> None:
    (ws_path / "a.txt").write_text("alpha root\n")
    server = http_server(ws_path, "--read-only")
    before = snapshot(ws_path)
    with httpx.Client(base_url=server.url, timeout=30) as http:
        for spec in ALL_SPECS:
            if spec.read_only or spec.category not in CORE_CATEGORIES:
                continue
            r = http.post(f"/mcp/{spec.name}", json=_example_args(spec, ALL_SCHEMAS[spec.name]))
            assert r.status_code == 403 and "read-only" in r.json()["error"], (
                f"{spec.name}: {r.status_code} {r.text[:300]}"
            )
        for tool in WRITE_TOOLS:
            r = http.post(f"/mcp/{tool}", json=args_for(tool, ALL_SCHEMAS[tool], "a.txt"))
            assert r.status_code == 403, f"{tool}: {r.status_code} {r.text[:200]}"
        r = http.post("/mcp/get_file_text_by_path", json={"pathInProject": "a.txt"})
        assert r.status_code == 200 and r.json()["status"]["content"] == "alpha root\n"
    assert snapshot(ws_path) == before

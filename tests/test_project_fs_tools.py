"""project_fs_read / _list / _write / _edit (seed 001), through an MCP client session."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path
from typing import Any

import pytest

from mcp_server_ide.workspace import Policy

from .support.results import payload

pytestmark = pytest.mark.anyio

CAP = 200 * 1024


def write(root: Path, rel: str, data: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    return path


async def call(client: Any, name: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, args)
    assert not result.is_error, result.content[0].text
    return payload(result)


async def fail(client: Any, name: str, args: dict[str, Any]) -> str:
    result = await client.call_tool(name, args)
    assert result.is_error, result.content[0].text
    return result.content[0].text


# ----------------------------------------------------------------------------- read


async def test_read_whole_file_and_seed_root(mcp: Any, ws_path: Path) -> None:
    data = b"line one\nline two\nline three\n"
    write(ws_path, "src/app.ts", data)
    async with mcp(ws_path) as client:
        for path in ("src/app.ts", "/workspace/src/app.ts", str(ws_path / "src" / "app.ts")):
            got = await call(client, "project_fs_read", {"path": path})
            # The path only where it is not the one given; no defaults (utf-8, not truncated, lines 1-3 of 3).
            assert got.pop("path", "src/app.ts") == os.path.join("src", "app.ts")
            assert got == {
                "content": data.decode(),
                "totalLines": 3,
                "bytes": len(data),
                "hash": hashlib.sha256(data).hexdigest()[:16],  # MCP: 16 digits are enough
            }
        message = await fail(client, "project_fs_read", {"path": "../outside.txt"})
        assert "outside the workspace" in message
        message = await fail(client, "project_fs_read", {"path": "src"})
        assert "folder" in message and "project_fs_list" in message
        message = await fail(client, "project_fs_read", {"path": "src/missing.ts"})
        assert "not found" in message


async def test_read_slices(mcp: Any, ws_path: Path) -> None:
    write(ws_path, "ten.txt", "".join(f"line {i}\n" for i in range(1, 11)))
    write(ws_path, "open.txt", "a\nb\nc")  # no final newline
    write(ws_path, "empty.txt", "")
    write(ws_path, "crlf.txt", b"one\r\ntwo\r\nthree\r\n")
    async with mcp(ws_path) as client:
        got = await call(client, "project_fs_read", {"path": "ten.txt", "startLine": 3, "endLine": 5})
        assert got["content"] == "line 3\nline 4\nline 5\n"
        assert got["totalLines"] == 10 and not {"startLine", "endLine", "returnedLines", "path"} & set(got)
        got = await call(client, "project_fs_read", {"path": "ten.txt", "startLine": 9, "endLine": 99})
        assert (got["content"], got["endLine"], "startLine" in got) == ("line 9\nline 10\n", 10, False)
        got = await call(client, "project_fs_read", {"path": "ten.txt", "endLine": 1})
        assert got["content"] == "line 1\n" and "endLine" not in got and "startLine" not in got
        got = await call(client, "project_fs_read", {"path": "open.txt", "startLine": 2})
        assert (got["content"], got["totalLines"], "endLine" in got) == ("b\nc", 3, False)
        got = await call(client, "project_fs_read", {"path": "open.txt", "startLine": 3, "endLine": 3})
        assert got["content"] == "c"
        got = await call(client, "project_fs_read", {"path": "empty.txt"})
        assert (got["content"], got["totalLines"], got["bytes"], "endLine" in got) == ("", 0, 0, False)
        got = await call(client, "project_fs_read", {"path": "crlf.txt", "startLine": 2, "endLine": 2})
        assert got["content"] == "two\n" and "encoding" not in got  # utf-8, the default
        message = await fail(client, "project_fs_read", {"path": "ten.txt", "startLine": 11})
        assert "past the end" in message and "10 lines" in message
        message = await fail(client, "project_fs_read", {"path": "ten.txt", "startLine": 5, "endLine": 4})
        assert "before startLine" in message
        message = await fail(client, "project_fs_read", {"path": "ten.txt", "startLine": 0})
        assert "startLine" in message


def _split_marker(content: str) -> tuple[str, int, str]:
    import re

    found = re.search(r"…\[(\d+) bytes truncated\]…", content)
    assert found is not None, content[:200]
    assert len(re.findall(r"…\[\d+ bytes truncated\]…", content)) == 1
    return content[: found.start()], int(found.group(1)), content[found.end() :]


async def test_big_file_keeps_head_and_tail_around_exact_marker(mcp: Any, ws_path: Path) -> None:
    lines = [f"{i:06d} " + "x" * (i % 70) + "\n" for i in range(1, 7001)]
    text = "".join(lines)
    assert len(text.encode()) > CAP
    write(ws_path, "big.txt", text)
    async with mcp(ws_path) as client:
        got = await call(client, "project_fs_read", {"path": "big.txt"})
        assert got["truncated"] is True and got["totalLines"] == 7000 and got["bytes"] == len(text)
        head, omitted, tail = _split_marker(got["content"])
        # Cut on line breaks: the marker stands on its own line in place of whole lines.
        assert head.endswith("\n") and tail.startswith("\n")
        tail = tail[1:]
        assert text.startswith(head) and text.endswith(tail)
        middle = text[len(head) : len(text) - len(tail)]
        assert omitted == len(middle.encode())
        assert len(head.encode()) + len(tail.encode()) <= CAP
        assert len(head.encode()) > CAP // 2 - 200 and len(tail.encode()) > CAP // 2 - 200
        first, last = got["omittedStartLine"], got["omittedEndLine"]
        assert "".join(lines[first - 1 : last]) == middle
        assert got["returnedLines"] == 7000 - (last - first + 1)
        # The omitted lines come back whole as a slice.
        part = await call(client, "project_fs_read", {"path": "big.txt", "startLine": first, "endLine": last})
        assert part["content"] == middle and "truncated" not in part


async def test_one_huge_line_is_cut_on_character_boundaries(mcp: Any, ws_path: Path) -> None:
    text = "é€" * 60000 + "\n"  # 5 bytes a pair, no line break to cut at
    write(ws_path, "min.js", text)
    async with mcp(ws_path) as client:
        got = await call(client, "project_fs_read", {"path": "min.js"})
        head, omitted, tail = _split_marker(got["content"])
        assert text.startswith(head) and text.endswith(tail)
        assert omitted == len(text.encode()) - len(head.encode()) - len(tail.encode())
        assert (got["omittedStartLine"], got["omittedEndLine"], got["returnedLines"]) == (1, 1, 0)


async def test_huge_file_is_streamed(mcp: Any, ws_path: Path) -> None:
    line = "0123456789" * 9 + "\n"
    count = 17 * 1024 * 1024 // len(line) + 10  # over the 16 MB whole-file limit
    with open(ws_path / "huge.log", "w") as out:
        for i in range(count):
            out.write(f"{i:09d}" + line[9:])
    size = (ws_path / "huge.log").stat().st_size
    async with mcp(ws_path) as client:
        got = await call(
            client, "project_fs_read", {"path": "huge.log", "startLine": 100001, "endLine": 100002}
        )
        assert got["content"] == f"{100000:09d}{line[9:]}{100001:09d}{line[9:]}"
        assert (got["totalLines"], got["bytes"], "truncated" in got) == (count, size, False)
        got = await call(client, "project_fs_read", {"path": "huge.log"})
        head, omitted, tail = _split_marker(got["content"])
        assert head.startswith("000000000") and tail.rstrip("\n").endswith(line[9:].rstrip("\n"))
        assert (
            omitted == size - len(head.encode()) - len(tail.encode()) + 1
        )  # the marker's "\n" stands for one
        assert got["truncated"] is True and got["totalLines"] == count


async def test_read_encodings(mcp: Any, ws_path: Path) -> None:
    write(ws_path, "u16.txt", "\ufeffgrüße\r\nzwei\r\n".encode("utf-16-le"))
    write(ws_path, "cp.txt", "caf\xe9 ol\xe9\n".encode("cp1252"))
    write(ws_path, "bin.dat", b"\x00\x01\x02abc")
    async with mcp(ws_path) as client:
        got = await call(client, "project_fs_read", {"path": "u16.txt"})
        assert got["content"] == "grüße\nzwei\n" and got["encoding"] == "utf-16-le-bom"
        got = await call(client, "project_fs_read", {"path": "cp.txt"})
        assert got["content"] == "café olé\n" and got["encoding"] == "cp1252"
        assert "binary" in await fail(client, "project_fs_read", {"path": "bin.dat"})


# ----------------------------------------------------------------------------- list


async def test_list_root_sorted_and_skipping(mcp: Any, ws_path: Path) -> None:
    write(ws_path, "b.txt", "bb")
    write(ws_path, "a.txt", "a")
    write(ws_path, "src/main.py", "print()\n")
    write(ws_path, "node_modules/x/index.js", "")
    write(ws_path, ".git/HEAD", "ref\n")
    write(ws_path, "dist/app.js", "")
    write(ws_path, "src/dist/gen.js", "")
    write(ws_path, "src/node_modules/y.js", "")
    write(ws_path, ".github/ci.yml", "on: push\n")
    write(ws_path, "src/.main.py.abcd.mcp-ide.tmp", "partial")
    async with mcp(ws_path) as client:
        got = await call(client, "project_fs_list", {})
        assert got["dir"] == "."
        assert got["entries"] == [
            {"path": ".github", "type": "directory", "size": 0},
            {"path": "a.txt", "type": "file", "size": 1},
            {"path": "b.txt", "type": "file", "size": 2},
            {"path": "src", "type": "directory", "size": 0},
        ]
        assert got["count"] == 4
        got = await call(client, "project_fs_list", {"recursive": True})
        assert [e["path"] for e in got["entries"]] == [
            ".github",
            os.path.join(".github", "ci.yml"),
            "a.txt",
            "b.txt",
            "src",
            os.path.join("src", "main.py"),
        ]
        got = await call(client, "project_fs_list", {"dir": "/workspace/src"})
        assert got["dir"] == "src" and [e["path"] for e in got["entries"]] == [os.path.join("src", "main.py")]
        assert "not found" in await fail(client, "project_fs_list", {"dir": "nope"})
        assert "is a file" in await fail(client, "project_fs_list", {"dir": "a.txt"})
        assert "outside the workspace" in await fail(client, "project_fs_list", {"dir": "../"})


async def test_list_recursive_honours_gitignore(mcp: Any, ws_path: Path) -> None:
    write(ws_path, ".gitignore", "build/\n*.pyc\n.venv/\n")
    write(ws_path, "src/a.py", "")
    write(ws_path, "src/a.pyc", "")
    write(ws_path, "build/lib/out.py", "")
    write(ws_path, ".venv/bin/python3", "")
    (ws_path / ".venv" / "bin" / "python").symlink_to("python3")
    (ws_path / "empty").mkdir()
    async with mcp(ws_path) as client:
        got = await call(client, "project_fs_list", {"recursive": True})
        assert [e["path"] for e in got["entries"]] == [
            ".gitignore",
            "empty",
            "src",
            os.path.join("src", "a.py"),
        ]
        got = await call(client, "project_fs_list", {"recursive": True, "includeIgnored": True})
        listed = [e["path"] for e in got["entries"]]
        assert (
            os.path.join("build", "lib", "out.py") in listed
            and os.path.join(".venv", "bin", "python") in listed
        )
        # A plain listing of one folder shows what is in it.
        got = await call(client, "project_fs_list", {})
        assert "build" in [e["path"] for e in got["entries"]]
        # The root's .gitignore applies below a subfolder too.
        got = await call(client, "project_fs_list", {"dir": "src", "recursive": True})
        assert [e["path"] for e in got["entries"]] == [os.path.join("src", "a.py")]


async def test_list_never_follows_symlinks_or_loops(mcp: Any, ws_path: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    write(ws_path, "src/a.txt", "a")
    (ws_path / "out").symlink_to(outside, target_is_directory=True)
    (ws_path / "loop").symlink_to(ws_path, target_is_directory=True)
    (ws_path / "src" / "up").symlink_to("..", target_is_directory=True)
    (ws_path / "dangling").symlink_to(tmp_path / "nothing")
    async with mcp(ws_path) as client:
        for recursive in (False, True):
            got = await call(client, "project_fs_list", {"recursive": recursive, "includeIgnored": True})
            by_path = {e["path"]: e for e in got["entries"]}
            assert by_path["out"] == {"path": "out", "type": "symlink", "size": 0}
            assert by_path["loop"]["type"] == "symlink" and by_path["dangling"]["type"] == "symlink"
            assert not any("secret" in p for p in by_path)
        assert len(got["entries"]) == 6  # dangling, loop, out, src, src/a.txt, src/up
        message = await fail(client, "project_fs_list", {"dir": "out"})
        assert "outside the workspace" in message and str(outside) not in message


async def test_list_recursive_deep_tree_and_the_page_sizes(mcp: Any, ws_path: Path) -> None:
    """The walk holds a descriptor per level down to a depth, then reopens folders from the root one
    name at a time: a tree deeper than that lists whole. Sizes are read for the page's files only, so
    each page carries its own files' sizes; ignored folders beside kept ones are left out at every
    depth, folders holding only ignored files too, empty ones stay."""
    write(ws_path, ".gitignore", "*.log\nskip/\n")
    deep = "/".join(f"d{i}" for i in range(80))
    write(ws_path, f"{deep}/bottom.txt", "12345")
    write(ws_path, f"{deep}/noise.log", "x")
    write(ws_path, f"{deep}/skip/hidden.txt", "x")
    write(ws_path, "logs/only.log", "x")
    (ws_path / deep / "empty").mkdir()
    (ws_path / deep / "link").symlink_to("bottom.txt")
    async with mcp(ws_path) as client:
        got = await call(client, "project_fs_list", {"recursive": True, "maxEntries": 20000})
        listed = {e["path"]: e for e in got["entries"]}
        folders = ["/".join(f"d{i}" for i in range(n + 1)) for n in range(80)]
        expected = {".gitignore", *folders, f"{deep}/bottom.txt", f"{deep}/empty", f"{deep}/link"}
        assert set(listed) == {p.replace("/", os.sep) for p in expected}
        assert got["total"] == len(expected) and got["truncated"] is False
        assert listed[os.path.join(*deep.split("/"), "bottom.txt")]["size"] == 5
        assert listed[os.path.join(*deep.split("/"), "link")] == {
            "path": os.path.join(*deep.split("/"), "link"),
            "type": "symlink",
            "size": 0,
        }
        assert listed[".gitignore"]["size"] == len("*.log\nskip/\n")
        # The last page: the sizes of its own files.
        got = await call(client, "project_fs_list", {"recursive": True, "maxEntries": 3, "offset": 81})
        assert [(e["type"], e["size"]) for e in got["entries"]] == [
            ("file", 5),
            ("directory", 0),
            ("symlink", 0),
        ]
        assert (got["count"], got["total"], "nextOffset" in got) == (3, 84, False)  # null: left out


async def test_list_recursive_sees_every_change_to_folders_it_read_before(
    mcp: Any, ws_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A walk reuses its reads of folders that have been still a while (here 50 ms, not 2 s) while
    their change times stay: a file added or removed, a file turned folder, a folder swapped for a
    link out, a new ignored file each move them, and the next listing shows it."""
    from mcp_server_ide.tools.project_fs import walk

    monkeypatch.setattr(walk, "SETTLED_NS", 50_000_000)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    write(ws_path, ".gitignore", "*.log\n")
    write(ws_path, "src/a.py", "")
    write(ws_path, "src/sub/b.py", "")
    write(ws_path, "src/leaf/c.py", "")
    write(ws_path, "src/gone/d.py", "")
    (ws_path / "empty").mkdir()

    async def listed(**args: Any) -> list[tuple[str, str]]:
        got = await call(client, "project_fs_list", {"recursive": True, **args})
        return [(e["path"].replace(os.sep, "/"), e["type"]) for e in got["entries"]]

    time.sleep(0.1)  # settled: the first listing keeps its reads (without, it reads every time)
    async with mcp(ws_path) as client:
        before = await listed()
        assert ("src/leaf/c.py", "file") in before and ("empty", "directory") in before
        assert walk._READS.by_folder  # the reads are kept, so the listings below reuse them
        assert await listed() == before
        write(ws_path, "src/leaf/new.py", "")
        (ws_path / "src/sub/b.py").unlink()
        (ws_path / "src/a.py").unlink()
        write(ws_path, "src/a.py/inner.py", "")
        (ws_path / "src/gone/d.py").unlink()
        (ws_path / "src/gone").rmdir()
        (ws_path / "src/gone").symlink_to(outside, target_is_directory=True)
        write(ws_path, "empty/noise.log", "x")
        assert await listed() == [
            (".gitignore", "file"),
            ("src", "directory"),
            ("src/a.py", "directory"),
            ("src/a.py/inner.py", "file"),
            ("src/gone", "symlink"),
            ("src/leaf", "directory"),
            ("src/leaf/c.py", "file"),
            ("src/leaf/new.py", "file"),
            ("src/sub", "directory"),
        ]
        assert ("empty/noise.log", "file") in await listed(includeIgnored=True)


def _edit_in_place(path: Path, text: str) -> None:
    """Rewrite a file's bytes without replacing it: its folder's times stay, only its own move."""
    with path.open("r+b") as f:
        f.truncate(0)
        f.write(text.encode())


async def test_a_remembered_listing_sees_every_ignore_file_edited_in_place(
    mcp: Any, ws_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A listing of a folder listed before takes the last answer while no folder was read anew and
    no ignore file changed (here settled after 50 ms, not 2 s): an ignore file edited in place moves
    no folder's times, and still the next listing follows it, whether it is the root's .gitignore,
    a subfolder's .ignore or .rgignore, a folder's above the one listed, or .git/info/exclude."""
    from mcp_server_ide.engines import sandbox
    from mcp_server_ide.tools.project_fs import kept, walk
    from mcp_server_ide.workspace import Workspace

    monkeypatch.setattr(walk, "SETTLED_NS", 50_000_000)
    write(ws_path, ".gitignore", "*.log\n")
    write(ws_path, ".git/info/exclude", "# none\n")
    write(ws_path, "src/.ignore", "# none\n")
    write(ws_path, "src/deep/.rgignore", "# none\n")
    for rel in ("a.log", "a.tmp", "src/b.gen", "src/deep/c.bak", "src/deep/keep.py", "d.cache"):
        write(ws_path, rel, "")

    async def listed(**args: Any) -> set[str]:
        got = await call(client, "project_fs_list", {"recursive": True, **args})
        return {e["path"].replace(os.sep, "/") for e in got["entries"]}

    time.sleep(0.2)  # settled: the listing is remembered (without, ripgrep runs every time)
    async with mcp(ws_path) as client:
        everything = {"a.tmp", "d.cache", "src", "src/.ignore", "src/b.gen", "src/deep"}
        everything |= {"src/deep/.rgignore", "src/deep/c.bak", "src/deep/keep.py", ".gitignore"}
        assert await listed() == everything
        assert kept.remembers(sandbox.resolve(Workspace.open(ws_path), ""))
        assert await listed() == everything  # the remembered answer
        page = {"recursive": True, "maxEntries": 4, "offset": 4}
        first = await call(client, "project_fs_list", page)
        kept._remembered = None  # the same page worked out anew (ripgrep runs): the same answer
        assert await call(client, "project_fs_list", page) == first
        assert await call(client, "project_fs_list", page) == first  # and remembered again
        steps = [
            (ws_path / ".gitignore", "*.log\n*.tmp\n", {"a.tmp"}),
            (ws_path / "src/.ignore", "*.gen\n", {"src/b.gen"}),
            (ws_path / "src/deep/.rgignore", "*.bak\n", {"src/deep/c.bak"}),
            (ws_path / ".git/info/exclude", "*.cache\n", {"d.cache"}),
        ]
        for path, text, gone in steps:
            _edit_in_place(path, text)
            everything -= gone
            assert await listed() == everything, path
            time.sleep(0.2)
            assert await listed() == everything, path  # remembered again, and still right
        # A folder below the root, listed again: the root's .gitignore bears on it too.
        sub = {p for p in everything if p.startswith("src/")}
        assert await listed(dir="src") == sub
        time.sleep(0.2)
        assert await listed(dir="src") == sub
        _edit_in_place(ws_path / ".gitignore", "*.log\n*.tmp\nkeep.py\n")
        assert await listed(dir="src") == sub - {"src/deep/keep.py"}


async def test_list_pages(mcp: Any, ws_path: Path) -> None:
    for i in range(7):
        write(ws_path, f"f{i}.txt", "")
    async with mcp(ws_path) as client:
        got = await call(client, "project_fs_list", {"maxEntries": 3, "offset": 3})
        assert [e["path"] for e in got["entries"]] == ["f3.txt", "f4.txt", "f5.txt"]
        assert (got["count"], got["total"], got["truncated"], got["nextOffset"]) == (3, 7, True, 6)
        got = await call(client, "project_fs_list", {"maxEntries": 3, "offset": 6})
        assert (got["count"], got["truncated"], "nextOffset" in got) == (1, False, False)  # null: left out


# ----------------------------------------------------------------------------- write


async def test_write_creates_and_replaces(mcp: Any, ws_path: Path) -> None:
    async with mcp(ws_path) as client:
        got = await call(
            client, "project_fs_write", {"path": "src/new/deep/file.ts", "content": "export {};\n"}
        )
        assert got["path"] == os.path.join("src", "new", "deep", "file.ts")
        assert (got["bytes"], got["created"]) == (11, True)
        assert (ws_path / "src/new/deep/file.ts").read_bytes() == b"export {};\n"
        got = await call(
            client, "project_fs_write", {"path": "/workspace/src/new/deep/file.ts", "content": "x\n"}
        )
        assert (got["bytes"], got["created"]) == (2, False)
        assert got["hash"] == hashlib.sha256(b"x\n").hexdigest()[:16]
        message = await fail(
            client,
            "project_fs_write",
            {"path": "src/new/deep/file.ts", "content": "y\n", "expectedHash": "0" * 64},
        )
        assert "changed since" in message and (ws_path / "src/new/deep/file.ts").read_bytes() == b"x\n"
        assert "folder" in await fail(client, "project_fs_write", {"path": "src", "content": "x"})
        assert "outside the workspace" in await fail(
            client, "project_fs_write", {"path": "../x", "content": "x"}
        )


@pytest.mark.parametrize(
    "path, rule",
    [
        ("node_modules/x", "node_modules"),
        ("pkg/node_modules/lib/index.js", "node_modules"),
        (".git/config", ".git"),
        ("src/../.git/config", ".git"),
        ("./.git//hooks/pre-commit", ".git"),
        ("vendor/lib/.git/config", ".git"),
        (".GIT/config", ".git"),
        ("src/brand/logo.svg", "src/brand"),
        ("src/Brand/logo.svg", "src/brand"),
        ("/workspace/src/onchain/contract.sol", "src/onchain"),
    ],
)
async def test_write_refuses_protected_paths(mcp: Any, ws_path: Path, path: str, rule: str) -> None:
    write(ws_path, ".git/config", "[core]\n")
    async with mcp(ws_path, policy=Policy(protected=("src/brand", "src/onchain"))) as client:
        message = await fail(client, "project_fs_write", {"path": path, "content": "pwned\n"})
        assert "protected" in message and repr(rule) in message and "rule:" in message
        message = await fail(client, "project_fs_edit", {"path": path, "oldText": "[core]", "newText": "x"})
        assert "protected" in message
    assert (ws_path / ".git/config").read_text() == "[core]\n"
    assert not (ws_path / "node_modules").exists() and not (ws_path / "src").exists()


async def test_write_through_symlink_to_protected_folder_is_refused(mcp: Any, ws_path: Path) -> None:
    write(ws_path, ".git/config", "[core]\n")
    (ws_path / "cfg").symlink_to(ws_path / ".git", target_is_directory=True)
    async with mcp(ws_path) as client:
        message = await fail(client, "project_fs_write", {"path": "cfg/config", "content": "x"})
        assert "protected" in message and "'.git'" in message
    assert (ws_path / ".git/config").read_text() == "[core]\n"


@pytest.mark.parametrize("path", ["src/brandnew/x", ".gitignore", ".github/x", "x.git", "src/onchainy.txt"])
async def test_near_misses_stay_writable(mcp: Any, ws_path: Path, path: str) -> None:
    async with mcp(ws_path, policy=Policy(protected=("src/brand", "src/onchain"))) as client:
        got = await call(client, "project_fs_write", {"path": path, "content": "ok\n"})
        assert got["created"] is True
    assert (ws_path / path).read_text() == "ok\n"


ENCODED_FILES = {
    "crlf.txt": b"first line\r\nsecond line\r\nthird\r\n",
    "bom.txt": b"\xef\xbb\xbffirst line\nsecond line\nthird\n",
    "u16.txt": "\ufefffirst line\r\nsecond line\r\nthird\r\n".encode("utf-16-le"),
    "cp.txt": "first line\r\nsecond line caf\xe9\r\nthird\r\n".encode("cp1252"),
    "mixed.txt": b"first line\r\nsecond line\nthird\r\n",
}


@pytest.mark.parametrize("name", sorted(ENCODED_FILES))
async def test_write_keeps_encoding_line_endings_and_mode(mcp: Any, ws_path: Path, name: str) -> None:
    raw = ENCODED_FILES[name]
    path = write(ws_path, name, raw)
    path.chmod(0o755)
    async with mcp(ws_path) as client:
        got = await call(client, "project_fs_read", {"path": name})
        await call(client, "project_fs_write", {"path": name, "content": got["content"]})
        assert path.read_bytes() == raw  # a read written back changes nothing
        await call(
            client, "project_fs_write", {"path": name, "content": got["content"].replace("third", "3rd")}
        )
    assert path.read_bytes() == raw.replace(b"third", b"3rd").replace(
        b"t\x00h\x00i\x00r\x00d\x00", b"3\x00r\x00d\x00"
    )
    assert path.stat().st_mode & 0o777 == 0o755


async def test_write_refuses_truncated_text_and_lossy_encoding(mcp: Any, ws_path: Path) -> None:
    write(ws_path, "big.txt", "".join(f"{i:07d}\n" for i in range(40000)))
    write(ws_path, "cp.txt", "caf\xe9\n".encode("cp1252"))
    async with mcp(ws_path) as client:
        got = await call(client, "project_fs_read", {"path": "big.txt"})
        assert got["truncated"]
        message = await fail(client, "project_fs_write", {"path": "big.txt", "content": got["content"]})
        assert "truncated" in message and "rule:" in message
        message = await fail(client, "project_fs_write", {"path": "copy.txt", "content": got["content"]})
        assert "truncated" in message and not (ws_path / "copy.txt").exists()
        await call(client, "project_fs_read", {"path": "cp.txt"})
        message = await fail(client, "project_fs_write", {"path": "cp.txt", "content": "snow ☃\n"})
        assert "cannot hold" in message
    assert (ws_path / "cp.txt").read_bytes() == b"caf\xe9\n"


async def test_read_only_server_refuses_writes(mcp: Any, ws_path: Path) -> None:
    from mcp_server_ide.server import ServerOptions

    write(ws_path, "a.txt", "a\n")
    async with mcp(ws_path, policy=Policy(read_only=True), options=ServerOptions(read_only=True)) as client:
        assert "read-only" in await fail(client, "project_fs_write", {"path": "a.txt", "content": "b\n"})
        assert "read-only" in await fail(
            client, "project_fs_edit", {"path": "a.txt", "oldText": "a", "newText": "b"}
        )
        assert (await call(client, "project_fs_read", {"path": "a.txt"}))["content"] == "a\n"
    assert (ws_path / "a.txt").read_text() == "a\n"


# ----------------------------------------------------------------------------- edit


async def test_edit_replaces_exactly_one_region(mcp: Any, ws_path: Path) -> None:
    path = write(ws_path, "src/app.ts", "const a = 1;\nconst port = 3000;\nconst b = 2;\n")
    async with mcp(ws_path) as client:
        got = await call(
            client,
            "project_fs_edit",
            {"path": "src/app.ts", "oldText": "const port = 3000;", "newText": "const port = 8080;"},
        )
        assert got["path"] == os.path.join("src", "app.ts") and got["line"] == 2
        assert path.read_text() == "const a = 1;\nconst port = 8080;\nconst b = 2;\n"
        assert (
            got["bytes"] == len(path.read_bytes())
            and got["hash"] == hashlib.sha256(path.read_bytes()).hexdigest()[:16]
        )
        # Multi-line regions, and deleting with an empty newText.
        await call(
            client,
            "project_fs_edit",
            {"path": "src/app.ts", "oldText": "1;\nconst port", "newText": "1;\nlet port"},
        )
        await call(
            client, "project_fs_edit", {"path": "src/app.ts", "oldText": "const b = 2;\n", "newText": ""}
        )
        assert path.read_text() == "const a = 1;\nlet port = 8080;\n"


async def test_edit_missing_or_ambiguous_changes_nothing(mcp: Any, ws_path: Path) -> None:
    raw = b"x = 1\nx = 1\nx = 1\n    indented(thing)\naaa\n"
    path = write(ws_path, "m.py", raw)
    before = path.stat().st_mtime_ns
    async with mcp(ws_path) as client:
        message = await fail(
            client, "project_fs_edit", {"path": "m.py", "oldText": "x = 1", "newText": "x = 2"}
        )
        assert "ambiguous" in message and "3 times" in message and "nothing was changed" in message
        message = await fail(client, "project_fs_edit", {"path": "m.py", "oldText": "y = 1", "newText": "x"})
        assert "0 times" in message and "nothing was changed" in message
        message = await fail(
            client, "project_fs_edit", {"path": "m.py", "oldText": "indented( thing )", "newText": "x"}
        )
        assert "0 times" in message and "whitespace" in message
        message = await fail(client, "project_fs_edit", {"path": "m.py", "oldText": "aa", "newText": "b"})
        assert "2 times" in message  # overlapping occurrences count
        message = await fail(client, "project_fs_edit", {"path": "m.py", "oldText": "", "newText": "b"})
        assert "empty" in message
        message = await fail(
            client,
            "project_fs_edit",
            {"path": "m.py", "oldText": "aaa", "newText": "b", "expectedHash": "f" * 64},
        )
        assert "changed since" in message
        message = await fail(client, "project_fs_edit", {"path": "none.py", "oldText": "a", "newText": "b"})
        assert "not found" in message and "project_fs_write" in message
    assert path.read_bytes() == raw and path.stat().st_mtime_ns == before
    assert sorted(p.name for p in ws_path.iterdir()) == ["m.py"]  # no temp file left behind


@pytest.mark.parametrize("name", sorted(ENCODED_FILES))
async def test_edit_keeps_encoding_line_endings_and_mode_byte_exactly(
    mcp: Any, ws_path: Path, name: str
) -> None:
    raw = ENCODED_FILES[name]
    path = write(ws_path, name, raw)
    path.chmod(0o640)
    async with mcp(ws_path) as client:
        got = await call(client, "project_fs_read", {"path": name})
        got = await call(
            client,
            "project_fs_edit",
            {"path": name, "oldText": "second line", "newText": "2nd line", "expectedHash": got["hash"]},
        )
        assert got["line"] == 2
        # A multi-line region given with \n matches a CRLF file, and comes back with CRLF. A file with mixed
        # endings is edited as it is (the read gave its \r\n): there the \n does not match.
        args = {"path": name, "oldText": "first line\n2nd", "newText": "1st\n2nd"}
        if name == "mixed.txt":
            assert "0 times" in await fail(client, "project_fs_edit", args)
        else:
            await call(client, "project_fs_edit", args)
    codec = "utf-16-le" if name == "u16.txt" else "cp1252"
    expected = raw.replace("second line".encode(codec), "2nd line".encode(codec)).replace(
        "first line".encode(codec), "1st".encode(codec)
    )
    if name == "mixed.txt":  # mixed endings are edited as they are: the caller's \n does not match \r\n
        assert path.read_bytes() == raw.replace(b"second line", b"2nd line")
    else:
        assert path.read_bytes() == expected
    assert path.stat().st_mode & 0o777 == 0o640


async def test_edit_refuses_truncation_marker_unless_the_file_has_it(mcp: Any, ws_path: Path) -> None:
    path = write(ws_path, "doc.md", "The reader prints …[12 bytes truncated]… when it cuts.\nEnd.\n")
    async with mcp(ws_path) as client:
        await call(
            client,
            "project_fs_edit",
            {"path": "doc.md", "oldText": "End.", "newText": "…[12 bytes truncated]… End."},
        )
        message = await fail(
            client,
            "project_fs_edit",
            {"path": "doc.md", "oldText": "End.", "newText": "…[99 bytes truncated]…"},
        )
        assert "truncated" in message
    assert path.read_text().endswith("…[12 bytes truncated]… End.\n")


async def test_replacing_a_file_never_read_asks_first(mcp: Any, ws_path: Path) -> None:
    from mcp_types import ElicitResult

    path = write(ws_path, "notes.md", "mine\n")
    asked: list[str] = []

    async def decline(ctx: Any, params: Any) -> Any:
        asked.append(params.message)
        return ElicitResult(action="decline")

    async with mcp(ws_path, elicitation_callback=decline) as client:
        message = await fail(client, "project_fs_write", {"path": "notes.md", "content": "theirs\n"})
        assert "declined" in message and path.read_text() == "mine\n"
        assert asked == ["Overwrite 'notes.md'? The assistant has not read this file in this session."]
        # expectedHash shows the caller knows the content; a file it wrote itself is known; a read counts.
        digest = hashlib.sha256(b"mine\n").hexdigest()
        await call(
            client, "project_fs_write", {"path": "notes.md", "content": "v2\n", "expectedHash": digest}
        )
        await call(client, "project_fs_write", {"path": "notes.md", "content": "v3\n"})
        write(ws_path, "other.md", "x\n")
        await call(client, "project_fs_read", {"path": "other.md", "startLine": 1, "endLine": 1})
        await call(client, "project_fs_write", {"path": "other.md", "content": "y\n"})
        await call(client, "project_fs_write", {"path": "new.md", "content": "n\n"})  # nothing to lose
        assert len(asked) == 1
    assert path.read_text() == "v3\n" and (ws_path / "other.md").read_text() == "y\n"

"""search_in_files_content and find_files_by_name_substring, through an MCP client session (real ripgrep)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from .support.results import page as page_of

pytestmark = pytest.mark.anyio


def write(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", newline="")
    return path


async def call(client: Any, name: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, args)
    assert not result.is_error, result.content[0].text
    return page_of(result)


async def fail(client: Any, name: str, args: dict[str, Any]) -> str:
    result = await client.call_tool(name, args)
    assert result.is_error, result.content[0].text
    return result.content[0].text


def paths(page: dict[str, Any]) -> list[str]:
    return [hit["path"] for hit in page["result"]]


@pytest.fixture
def project(ws_path: Path) -> Path:
    write(ws_path, "src/utils/helper.js", "// util\nfunction helper() { return 1; }\n")
    write(ws_path, "test/helper.test.js", "import x from 'y';\n\n  function helper() {}\n")
    write(ws_path, "README.md", "Nothing here.\n")
    return ws_path


async def test_seed_example_shape(mcp: Any, project: Path) -> None:
    async with mcp(project) as client:
        result = await client.call_tool("search_in_files_content", {"searchText": "function helper"})
        assert not result.is_error
        page = page_of(result)
        assert paths(page) == [
            os.path.join("src", "utils", "helper.js"),
            os.path.join("test", "helper.test.js"),
        ]
        first = page["result"][0]
        assert "absolutePath" not in first  # `path` says it; the REST door keeps the seed's field
        assert "matchCount" not in first  # the one line listed says it (the REST door keeps it)
        assert first["matches"] == [{"line": 2, "column": 1, "preview": "function helper() { return 1; }"}]
        # Leading indentation is trimmed from the preview; the column stays the real one.
        assert page["result"][1]["matches"] == [{"line": 3, "column": 3, "preview": "function helper() {}"}]
        # The whole list: one text block, the seed's JSON array itself, no page facts, no structuredContent.
        assert len(result.content) == 1 and result.structured_content is None
        assert json.loads(result.content[0].text) == page["result"]


async def test_output_schema_declares_page_fields(mcp: Any, project: Path) -> None:
    """With --structured-content the page facts are published in the output schema and sent."""
    from mcp_server_ide.server import ServerOptions

    async with mcp(project, options=ServerOptions(structured_content=True)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        for name in ("search_in_files_content", "find_files_by_name_substring"):
            schema = tools[name].output_schema
            assert set(schema["properties"]) == {"result", "total", "truncated", "nextOffset", "note"}
            assert tools[name].annotations.read_only_hint is True
        result = await client.call_tool("search_in_files_content", {"searchText": "function helper"})
        assert result.structured_content["total"] == 2
        assert len(result.content) == 1
        assert json.loads(result.content[0].text) == result.structured_content


async def test_output_schema_is_not_published_by_default(mcp: Any, project: Path) -> None:
    async with mcp(project) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert all(t.output_schema is None for t in tools.values())


async def test_gitignore_hidden_and_skipped_folders(mcp: Any, ws_path: Path) -> None:
    write(ws_path, ".gitignore", "build/\n*.log\n")
    write(ws_path, "src/a.py", "NEEDLE\n")
    write(ws_path, "build/out.py", "NEEDLE\n")
    write(ws_path, "debug.log", "NEEDLE\n")
    write(ws_path, ".github/workflows/ci.yml", "NEEDLE\n")
    write(ws_path, "node_modules/pkg/index.js", "NEEDLE\n")
    write(ws_path, "lib/node_modules/deep/x.js", "NEEDLE\n")
    write(ws_path, "dist/bundle.js", "NEEDLE\n")
    write(ws_path, "packages/app/dist/bundle.js", "NEEDLE\n")
    write(ws_path, ".git/config", "NEEDLE\n")
    write(ws_path, "sub/.git/HEAD", "NEEDLE\n")
    write(ws_path, "distance.py", "NEEDLE\n")  # a file merely starting with "dist" is searched
    async with mcp(ws_path) as client:
        page = await call(client, "search_in_files_content", {"searchText": "NEEDLE"})
        assert paths(page) == [
            os.path.join(".github", "workflows", "ci.yml"),
            "distance.py",
            os.path.join("src", "a.py"),
        ]
        page = await call(client, "search_in_files_content", {"searchText": "NEEDLE", "includeIgnored": True})
        found = set(paths(page))
        assert {
            "debug.log",
            os.path.join("build", "out.py"),
            os.path.join("node_modules", "pkg", "index.js"),
        } <= found
        assert os.path.join("dist", "bundle.js") in found
        assert not any(p.startswith(".git" + os.sep) or (os.sep + ".git" + os.sep) in p for p in found)

        names = await call(client, "find_files_by_name_substring", {"nameSubstring": ""})
        assert sorted(paths(names)) == sorted(
            [
                ".gitignore",
                os.path.join(".github", "workflows", "ci.yml"),
                "distance.py",
                os.path.join("src", "a.py"),
            ]
        )
        names = await call(
            client, "find_files_by_name_substring", {"nameSubstring": "", "includeIgnored": True}
        )
        assert os.path.join("build", "out.py") in paths(names)
        assert not any(".git" + os.sep in p for p in paths(names))


async def test_gitignore_without_a_git_repository_and_negation(mcp: Any, ws_path: Path) -> None:
    write(ws_path, ".gitignore", "*.gen.ts\n!keep.gen.ts\n")
    write(ws_path, "a.gen.ts", "hit\n")
    write(ws_path, "keep.gen.ts", "hit\n")
    write(ws_path, "b.ts", "hit\n")
    async with mcp(ws_path) as client:
        assert paths(await call(client, "search_in_files_content", {"searchText": "hit"})) == [
            "b.ts",
            "keep.gen.ts",
        ]


async def test_regex_and_case(mcp: Any, ws_path: Path) -> None:
    write(ws_path, "a.txt", "Hello World\nhello world\nhelo\n")
    write(ws_path, "b.txt", "a.b and axb\n")
    async with mcp(ws_path) as client:
        page = await call(client, "search_in_files_content", {"searchText": "hello"})
        assert len(page["result"][0]["matches"]) == 1 and "matchCount" not in page["result"][0]
        page = await call(client, "search_in_files_content", {"searchText": "hello", "caseSensitive": False})
        assert [m["line"] for m in page["result"][0]["matches"]] == [1, 2]
        page = await call(client, "search_in_files_content", {"searchText": "hel+o", "isRegex": True})
        assert [m["line"] for m in page["result"][0]["matches"]] == [2, 3]
        # Without isRegex, regex characters are plain text.
        page = await call(client, "search_in_files_content", {"searchText": "a.b"})
        assert page["result"][0]["matches"][0]["column"] == 1 and page["total"] == 1
        page = await call(client, "search_in_files_content", {"searchText": "x.b", "isRegex": False})
        assert page["total"] == 0 and page["result"] == []
        message = await fail(client, "search_in_files_content", {"searchText": "hel(", "isRegex": True})
        assert "invalid regular expression" in message and "isRegex" in message
        # A pattern starting with a dash is a pattern, not an option.
        write(ws_path, "c.txt", "--output=x\n")
        assert paths(await call(client, "search_in_files_content", {"searchText": "--output"})) == ["c.txt"]
        message = await fail(client, "search_in_files_content", {"searchText": ""})
        assert "empty" in message


async def test_include_exclude_globs(mcp: Any, ws_path: Path) -> None:
    for rel in ("src/a.py", "src/b.ts", "src/deep/c.py", "tests/test_a.py", "docs/a.md"):
        write(ws_path, rel, "token\n")
    async with mcp(ws_path) as client:
        page = await call(client, "search_in_files_content", {"searchText": "token", "include": "*.py"})
        assert paths(page) == [
            os.path.join("src", "a.py"),
            os.path.join("src", "deep", "c.py"),
            os.path.join("tests", "test_a.py"),
        ]
        page = await call(
            client,
            "search_in_files_content",
            {"searchText": "token", "include": ["*.py"], "exclude": "tests/**"},
        )
        assert paths(page) == [os.path.join("src", "a.py"), os.path.join("src", "deep", "c.py")]
        page = await call(
            client, "search_in_files_content", {"searchText": "token", "include": "*.ts, docs/**"}
        )
        assert paths(page) == [os.path.join("docs", "a.md"), os.path.join("src", "b.ts")]
        # A caller's include glob cannot bring .git back.
        write(ws_path, ".git/x.py", "token\n")
        page = await call(
            client, "search_in_files_content", {"searchText": "token", "include": [".git/**", "*.py"]}
        )
        assert not any(p.startswith(".git") for p in paths(page))
        names = await call(
            client, "find_files_by_name_substring", {"nameSubstring": "a", "include": "src/**"}
        )
        assert paths(names) == [os.path.join("src", "a.py")]


async def test_matches_columns_previews_and_counts(mcp: Any, ws_path: Path) -> None:
    long_line = "x = '" + "ab" * 400 + "TARGET" + "cd" * 400 + "'\n"
    write(ws_path, "long.py", long_line)
    write(ws_path, "uni.py", "héllo wörld TARGET\n")
    write(ws_path, "many.py", "".join(f"TARGET {i}\n" for i in range(30)))
    write(ws_path, "crlf.txt", b"one\r\nTARGET two\r\n")
    async with mcp(ws_path) as client:
        page = await call(client, "search_in_files_content", {"searchText": "TARGET"})
        hits = {h["path"]: h for h in page["result"]}
        long_hit = hits["long.py"]["matches"][0]
        assert long_hit["column"] == 806
        assert "TARGET" in long_hit["preview"] and long_hit["preview"].startswith("…")
        assert long_hit["preview"].endswith("…") and len(long_hit["preview"]) <= 162
        assert hits["uni.py"]["matches"][0]["column"] == 13  # characters, not bytes
        assert hits["many.py"]["matchCount"] == 30
        assert [m["line"] for m in hits["many.py"]["matches"]] == [1, 2, 3, 4, 5]
        assert hits["crlf.txt"]["matches"] == [{"line": 2, "column": 1, "preview": "TARGET two"}]
        page = await call(
            client,
            "search_in_files_content",
            {"searchText": "TARGET", "include": "many.py", "maxMatchesPerFile": 0},
        )
        assert page["result"][0]["matches"] == [] and page["result"][0]["matchCount"] == 30


async def test_encodings_and_binary_files(mcp: Any, ws_path: Path) -> None:
    write(ws_path, "utf16.txt", "\ufeffneedle in utf16\n".encode("utf-16-le"))
    write(ws_path, "blob.bin", b"\x00\x01needle\x00")
    write(ws_path, "plain.txt", "needle\n")
    async with mcp(ws_path) as client:
        page = await call(client, "search_in_files_content", {"searchText": "needle"})
        assert paths(page) == ["plain.txt", "utf16.txt"]
        assert page["result"][1]["matches"][0]["preview"] == "needle in utf16"


async def test_paging_total_and_truncated(mcp: Any, ws_path: Path) -> None:
    for i in range(25):
        write(ws_path, f"f{i:02d}.txt", "paged\n")
    async with mcp(ws_path) as client:
        seen: list[str] = []
        offset: int | None = 0
        pages = []
        while offset is not None:
            result = await client.call_tool(
                "search_in_files_content", {"searchText": "paged", "maxResults": 10, "offset": offset}
            )
            page = page_of(result)
            pages.append((page["total"], page["truncated"], page["nextOffset"], len(page["result"])))
            assert len(result.content) == 1
            if page["nextOffset"] is not None:  # the page facts are folded into the one JSON value
                assert json.loads(result.content[0].text) == {
                    "result": page["result"],
                    "total": 25,
                    "truncated": True,
                    "nextOffset": offset + 10,
                }
            seen += paths(page)
            offset = page["nextOffset"]
        assert pages == [(25, True, 10, 10), (25, True, 20, 10), (25, False, None, 5)]
        assert seen == [f"f{i:02d}.txt" for i in range(25)]
        page = await call(client, "search_in_files_content", {"searchText": "paged", "offset": 100})
        assert (page["result"], page["total"], page["truncated"], page["nextOffset"]) == ([], 25, False, None)
        names = await call(client, "find_files_by_name_substring", {"nameSubstring": "f1", "maxResults": 4})
        assert paths(names) == ["f10.txt", "f11.txt", "f12.txt", "f13.txt"]
        assert (names["total"], names["truncated"], names["nextOffset"]) == (10, True, 4)
        message = await fail(client, "search_in_files_content", {"searchText": "x", "maxResults": 0})
        assert "maxResults" in message


async def test_symlinks_are_never_followed(mcp: Any, ws_path: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("SECRET here\n")
    write(ws_path, "inside.txt", "SECRET inside\n")
    (ws_path / "out").symlink_to(outside, target_is_directory=True)
    (ws_path / "leak.txt").symlink_to(outside / "secret.txt")
    (ws_path / "loop").symlink_to(ws_path, target_is_directory=True)
    (ws_path / "sub").mkdir()
    (ws_path / "sub" / "up").symlink_to("..", target_is_directory=True)
    (ws_path / "alias.txt").symlink_to(ws_path / "inside.txt")
    async with mcp(ws_path) as client:
        page = await call(client, "search_in_files_content", {"searchText": "SECRET"})
        assert paths(page) == ["inside.txt"]
        page = await call(client, "search_in_files_content", {"searchText": "SECRET", "includeIgnored": True})
        assert paths(page) == ["inside.txt"]
        names = await call(client, "find_files_by_name_substring", {"nameSubstring": "secret"})
        assert names["result"] == []
        names = await call(
            client, "find_files_by_name_substring", {"nameSubstring": "", "includeIgnored": True}
        )
        assert paths(names) == ["inside.txt"]


async def test_find_files_by_name_seed_shape_and_ranking(mcp: Any, project: Path) -> None:
    write(project, "lib/Helper.py", "")
    write(project, "helper.js", "")
    write(project, "src/helpers/index.js", "")
    write(project, "src/my_helper.py", "")
    async with mcp(project) as client:
        page = await call(client, "find_files_by_name_substring", {"nameSubstring": "helper"})
        assert paths(page) == [
            "helper.js",
            os.path.join("lib", "Helper.py"),
            os.path.join("src", "utils", "helper.js"),
            os.path.join("test", "helper.test.js"),
            os.path.join("src", "my_helper.py"),
        ]
        by_path = {h["path"]: h for h in page["result"]}
        # On MCP the path alone: name, folder and absolute path are in it (the REST door keeps them).
        assert by_path[os.path.join("src", "utils", "helper.js")] == {
            "path": os.path.join("src", "utils", "helper.js")
        }
        page = await call(
            client, "find_files_by_name_substring", {"nameSubstring": "Helper", "caseSensitive": True}
        )
        assert paths(page) == [os.path.join("lib", "Helper.py")]
        # With a slash the text is matched against the relative path.
        page = await call(client, "find_files_by_name_substring", {"nameSubstring": "utils/help"})
        assert paths(page) == [os.path.join("src", "utils", "helper.js")]
        page = await call(client, "find_files_by_name_substring", {"nameSubstring": "nothing-like-this"})
        assert (page["result"], page["total"], page["truncated"]) == ([], 0, False)


async def test_search_stops_at_its_time_limit(ws_path: Path) -> None:
    """The engine's deadline: a stopped search is marked incomplete, never returned as complete."""
    from mcp_server_ide.engines import search

    for i in range(200):
        write(ws_path, f"d{i % 10}/f{i}.txt", "word\n" * 200)
    result = search.search_content(ws_path, "word", timeout=0.0)
    assert result.complete is False and "time limit" in (result.reason or "")
    result = search.search_content(ws_path, "word", max_output=1000)
    assert result.complete is False and "capped" in (result.reason or "")
    assert search.search_content(ws_path, "word").complete is True


def test_ripgrep_runs_in_its_own_process_group_killed_whole_at_its_deadline(tmp_path: Path) -> None:
    """ripgrep's runner: its own process group (killed whole when the deadline stops it) inside the
    server's session (a session of its own would be a scheduling group of its own: starved on a busy
    machine). A shell stands in for ripgrep to report its ids and leave a child behind."""
    from mcp_server_ide.engines.search.ripgrep import run

    script = "cut -d' ' -f5,6 /proc/$$/stat; echo $$; sleep 60 & echo $!; wait"
    out, _err, _code, reason = run(["sh", "-c", script], tmp_path, 1.5, 1 << 20)
    ids, shell, child = out.decode().split("\n")[:3]
    pgid, sid = (int(x) for x in ids.split())
    assert pgid == int(shell) != os.getpgid(0)
    assert sid == os.getsid(0)
    assert reason is not None and "time limit" in reason
    assert _ends(int(child)), "the group's child lives on"


def _ends(pid: int, within: float = 10.0) -> bool:
    """Whether the process is gone (or a zombie) within the time: SIGKILL is delivered asynchronously."""
    import time

    stat = Path(f"/proc/{pid}/stat")
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if stat.read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                return True
        except (FileNotFoundError, ProcessLookupError):
            return True
        time.sleep(0.01)
    return False


async def test_rest_door_carries_page_fields(http_server: Any, project: Path) -> None:
    import httpx

    server = http_server(project)
    response = httpx.post(
        server.url + "/mcp/search_in_files_content",
        json={"searchText": "function helper", "maxResults": 1},
        headers={"Content-Type": "application/json"},
    )
    body = response.json()
    assert response.status_code == 200, body
    assert body["error"] is None
    assert [h["path"] for h in body["status"]] == [os.path.join("src", "utils", "helper.js")]
    assert body["status"][0]["absolutePath"] == str(project / "src" / "utils" / "helper.js")  # the seed's
    assert (body["total"], body["truncated"], body["nextOffset"]) == (2, True, 1)
    response = httpx.post(
        server.url + "/mcp/find_files_by_name_substring",
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "find_files_by_name_substring", "arguments": {"nameSubstring": "helper"}},
        },
    )
    body = response.json()
    assert body["error"] is None and body["status"][0]["name"] == "helper.js"
    assert set(body["status"][0]) == {"path", "name", "directory", "absolutePath"}  # the seed's shape


async def test_ignore_files_above_the_workspace_do_not_hide_it(mcp: Any, tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    root = outer / "build" / "ws"
    write(outer, ".gitignore", "build/\n*.txt\n")
    (outer / ".git").mkdir()
    write(root, "a.txt", "found\n")
    write(root, ".gitignore", "skip.py\n")
    write(root, "skip.py", "found\n")
    async with mcp(root) as client:
        assert paths(await call(client, "search_in_files_content", {"searchText": "found"})) == ["a.txt"]
        names = await call(client, "find_files_by_name_substring", {"nameSubstring": "a"})
        assert paths(names) == ["a.txt"]


async def test_include_globs_do_not_bring_back_ignored_files(mcp: Any, ws_path: Path) -> None:
    write(ws_path, ".gitignore", ".venv/\n*.gen.py\n")
    write(ws_path, ".venv/lib/site.py", "hit\n")
    write(ws_path, "a.gen.py", "hit\n")
    write(ws_path, "src/a.py", "hit\n")
    write(ws_path, "src/b.{x}.py", "hit\n")
    async with mcp(ws_path) as client:
        for include in ("*.py", ["**/*.py"], "src", "/src/**"):
            page = await call(client, "search_in_files_content", {"searchText": "hit", "include": include})
            assert paths(page) == [os.path.join("src", "a.py"), os.path.join("src", "b.{x}.py")], include
            names = await call(
                client, "find_files_by_name_substring", {"nameSubstring": "", "include": include}
            )
            assert sorted(paths(names)) == [os.path.join("src", "a.py"), os.path.join("src", "b.{x}.py")]
        page = await call(
            client,
            "search_in_files_content",
            {"searchText": "hit", "include": "*.py", "includeIgnored": True},
        )
        assert len(paths(page)) == 4


async def test_find_files_by_name_folds_case_as_python_does_and_matches_the_name_only(
    mcp: Any, ws_path: Path
) -> None:
    """Names are found in ripgrep's raw list before it is decoded (bytes.lower is ASCII only): names
    whose case folding needs more (ß, ligatures, the Kelvin sign), names that are not UTF-8, and a text
    that is in a folder's name but not the file's must come out as str.casefold says."""
    for rel in ("docs/Straße.md", "ﬀ.txt", "ff.txt", "K.txt", "schema/readme.txt", "schema/a_schema.json"):
        write(ws_path, rel, "")
    write(ws_path, "Schema.PY", "")
    write(ws_path, ".gitignore", "*.log\nbuild/\n")
    write(ws_path, "schema.log", "")  # ignored: ripgrep's name filter must not bring it back
    write(ws_path, "build/schema.js", "")
    write(ws_path, "docs/my Schema notes.txt", "")
    (ws_path / os.fsdecode(b"bad\xffschema.txt")).write_text("")
    async with mcp(ws_path) as client:

        async def find(text: str, **extra: Any) -> list[str]:
            page = await call(client, "find_files_by_name_substring", {"nameSubstring": text, **extra})
            return sorted(paths(page))

        assert await find("STRASSE") == [os.path.join("docs", "Straße.md")]
        assert await find("ß") == [os.path.join("docs", "Straße.md")]
        assert await find("FF") == ["ff.txt", "ﬀ.txt"]
        assert await find("ﬀ") == ["ff.txt", "ﬀ.txt"]
        assert await find("ﬀ", caseSensitive=True) == ["ﬀ.txt"]
        assert await find("k.txt") == ["K.txt"]
        assert await find("schema") == sorted(
            [
                "Schema.PY",
                os.path.join("docs", "my Schema notes.txt"),
                os.path.join("schema", "a_schema.json"),
                "bad\ufffdschema.txt",
            ]
        )
        assert await find("Schema", caseSensitive=True) == [
            "Schema.PY",
            os.path.join("docs", "my Schema notes.txt"),
        ]
        assert await find("y schema N") == [os.path.join("docs", "my Schema notes.txt")]
        assert await find("schema", includeIgnored=True) == sorted(
            [
                "Schema.PY",
                os.path.join("build", "schema.js"),
                os.path.join("docs", "my Schema notes.txt"),
                os.path.join("schema", "a_schema.json"),
                "bad\ufffdschema.txt",
                "schema.log",
            ]
        )
        assert await find("ma/READ") == [os.path.join("schema", "readme.txt")]
        assert await find("schema/") == [
            os.path.join("schema", "a_schema.json"),
            os.path.join("schema", "readme.txt"),
        ]


async def test_find_files_by_path_matches_a_second_roots_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second root's files answer as '<root name>/...'; a text with a slash is matched against that
    whole path, the root's name included (which ripgrep's list of names does not hold)."""
    from .support.roots import RootsClient, roots_session

    start, first, second = tmp_path / "start", tmp_path / "first", tmp_path / "second"
    for folder in (start, first, second):
        folder.mkdir()
    write(first, "lib.py", "")
    write(second, "lib.py", "")
    monkeypatch.chdir(start)
    async with roots_session(RootsClient([first, second])) as (client, _):
        page = await call(client, "find_files_by_name_substring", {"nameSubstring": "cond/li"})
        assert paths(page) == [os.path.join("second", "lib.py")]
        page = await call(client, "find_files_by_name_substring", {"nameSubstring": "lib"})
        assert sorted(paths(page)) == ["lib.py", os.path.join("second", "lib.py")]


@pytest.mark.parametrize("kind", ["content", "names", "find"])
def test_what_ripgrep_found_under_a_folder_swapped_for_a_link_is_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """ripgrep opens folders by path: a folder swapped for a link out while it walks would lead it
    outside. The race is made deterministic here: the real ripgrep runs on the real tree, and the folder
    is swapped for a link to an outside folder right after (where a racing process would have swapped
    it while ripgrep walked). The answer leaves out what is under it, and says it is incomplete."""
    import shutil

    from mcp_server_ide.engines import search

    root = (tmp_path / "ws").resolve()
    (root / "a" / "deep").mkdir(parents=True)
    (root / "a" / "deep" / "secret.txt").write_text("needle\n")
    (root / "b.txt").write_text("needle\n")
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "secret.txt").write_text("needle\n")
    from mcp_server_ide.engines.search import content, files, ripgrep

    def run_then_swap(*args: Any, **kwargs: Any) -> Any:
        answer = ripgrep.run(*args, **kwargs)
        shutil.rmtree(root / "a")
        (root / "a").symlink_to(outside)
        return answer

    monkeypatch.setattr(content, "run", run_then_swap)
    monkeypatch.setattr(files, "run", run_then_swap)
    if kind == "content":
        result = search.search_content(root, "needle")
        found = [f.path for f in result.files]
    elif kind == "names":
        result = search.list_files(root)
        found = sorted(result.paths)
    else:
        result = search.find_files(root, ".TXT")
        found = sorted(result.paths)
    assert found == ["b.txt"]
    assert not result.complete and result.reason and "link" in result.reason

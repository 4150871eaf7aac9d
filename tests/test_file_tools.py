"""The seven file tools of seed 000, through an MCP client session on the real server."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from .support.results import payload

pytestmark = pytest.mark.anyio


def _text(result) -> str:
    return result.content[0].text


async def test_read_returns_seed_fields_and_hash(mcp, ws_path: Path) -> None:
    (ws_path / "src" / "utils").mkdir(parents=True)
    (ws_path / "src/utils/helper.js").write_text("function helper() { return 'Hello'; }\n")
    async with mcp(ws_path) as client:
        result = await client.call_tool("get_file_text_by_path", {"pathInProject": "src/utils/helper.js"})
    assert not result.is_error, _text(result)
    data = payload(result)
    assert data["content"] == "function helper() { return 'Hello'; }\n"
    assert data["relativePath"] == os.path.join("src", "utils", "helper.js")
    assert len(data["hash"]) == 16 and data["totalLines"] == 1  # MCP: 16 digits of the SHA-256
    # On MCP no absolute path beside the relative one, no default encoding or line ending (REST has them).
    assert not {"path", "encoding", "lineEnding"} & set(data)


async def test_rewrite_keeps_crlf_bom_and_mode(mcp, ws_path: Path) -> None:
    target = ws_path / "win.txt"
    target.write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\n")
    target.chmod(0o755)
    async with mcp(ws_path) as client:
        result = await client.call_tool(
            "rewrite_file_content", {"pathInProject": "win.txt", "text": "alpha\nbeta\n"}
        )
    assert not result.is_error, _text(result)
    assert target.read_bytes() == b"\xef\xbb\xbfalpha\r\nbeta\r\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o755
    assert "created" not in payload(result)  # created: false is the default, left out
    assert payload(result)["size"] == len(target.read_bytes())


async def test_rewrite_creates_missing_file_and_folders(mcp, ws_path: Path) -> None:
    async with mcp(ws_path) as client:
        result = await client.call_tool("rewrite_file_content", {"pathInProject": "a/b/c.txt", "text": "x"})
    assert not result.is_error
    assert (ws_path / "a/b/c.txt").read_text() == "x"
    assert payload(result)["created"] is True


async def test_expected_hash_guards_every_write(mcp, ws_path: Path) -> None:
    target = ws_path / "f.txt"
    target.write_text("v1\n")
    async with mcp(ws_path) as client:
        read = await client.call_tool("get_file_text_by_path", {"pathInProject": "f.txt"})
        digest = payload(read)["hash"]
        target.write_text("changed by someone else\n")
        for tool, args in [
            ("rewrite_file_content", {"text": "v2\n"}),
            ("append_file_content", {"text": "more\n"}),
            ("replace_specific_text", {"searchText": "changed", "replaceText": "x"}),
            ("replace_file_content_at_position", {"startLine": 1, "endLine": 1, "content": "z"}),
        ]:
            result = await client.call_tool(tool, {"pathInProject": "f.txt", "expectedHash": digest, **args})
            assert result.is_error, tool
            assert "changed since it was read" in _text(result)
        assert target.read_text() == "changed by someone else\n"
        fresh = await client.call_tool("get_file_text_by_path", {"pathInProject": "f.txt"})
        ok = await client.call_tool(
            "rewrite_file_content",
            {"pathInProject": "f.txt", "text": "v3\n", "expectedHash": payload(fresh)["hash"]},
        )
        assert not ok.is_error
    assert target.read_text() == "v3\n"


async def test_create_refuses_existing_file(mcp, ws_path: Path) -> None:
    (ws_path / "exists.txt").write_text("keep")
    async with mcp(ws_path) as client:
        result = await client.call_tool(
            "create_new_file_with_text", {"pathInProject": "exists.txt", "text": "new"}
        )
        created = await client.call_tool(
            "create_new_file_with_text", {"pathInProject": "src/n.js", "text": "n\n"}
        )
    assert result.is_error and "already exists" in _text(result)
    assert (ws_path / "exists.txt").read_text() == "keep"
    assert not created.is_error and (ws_path / "src/n.js").read_text() == "n\n"
    assert set(payload(created)) == {"relativePath", "size", "hash"}  # no absolute path, no timing


async def test_list_folder_shows_folders_first_and_hides_temp_files(mcp, ws_path: Path) -> None:
    (ws_path / "src/utils/config").mkdir(parents=True)
    (ws_path / "src/utils/helper.js").write_text("x")
    (ws_path / "src/utils/.helper.js.abc.mcp-ide.tmp").write_text("half")
    async with mcp(ws_path) as client:
        result = await client.call_tool("list_files_in_folder", {"pathInProject": "src/utils"})
        root = await client.call_tool("list_files_in_folder", {"pathInProject": "/"})
    entries = payload(result)
    assert [e["name"] for e in entries] == ["config", "helper.js"]
    assert entries[0] == {
        "name": "config",
        "type": "directory",
        "path": os.path.join("src", "utils", "config"),
    }
    assert entries[1]["type"] == "file" and entries[1]["size"] == 1
    assert [e["name"] for e in payload(root)] == ["src"]


async def test_list_of_a_file_or_missing_folder_is_a_clear_error(mcp, ws_path: Path) -> None:
    (ws_path / "f.txt").write_text("x")
    async with mcp(ws_path) as client:
        on_file = await client.call_tool("list_files_in_folder", {"pathInProject": "f.txt"})
        missing = await client.call_tool("list_files_in_folder", {"pathInProject": "nope"})
    assert on_file.is_error and "is a file, not a folder" in _text(on_file)
    assert missing.is_error and "does not exist" in _text(missing)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"startLine": 2, "endLine": 2, "content": "B"}, "a\nB\nc\n"),
        ({"startLine": 2, "endLine": 3, "content": "X\nY\nZ"}, "a\nX\nY\nZ\n"),
        ({"startLine": 2, "endLine": 1, "content": "ins\n"}, "a\nins\nb\nc\n"),
        ({"startLine": 4, "endLine": 3, "content": "d\n"}, "a\nb\nc\nd\n"),
        ({"startLine": 2, "endLine": 2, "content": "ee", "offset": 1}, "a\nbee\nc\n"),
    ],
)
async def test_replace_at_position(mcp, ws_path: Path, args: dict, expected: str) -> None:
    (ws_path / "f.txt").write_text("a\nb\nc\n")
    async with mcp(ws_path) as client:
        result = await client.call_tool(
            "replace_file_content_at_position", {"pathInProject": "f.txt", **args}
        )
    assert not result.is_error, _text(result)
    assert _text(result) == "ok"
    assert (ws_path / "f.txt").read_text() == expected


async def test_replace_at_position_refuses_lines_outside_the_file(mcp, ws_path: Path) -> None:
    (ws_path / "f.txt").write_text("a\nb\n")
    async with mcp(ws_path) as client:
        result = await client.call_tool(
            "replace_file_content_at_position",
            {"pathInProject": "f.txt", "startLine": 5, "endLine": 6, "content": "x"},
        )
    assert result.is_error and "outside" in _text(result)
    assert (ws_path / "f.txt").read_text() == "a\nb\n"


async def test_append_in_files_own_line_endings(mcp, ws_path: Path) -> None:
    (ws_path / "w.txt").write_bytes(b"one\r\n")
    async with mcp(ws_path) as client:
        result = await client.call_tool(
            "append_file_content", {"pathInProject": "w.txt", "text": "two\nthree\n"}
        )
        fresh = await client.call_tool("append_file_content", {"pathInProject": "new.txt", "text": "hi"})
    assert not result.is_error
    assert (ws_path / "w.txt").read_bytes() == b"one\r\ntwo\r\nthree\r\n"
    assert not fresh.is_error and (ws_path / "new.txt").read_text() == "hi"


async def test_replace_specific_text_counts_and_refuses_ambiguity(mcp, ws_path: Path) -> None:
    (ws_path / "f.js").write_text("oldFunction(); oldFunction(); oldFunction();\n")
    async with mcp(ws_path) as client:
        ambiguous = await client.call_tool(
            "replace_specific_text",
            {"pathInProject": "f.js", "searchText": "oldFunction", "replaceText": "n"},
        )
        missing = await client.call_tool(
            "replace_specific_text", {"pathInProject": "f.js", "searchText": "nothere", "replaceText": "n"}
        )
        assert (ws_path / "f.js").read_text() == "oldFunction(); oldFunction(); oldFunction();\n"
        everything = await client.call_tool(
            "replace_specific_text",
            {
                "pathInProject": "f.js",
                "searchText": "oldFunction",
                "replaceText": "newFunction",
                "replaceAll": True,
            },
        )
    assert ambiguous.is_error and "occurs 3 times" in _text(ambiguous)
    assert missing.is_error and "occurs 0 times" in _text(missing)
    assert payload(everything)["replacements"] == 3
    assert (ws_path / "f.js").read_text() == "newFunction(); newFunction(); newFunction();\n"


async def test_replace_specific_text_across_crlf_lines(mcp, ws_path: Path) -> None:
    (ws_path / "w.txt").write_bytes(b"a\r\nb\r\nc\r\n")
    async with mcp(ws_path) as client:
        result = await client.call_tool(
            "replace_specific_text",
            {"pathInProject": "w.txt", "searchText": "a\nb", "replaceText": "x\ny\nz"},
        )
    assert not result.is_error, _text(result)
    assert (ws_path / "w.txt").read_bytes() == b"x\r\ny\r\nz\r\nc\r\n"


async def test_cp1252_file_refuses_characters_it_cannot_hold(mcp, ws_path: Path) -> None:
    target = ws_path / "legacy.txt"
    target.write_bytes("café\n".encode("cp1252"))
    async with mcp(ws_path) as client:
        read = await client.call_tool("get_file_text_by_path", {"pathInProject": "legacy.txt"})
        ok = await client.call_tool(
            "replace_specific_text",
            {"pathInProject": "legacy.txt", "searchText": "café", "replaceText": "crème"},
        )
        lossy = await client.call_tool(
            "replace_specific_text",
            {"pathInProject": "legacy.txt", "searchText": "crème", "replaceText": "日本"},
        )
    assert payload(read)["content"] == "café\n"
    assert not ok.is_error
    assert lossy.is_error and "cannot hold" in _text(lossy)
    assert target.read_bytes() == "crème\n".encode("cp1252")


async def test_binary_files_are_refused(mcp, ws_path: Path) -> None:
    (ws_path / "img.bin").write_bytes(b"\x89PNG\x00\x00\x01")
    async with mcp(ws_path) as client:
        result = await client.call_tool("get_file_text_by_path", {"pathInProject": "img.bin"})
    assert result.is_error and "binary" in _text(result)


async def test_tools_carry_annotations_and_descriptions(mcp, ws_path: Path) -> None:
    async with mcp(ws_path) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
    for name in ("get_file_text_by_path", "list_files_in_folder"):
        assert listed[name].annotations.read_only_hint is True
    for name in ("rewrite_file_content", "replace_specific_text", "replace_file_content_at_position"):
        annotations = listed[name].annotations
        # Hints equal to the spec's defaults (readOnlyHint false, destructiveHint true) are left out.
        assert not annotations.read_only_hint and annotations.destructive_hint in (None, True)
    for tool in listed.values():
        assert tool.title and tool.description and len(tool.description) > 40
        assert tool.input_schema["type"] == "object"


async def test_journal_records_each_write(mcp, ws_path: Path, _state_home: Path) -> None:
    async with mcp(ws_path) as client:
        await client.call_tool("create_new_file_with_text", {"pathInProject": "j.txt", "text": "1\n"})
        await client.call_tool("append_file_content", {"pathInProject": "j.txt", "text": "2\n"})
    logs = list(_state_home.rglob("entries.jsonl"))
    assert len(logs) == 1
    entries = [json.loads(line) for line in logs[0].read_text().splitlines()]
    assert [e["tool"] for e in entries] == ["create_new_file_with_text", "append_file_content"]
    assert entries[0]["before"] == "absent" and entries[1]["before"] == entries[0]["after"]

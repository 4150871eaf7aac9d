"""Resources through a real SDK client: paged file listing (also on a 100k-file tree), text and
binary reads, the file template with path completion, context resources, and subscriptions that
fire for writes by our tools and for changes on disk (2025 era), degrading cleanly on 2026."""

from __future__ import annotations

import base64
import os
import subprocess
import time
from pathlib import Path

import anyio
import pytest
from mcp_types import ResourceTemplateReference

pytestmark = pytest.mark.anyio

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)


def make_tree(root: Path, count: int, per_dir: int = 100) -> None:
    for i in range(count):
        folder = root / f"d{i // per_dir:04d}"
        if i % per_dir == 0:
            folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / f"f{i % per_dir:03d}.txt", os.O_CREAT | os.O_WRONLY, 0o644)
        os.close(fd)


async def all_pages(client) -> tuple[list[str], int]:
    uris: list[str] = []
    cursor = None
    pages = 0
    while True:
        result = await client.list_resources(cursor=cursor) if cursor else await client.list_resources()
        pages += 1
        uris.extend(str(r.uri) for r in result.resources)
        cursor = result.next_cursor
        if not cursor:
            return uris, pages


async def test_list_is_paged_and_covers_every_file_once(ws_path, mcp):
    make_tree(ws_path / "src", 450, per_dir=37)
    (ws_path / "node_modules" / "x").mkdir(parents=True)
    (ws_path / "node_modules" / "x" / "index.js").write_text("skip me")
    async with mcp(ws_path) as client:
        first = await client.list_resources()
        assert first.next_cursor
        assert [str(r.uri) for r in first.resources[:3]] == [
            "ide://git/status",
            "ide://workspace/problems",
            "ide://editor/active",
        ]
        uris, pages = await all_pages(client)
    files = [u for u in uris if u.startswith("file://")]
    assert len(files) == 450 == len(set(files))
    assert files == sorted(files)
    assert pages == 3
    assert not any("node_modules" in u for u in files)


async def test_list_stays_small_and_fast_on_a_100k_file_tree(ws_path, mcp):
    make_tree(ws_path, 100_000, per_dir=500)
    async with mcp(ws_path) as client:
        start = time.perf_counter()
        first = await client.list_resources()
        first_time = time.perf_counter() - start
        assert len(first.resources) <= 210
        # Jump deep into the tree: page 300 costs about what page 1 costs.
        cursor = first.next_cursor
        for _ in range(299):
            cursor = (await client.list_resources(cursor=cursor)).next_cursor
        start = time.perf_counter()
        deep = await client.list_resources(cursor=cursor)
        deep_time = time.perf_counter() - start
    assert deep.resources[0].name.startswith("d01")
    # A guard against a page that walks the whole tree (seconds here), loose enough for a loaded
    # machine; how fast a page is belongs to the benchmarks.
    assert first_time < 10 and deep_time < 10, (first_time, deep_time)


async def test_read_text_binary_and_context_resources(ws_path, mcp):
    (ws_path / "app.py").write_text("print('hi')\n")
    (ws_path / "logo.png").write_bytes(PNG)
    async with mcp(ws_path) as client:
        text = (await client.read_resource((ws_path / "app.py").as_uri())).contents[0]
        assert text.text == "print('hi')\n"
        assert text.mime_type == "text/x-python"
        blob = (await client.read_resource((ws_path / "logo.png").as_uri())).contents[0]
        assert base64.b64decode(blob.blob) == PNG
        assert blob.mime_type == "image/png"
        status = (await client.read_resource("ide://git/status")).contents[0].text
        assert status == "not a git repository"
        subprocess.run(["git", "init", "-q"], cwd=ws_path, check=True)
        status = (await client.read_resource("ide://git/status")).contents[0].text
        assert "?? app.py" in status
        editor = (await client.read_resource("ide://editor/active")).contents[0].text
        assert '"activeFile"' in editor
        problems = (await client.read_resource("ide://workspace/problems")).contents[0].text
        assert '"files"' in problems


async def test_reads_outside_the_workspace_are_refused(ws_path, mcp, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("no")
    (ws_path / "link").symlink_to(secret)
    async with mcp(ws_path) as client:
        for uri in (secret.as_uri(), (ws_path / "link").as_uri(), (ws_path / ".." / "secret.txt").as_uri()):
            with pytest.raises(Exception, match=r"outside the workspace|not found"):
                await client.read_resource(uri)


async def test_template_and_path_completion(ws_path, mcp):
    (ws_path / "src" / "magic").mkdir(parents=True)
    (ws_path / "src" / "main.py").write_text("")
    (ws_path / "src" / "other.py").write_text("")
    async with mcp(ws_path) as client:
        templates = (await client.list_resource_templates()).resource_templates
        assert templates[0].uri_template == ws_path.as_uri() + "/{+path}"
        ref = ResourceTemplateReference(type="ref/resource", uri=templates[0].uri_template)
        done = await client.complete(ref, {"name": "path", "value": "src/ma"})
        assert done.completion.values == ["src/magic/", "src/main.py"]
        top = await client.complete(ref, {"name": "path", "value": ""})
        assert top.completion.values == ["src/"]


async def collect_updates(messages: list, uri: str, timeout: float = 5.0) -> bool:
    with anyio.move_on_after(timeout):
        while True:
            for m in messages:
                params = getattr(getattr(m, "params", None), "uri", None)
                if str(params) == uri:
                    return True
            await anyio.sleep(0.05)
    return False


async def test_subscriptions_fire_for_tool_writes_and_disk_changes(ws_path, mcp):
    target = ws_path / "notes.txt"
    target.write_text("one\n")
    messages: list = []

    async def handler(message):
        messages.append(message)

    async with mcp(ws_path, mode="legacy", message_handler=handler) as client:
        assert client.server_capabilities.resources.subscribe is True
        await client.subscribe_resource(target.as_uri())
        result = await client.call_tool(
            "append_file_content", {"pathInProject": "notes.txt", "text": "two\n"}
        )
        assert not result.is_error
        assert await collect_updates(messages, target.as_uri())
        messages.clear()
        await anyio.sleep(0.3)
        target.write_text("changed on disk\n")
        assert await collect_updates(messages, target.as_uri())
        await client.unsubscribe_resource(target.as_uri())
        await anyio.sleep(0.3)
        messages.clear()
        target.write_text("after unsubscribe\n")
        assert not await collect_updates(messages, target.as_uri(), timeout=1.0)


async def test_2026_listen_stream_gets_updates_for_tool_writes_and_disk_changes(ws_path, mcp):
    target = ws_path / "notes.txt"
    target.write_text("one\n")
    async with (
        mcp(ws_path, mode="2026-07-28") as client,
        client.listen(resource_subscriptions=[target.as_uri()]) as sub,
    ):
        seen: list[str] = []

        async def read_events() -> None:
            async for event in sub:
                seen.append(str(getattr(event, "uri", event)))

        async with anyio.create_task_group() as tg:
            tg.start_soon(read_events)
            await client.call_tool("append_file_content", {"pathInProject": "notes.txt", "text": "two\n"})
            with anyio.move_on_after(5):
                while target.as_uri() not in seen:
                    await anyio.sleep(0.05)
            assert target.as_uri() in seen
            seen.clear()
            await anyio.sleep(0.3)
            target.write_text("changed on disk\n")
            with anyio.move_on_after(5):
                while target.as_uri() not in seen:
                    await anyio.sleep(0.05)
            assert target.as_uri() in seen
            tg.cancel_scope.cancel()


async def test_2025_client_without_subscriptions_still_reads(ws_path, mcp):
    # A client that never subscribes gets no notifications and loses nothing: reads still work.
    (ws_path / "a.txt").write_text("x")
    async with mcp(ws_path, mode="legacy") as client:
        assert (await client.read_resource((ws_path / "a.txt").as_uri())).contents[0].text == "x"


async def test_a_change_inside_the_list_changed_window_is_still_announced(ws_path, mcp):
    """``resources/list_changed`` goes at most once a second; a file added inside that second is
    announced at its end (it was dropped: a client could miss the last change of a burst)."""
    watched = ws_path / "watched.txt"
    watched.write_text("x\n")
    messages: list = []

    async def handler(message):
        messages.append(message)

    def announced() -> int:
        return sum(
            getattr(getattr(m, "root", m), "method", None) == "notifications/resources/list_changed"
            for m in messages
        )

    async def until(count: int, timeout: float) -> bool:
        with anyio.move_on_after(timeout):
            while announced() < count:
                await anyio.sleep(0.05)
        return announced() >= count

    async with mcp(ws_path, mode="legacy", message_handler=handler) as client:
        await client.subscribe_resource(watched.as_uri())  # the workspace's changes are followed
        await anyio.sleep(0.3)
        (ws_path / "first.txt").write_text("1\n")
        assert await until(1, 30), "no list_changed for the first file"
        (ws_path / "second.txt").write_text("2\n")  # well inside the one-second window
        assert await until(2, 30), "the second file was never announced"

"""The rest of the surface: prompts and their completion, logging/setLevel, progress on long
calls, cancellation that stops the work, plugins, icons, instructions, client set-up, and the
same surface over real stdio and Streamable HTTP connections."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import anyio
import pytest
from mcp_types import Implementation, PromptReference

from mcp_server_ide.server import ServerOptions

from .support.results import payload

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[1]
PLUGIN = ServerOptions(plugins=["tests.surface_plugin"])


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@e.st", "-c", "user.name=T", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


async def test_prompts_list_get_and_complete_real_paths_branches_symbols_tests(ws_path, mcp):
    git(ws_path, "init", "-q", "-b", "main")
    (ws_path / "calc.py").write_text("def add(a, b):\n    return a + b\n\nclass Adder:\n    pass\n")
    (ws_path / "tests").mkdir()
    (ws_path / "tests" / "test_calc.py").write_text("def test_add():\n    assert add(1, 2) == 3\n")
    git(ws_path, "add", ".")
    git(ws_path, "commit", "-qm", "Initial")
    git(ws_path, "branch", "feature/login")
    (ws_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    async with mcp(ws_path) as client:
        names = {p.name for p in (await client.list_prompts()).prompts}
        assert {"review_changes", "explain_symbol", "fix_failing_test", "commit_message"} <= names

        async def complete(prompt: str, arg: str, value: str, **context: str) -> list[str]:
            done = await client.complete(
                PromptReference(type="ref/prompt", name=prompt),
                {"name": arg, "value": value},
                context or None,
            )
            return done.completion.values

        assert await complete("review_changes", "base", "fe") == ["feature/login"]
        assert "main" in await complete("review_changes", "base", "")
        assert (await complete("explain_symbol", "symbol", "ad"))[0] == "add"
        assert (await complete("explain_symbol", "path", "cal"))[0] == "calc.py"
        assert await complete("fix_failing_test", "test", "tests/") == ["tests/test_calc.py::test_add"]

        review = await client.get_prompt("review_changes", {})
        text = " ".join(getattr(m.content, "text", "") for m in review.messages)
        assert "-    return a + b" in text and "+    return a - b" in text
        explain = await client.get_prompt("explain_symbol", {"symbol": "add"})
        kinds = [m.content.type for m in explain.messages]
        assert "resource" in kinds
        assert any("calc.py at line 1" in getattr(m.content, "text", "") for m in explain.messages)
        fix = await client.get_prompt("fix_failing_test", {"test": "tests/test_calc.py::test_add"})
        assert any(m.content.type == "resource" for m in fix.messages)
        git(ws_path, "add", "calc.py")
        commit = await client.get_prompt("commit_message", {"style": "conventional commits"})
        body = " ".join(getattr(m.content, "text", "") for m in commit.messages)
        assert "Initial" in body and "+    return a - b" in body and "conventional commits" in body


async def test_logging_set_level_filters_messages(ws_path, mcp):
    got: list[tuple[str, str]] = []

    async def on_log(params):
        got.append((params.level, params.data))

    async with mcp(ws_path, options=PLUGIN, mode="legacy", logging_callback=on_log) as client:
        assert client.server_capabilities.logging is not None
        await client.call_tool("log_levels", {})
        assert [lvl for lvl, _ in got] == ["info", "error"]  # default level: info
        got.clear()
        await client.set_logging_level("debug")
        await client.call_tool("log_levels", {})
        assert [lvl for lvl, _ in got] == ["debug", "info", "error"]
        got.clear()
        await client.set_logging_level("error")
        await client.call_tool("log_levels", {})
        assert got == [("error", "a error message")]


async def test_long_calls_report_progress_even_when_the_tool_does_not(ws_path, mcp):
    beats: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress, total, message):
        beats.append((progress, total, message))

    async with mcp(ws_path, options=PLUGIN, mode="legacy") as client:
        result = await client.call_tool("slow_sleep", {"seconds": 2.6}, progress_callback=on_progress)
    assert not result.is_error
    assert len(beats) >= 1
    assert [b[0] for b in beats] == sorted(b[0] for b in beats)
    assert "running slow_sleep" in (beats[0][2] or "")


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_cancelling_a_call_stops_the_work(ws_path, mcp, mode):
    from tests import surface_plugin

    surface_plugin.STARTED.clear()
    surface_plugin.STOPPED.clear()
    async with mcp(ws_path, options=PLUGIN, mode=mode) as client:
        async with anyio.create_task_group() as tg:

            async def call() -> None:
                await client.call_tool("spin_until_cancelled", {"limit": 20})

            tg.start_soon(call)
            await anyio.to_thread.run_sync(surface_plugin.STARTED.wait, 5)
            tg.cancel_scope.cancel()
        stopped = await anyio.to_thread.run_sync(surface_plugin.STOPPED.wait, 5)
    assert stopped, "the tool kept running after the call was cancelled"


async def test_plugins_icons_instructions_and_output_schemas(ws_path, mcp):
    options = ServerOptions(plugins=["tests.conformance_fixtures", "tests.surface_plugin"])
    vscode = Implementation(name="Visual Studio Code", version="1.106.0")  # as VS Code names itself
    async with mcp(ws_path, options=options, mode="legacy", client_info=vscode) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["test_simple_text"].icons and tools["get_file_text_by_path"].icons
        assert tools["test_simple_text"].icons[0].src != tools["get_file_text_by_path"].icons[0].src
    async with mcp(ws_path, options=options, mode="legacy") as client:
        init_icons = client.server_info.icons
        assert init_icons and init_icons[0].src.startswith("data:image/svg+xml;base64,")
        assert "workspace" in (client.instructions or "")
        tools = {t.name: t for t in (await client.list_tools()).tools}
        # A client that shows no tool icons gets none (VS Code shows them; see surface/icons.py).
        assert not any(t.icons for t in tools.values())
        # Results are one JSON text block; output schemas only with --structured-content (resultform).
        assert tools["get_file_text_by_path"].output_schema is None
        assert tools["replace_specific_text"].output_schema is None
        assert (await client.call_tool("test_simple_text", {})).content[0].text.startswith("This is a simple")
        assert (
            (await client.read_resource("test://static-text"))
            .contents[0]
            .text.startswith("This is the content")
        )
        assert "test_simple_prompt" in {p.name for p in (await client.list_prompts()).prompts}


def run_config(*args: str, cwd: Path) -> str:
    return subprocess.run(
        [sys.executable, "-m", "mcp_server_ide", "config", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout


def test_config_vscode_prints_mcp_json_install_link_and_add_mcp(ws_path):
    doc = json.loads(run_config("vscode", "--json", cwd=ws_path))
    entry = doc["servers"]["ide"]
    assert entry["type"] == "stdio"
    # The installed script when it runs this interpreter (as pip installs it), else this interpreter's -m.
    script = Path(sys.executable).parent / "mcp-server-ide"
    runs_here = script.is_file() and script.read_text().startswith(f"#!{script.parent}/python")
    expected = [str(script)] if runs_here else [sys.executable, "-m", "mcp_server_ide"]
    assert [entry["command"], *entry["args"]] == [*expected, "--workspace", "${workspaceFolder}"]
    full = run_config("vscode", cwd=ws_path)
    link = next(line for line in full.splitlines() if line.startswith("vscode:mcp/install?"))
    payload = json.loads(unquote(link.split("?", 1)[1]))
    assert payload["name"] == "ide" and payload["args"][-1] == str(ws_path.resolve())
    add = next(line for line in full.splitlines() if line.startswith("code --add-mcp "))
    assert json.loads(add.split(" ", 2)[2].strip("'")) == payload
    claude = run_config("claude", "--", "--read-only", cwd=ws_path)
    assert '"mcpServers"' in claude and "claude mcp add ide -- " in claude and "--read-only" in claude
    cursor = json.loads(run_config("cursor", "--json", "--http", "http://127.0.0.1:9960/mcp", cwd=ws_path))
    assert cursor == {"mcpServers": {"ide": {"url": "http://127.0.0.1:9960/mcp"}}}


async def exercise(client, ws_path: Path) -> None:
    tools = (await client.list_tools()).tools
    assert any(t.name == "get_file_text_by_path" for t in tools)
    read = await client.call_tool("get_file_text_by_path", {"pathInProject": "hello.txt"})
    assert payload(read)["content"] == "hi\n"
    resource = await client.read_resource((ws_path / "hello.txt").as_uri())
    assert resource.contents[0].text == "hi\n"
    prompt = await client.get_prompt("explain_symbol", {"symbol": "nothing_here"})
    assert prompt.messages
    done = await client.complete(
        PromptReference(type="ref/prompt", name="explain_symbol"), {"name": "path", "value": "hel"}
    )
    assert done.completion.values == ["hello.txt"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_surface_over_stdio(ws_path, stdio_server_params, mode):
    from mcp import Client

    (ws_path / "hello.txt").write_text("hi\n")
    async with Client(stdio_server_params(ws_path), mode=mode) as client:
        await exercise(client, ws_path)


@pytest.mark.parametrize("stateless", [False, True])
async def test_the_surface_over_streamable_http(ws_path, http_server, stateless):
    from mcp import Client

    (ws_path / "hello.txt").write_text("hi\n")
    server = http_server(ws_path, *(["--stateless"] if stateless else []))
    for mode in ("legacy", "auto"):
        async with Client(server.mcp_url, mode=mode) as client:
            await exercise(client, ws_path)

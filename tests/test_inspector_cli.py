"""Real clients no one here wrote: the MCP Inspector CLI (2.12.0, node 22) and the TypeScript SDK's
``Client`` (1.32, node 20), over stdio and Streamable HTTP: list and call tools, read resources,
get prompts, complete arguments."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.npm import node, npm_bin, npm_package

REPO = Path(__file__).resolve().parents[1]


def inspector(*args: str) -> dict:
    node_bin = node(22)
    cli = npm_bin("@modelcontextprotocol/inspector", "2.12.0", "mcp-inspector", node_version=22)
    env = dict(os.environ)
    env["PATH"] = f"{node_bin.parent}{os.pathsep}{env.get('PATH', '')}"
    proc = subprocess.run(
        [str(cli), "--cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return json.loads(proc.stdout)


def stdio_target(ws: Path) -> list[str]:
    env = [f"XDG_STATE_HOME={os.environ['XDG_STATE_HOME']}", f"PYTHONPATH={REPO}"]
    flags = [x for pair in (("-e", e) for e in env) for x in pair]
    return [*flags, sys.executable, "-m", "mcp_server_ide", "--workspace", str(ws)]


@pytest.mark.parametrize("door", ["stdio", "http"])
def test_inspector_cli_lists_calls_reads_and_gets(ws_path, http_server, door):
    (ws_path / "hello.txt").write_text("hi\n")
    target = stdio_target(ws_path) if door == "stdio" else [http_server(ws_path).mcp_url]
    tools = inspector(*target, "--method", "tools/list")["tools"]
    assert any(t["name"] == "get_file_text_by_path" for t in tools)
    called = inspector(
        *target,
        "--method",
        "tools/call",
        "--tool-name",
        "get_file_text_by_path",
        "--tool-arg",
        "pathInProject=hello.txt",
    )
    assert json.loads(called["content"][0]["text"])["content"] == "hi\n"
    read = inspector(*target, "--method", "resources/read", "--uri", (ws_path / "hello.txt").as_uri())
    assert read["contents"][0]["text"] == "hi\n"
    prompt = inspector(
        *target,
        "--method",
        "prompts/get",
        "--prompt-name",
        "explain_symbol",
        "--prompt-args",
        "symbol=nothing",
    )
    assert prompt["messages"]
    listed = inspector(*target, "--method", "resources/list")
    assert any(r["uri"] == (ws_path / "hello.txt").as_uri() for r in listed["resources"])


NODE_CLIENT = r"""
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
const [kind, target, ws, python] = process.argv.slice(2);
const transport = kind === "stdio"
  ? new StdioClientTransport({ command: python, args: ["-m", "mcp_server_ide", "--workspace", ws], env: process.env })
  : new StreamableHTTPClientTransport(new URL(target));
const client = new Client({ name: "ts-sdk-test", version: "1.0.0" });
await client.connect(transport);
const tools = await client.listTools();
const call = await client.callTool({ name: "get_file_text_by_path", arguments: { pathInProject: "hello.txt" } });
const resources = await client.listResources();
const read = await client.readResource({ uri: resources.resources.find(r => r.name === "hello.txt").uri });
const prompts = await client.listPrompts();
const prompt = await client.getPrompt({ name: "explain_symbol", arguments: { symbol: "nothing" } });
const done = await client.complete({ ref: { type: "ref/prompt", name: "explain_symbol" }, argument: { name: "path", value: "hel" } });
console.log(JSON.stringify({
  tools: tools.tools.length, called: JSON.parse(call.content[0].text).content, read: read.contents[0].text,
  prompts: prompts.prompts.map(p => p.name), promptMessages: prompt.messages.length, completion: done.completion.values,
  listChanged: client.getServerCapabilities().tools.listChanged,
}));
await client.close();
"""


@pytest.mark.parametrize("door", ["stdio", "http"])
def test_typescript_sdk_client(ws_path, http_server, tmp_path, door):
    (ws_path / "hello.txt").write_text("hi\n")
    sdk = npm_package("@modelcontextprotocol/sdk", "1.32.0")
    script = sdk.parents[1] / f"client-test-{os.getpid()}-{door}.mjs"
    script.write_text(NODE_CLIENT)
    target = http_server(ws_path).mcp_url if door == "http" else ""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    try:
        proc = subprocess.run(
            [str(node(20)), str(script), door, target, str(ws_path), sys.executable],
            capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    finally:
        script.unlink()
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["tools"] > 20
    assert out["called"] == "hi\n" and out["read"] == "hi\n"
    assert {"review_changes", "explain_symbol", "fix_failing_test", "commit_message"} <= set(out["prompts"])
    assert out["promptMessages"] >= 1
    assert out["completion"] == ["hello.txt"]
    assert out["listChanged"] is True

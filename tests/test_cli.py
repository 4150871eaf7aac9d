"""The command line as a person uses it: the installed ``mcp-server-ide`` script, run as a process.

The script lives in a fresh virtualenv made for these tests (``python -m venv``), written as pip
writes console scripts, whose site folder is this environment's (so it imports this checkout): a
real install's script is what ``config vscode`` must name, and a checkout's own ``.venv`` may hold a
script that runs another interpreter.
"""

from __future__ import annotations

import json
import os
import re
import site
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")

CONSOLE_SCRIPT = """#!{python}
# -*- coding: utf-8 -*-
import re
import sys
from mcp_server_ide.cli import main
if __name__ == "__main__":
    sys.argv[0] = re.sub(r"(-script\\.pyw|\\.exe)?$", "", sys.argv[0])
    sys.exit(main())
"""


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtualenv with an ``mcp-server-ide`` console script that runs this checkout."""
    root = tmp_path_factory.mktemp("install") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
    python = root / "bin" / "python"
    target = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    ours = [p for p in site.getsitepackages() if Path(p, "mcp_server_ide-0.1.0.dist-info").exists()] or [
        site.getsitepackages()[0]
    ]
    Path(target, "this-checkout.pth").write_text(f"import site; site.addsitedir({ours[0]!r})\n")
    script = root / "bin" / "mcp-server-ide"
    script.write_text(CONSOLE_SCRIPT.format(python=python))
    script.chmod(0o755)
    return root


def cli(venv: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(venv / "bin" / "mcp-server-ide"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )


def test_help_lists_the_subcommands(venv: Path) -> None:
    done = cli(venv, "--help")
    assert done.returncode == 0, done.stderr
    commands = done.stdout.split("commands:", 1)[1]
    for usage in ("call TOOL [JSON]", "tools [TOOL…] [--json]", "config vscode|claude|cursor"):
        assert f"mcp-server-ide {usage}" in commands


def test_call_help_explains_itself(venv: Path) -> None:
    done = cli(venv, "call", "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: mcp-server-ide call TOOL")
    for words in ('{"status": RESULT, "error": null}', "--workspace DIR", "mcp-server-ide tools", "example:"):
        assert words in done.stdout
    one = cli(venv, "call", "get_file_history", "--help")
    assert one.returncode == 0 and one.stdout.startswith("get_file_history — File history"), one.stderr
    assert "  pathInProject: string" in one.stdout and "  maxEntries: integer = 30" in one.stdout
    bare = cli(venv, "call")
    assert bare.returncode == 2 and bare.stderr.startswith("usage: mcp-server-ide call TOOL")


def test_call_runs_a_tool(venv: Path, ws_path: Path) -> None:
    (ws_path / "a.txt").write_text("hello\n")
    done = cli(
        venv, "call", "get_file_text_by_path", '{"pathInProject": "a.txt"}', "--workspace", str(ws_path)
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["error"] is None and "hello" in json.dumps(answer["status"])


def test_tools_lists_every_tool_by_category(venv: Path) -> None:
    done = cli(venv, "tools")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "Editor:" and "Git:" in lines
    rows = {ln.split()[0]: ln for ln in lines if ln.startswith("  ")}
    for name in ("get_file_text_by_path", "search_in_files_content", "get_file_history", "project_fs_read"):
        assert name in rows
    assert "Read a whole text file." in rows["get_file_text_by_path"]
    assert all(len(row) < 140 for row in rows.values())
    assert re.search(r"^\d+ tools\. ", lines[-1])
    only = cli(venv, "tools", "--tools", "search")
    assert {ln.split()[0] for ln in only.stdout.splitlines() if ln.startswith("  ")} == {
        "search_in_files_content",
        "find_files_by_name_substring",
    }
    unknown = cli(venv, "tools", "no_such_tool")
    assert unknown.returncode == 2 and "unknown tool 'no_such_tool'" in unknown.stderr


@pytest.mark.anyio
async def test_tools_json_is_what_tools_list_serves(venv: Path, ws_path: Path, mcp) -> None:
    done = cli(venv, "tools", "--json")
    assert done.returncode == 0, done.stderr
    listed = {t["name"]: t for t in json.loads(done.stdout)}
    subprocess.run(["git", "init", "-q"], cwd=ws_path, check=True)  # git tools are served in a repository
    async with mcp(ws_path) as client:
        served = {t.name: t for t in (await client.list_tools()).tools}
    assert listed.keys() == served.keys()
    for name, tool in served.items():
        entry = listed[name]
        assert entry["description"] == tool.description and entry["title"] == tool.title
        assert entry["inputSchema"] == tool.input_schema
        assert entry.get("outputSchema") == tool.output_schema
        assert entry["annotations"] == tool.annotations.model_dump(by_alias=True, exclude_none=True)


def _readme_json_after(heading: str) -> dict:
    block = README.split(heading, 1)[1].split("```json\n", 1)[1].split("```", 1)[0]
    return json.loads(block)


def test_config_vscode_prints_the_readmes_form(venv: Path, ws_path: Path) -> None:
    done = cli(venv, "config", "vscode", "--json", cwd=ws_path)
    assert done.returncode == 0, done.stderr
    emitted = json.loads(done.stdout)
    documented = json.loads(
        json.dumps(_readme_json_after("### VS Code")).replace("/abs/path/to/.venv", str(venv))
    )
    assert emitted == documented
    assert emitted["servers"]["ide"]["command"] == str(venv / "bin" / "mcp-server-ide")

    full = cli(venv, "config", "vscode", cwd=ws_path).stdout
    link = re.search(r"vscode:mcp/install\?(\S+)", full)
    readme_link = re.search(r"vscode:mcp/install\?([^`\s]+)", README)
    assert link and readme_link
    documented_link = unquote(readme_link[1]).replace("/abs/path/to/.venv", str(venv))
    assert json.loads(unquote(link[1])) == json.loads(
        documented_link.replace("/path/to/project", str(ws_path.resolve()))
    )
    assert f"code --add-mcp '{unquote(link[1])}'" in full


@pytest.mark.anyio
async def test_config_vscode_writes_a_server_with_a_tool_set(venv: Path, ws_path: Path) -> None:
    """`config vscode --tools SET` writes a definition whose server serves that set: started here as
    VS Code would start it (its command and args, ${workspaceFolder} filled in) and listed over stdio."""
    from mcp import Client, StdioServerParameters

    from mcp_server_ide.toolsets import SEED

    done = cli(venv, "config", "vscode", "--tools", "jetbrains,-wait", "--json", cwd=ws_path)
    assert done.returncode == 0, done.stderr
    server = json.loads(done.stdout)["servers"]["ide"]
    assert server["args"][-2:] == ["--tools", "jetbrains,-wait"]
    args = [a.replace("${workspaceFolder}", str(ws_path)) for a in server["args"]]
    async with Client(
        StdioServerParameters(command=server["command"], args=args, env=dict(os.environ))
    ) as client:
        names = {t.name for t in (await client.list_tools()).tools}
    git_tools = {
        n
        for n in SEED
        if "branch" in n
        or "commit" in n
        or n in ("get_project_vcs_status", "get_file_history", "get_file_diff", "pull_changes")
    }
    assert names == set(SEED) - {"wait"} - git_tools  # git tools appear in a repository; ws_path is none


DEV_PLUGIN = '''
"""A plugin with one tool."""
from mcp_server_ide import plugin


@plugin.tool(read_only=True, structured=False)
def dev_probe() -> str:
    """Answers probe."""
    return "probe"
'''


@pytest.mark.anyio
async def test_config_vscode_dev_watches_the_plugin_and_debugs_with_debugpy(
    venv: Path, ws_path: Path
) -> None:
    """`config vscode --dev -- --plugin M`: VS Code's development block watches M's file in the workspace
    and debugs with debugpy, whose VS Code support needs a Python interpreter as the command; the
    definition, started as VS Code starts it (in the folder), serves the plugin's tool."""
    from mcp import Client, StdioServerParameters

    (ws_path / "myplugins").mkdir()
    (ws_path / "myplugins" / "__init__.py").write_text("")
    (ws_path / "myplugins" / "probe.py").write_text(DEV_PLUGIN)
    done = cli(venv, "config", "vscode", "--dev", "--json", "--", "--plugin", "myplugins.probe", cwd=ws_path)
    assert done.returncode == 0, done.stderr
    server = json.loads(done.stdout)["servers"]["ide"]
    assert server["dev"]["watch"] == "myplugins/probe.py"
    assert server["dev"]["debug"]["type"] == "debugpy"
    assert re.search(r"python[0-9.]*$", server["command"])  # VS Code refuses debugpy for anything else
    assert server["args"][:2] == ["-m", "mcp_server_ide"]
    args = [a.replace("${workspaceFolder}", str(ws_path)) for a in server["args"]]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    async with Client(
        StdioServerParameters(command=server["command"], args=args, env=env, cwd=ws_path)
    ) as client:
        names = {t.name for t in (await client.list_tools()).tools}
    assert "dev_probe" in names

    # A package plugin is watched as a folder; --watch chooses; without plugins, src/ or everything.
    (ws_path / "src" / "pkgplug").mkdir(parents=True)
    (ws_path / "src" / "pkgplug" / "__init__.py").write_text("")
    watched = [
        json.loads(cli(venv, "config", "vscode", "--dev", "--json", *extra, cwd=ws_path).stdout)["servers"][
            "ide"
        ]["dev"]["watch"]
        for extra in (
            ("--", "--plugin=pkgplug"),
            ("--watch", "a/*.py", "--watch", "b/*.py"),
            (),
        )
    ]
    assert watched == ["src/pkgplug/**/*.py", ["a/*.py", "b/*.py"], "src/**/*.py"]
    full = cli(venv, "config", "vscode", "--dev", cwd=ws_path).stdout
    assert '"dev":{"watch":"src/**/*.py"' in full  # the install link and --add-mcp carry it too
    refused = cli(venv, "config", "claude", "--dev", cwd=ws_path)
    assert refused.returncode == 2 and "config vscode" in refused.stderr and "Traceback" not in refused.stderr


def test_a_tools_entry_naming_nothing_is_refused_everywhere(venv: Path, ws_path: Path) -> None:
    seed = cli(venv, "tools", "--tools", "jetbrains")
    assert seed.returncode == 0 and re.search(r"^41 tools\. ", seed.stdout.splitlines()[-1])
    for args in (
        ("config", "vscode", "--tools", "sede"),
        ("tools", "--tools", "jetbrains,gti"),
        ("--tools", "sede"),
    ):
        done = subprocess.run(
            [str(venv / "bin" / "mcp-server-ide"), *args],
            cwd=ws_path,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2, (args, done.stderr)
        assert "unknown --tools entry" in done.stderr and "sets: jetbrains, core, all" in done.stderr, args
        assert "Traceback" not in done.stderr and done.stdout == ""


def test_config_claude_prints_the_readmes_form(venv: Path, ws_path: Path) -> None:
    done = cli(venv, "config", "claude", "--json", "--workspace", str(ws_path))
    assert done.returncode == 0, done.stderr
    documented = json.dumps(_readme_json_after("### Claude Desktop"))
    documented = documented.replace("/abs/path/to/.venv", str(venv)).replace(
        "/path/to/project", str(ws_path.resolve())
    )
    assert json.loads(done.stdout) == json.loads(documented)


@pytest.mark.parametrize("args", [("tools",), ("tools", "--json"), ("config", "vscode"), ("journal", "show")])
def test_a_reader_that_stops_early_gets_no_traceback(
    venv: Path, ws_path: Path, args: tuple[str, ...]
) -> None:
    """`mcp-server-ide config vscode | head -1`: the reader is gone before all is printed. Here it is
    gone before anything is (the pipe's read end is closed before the command starts), so every write
    fails: the command still ends quietly, exit 0 and no traceback."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [str(venv / "bin" / "mcp-server-ide"), *args],
            cwd=ws_path,
            stdin=subprocess.DEVNULL,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        )
    finally:
        os.close(write_end)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr

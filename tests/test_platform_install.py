"""The package stays installable where VS Code runs: Windows, macOS on Apple silicon and on Intel.

No machine here runs those systems, so pip resolves the package for each of them without
installing (``--dry-run --only-binary=:all: --platform … --python-version 3.11``): every
dependency must come as a binary wheel for that platform, since a user there may have no compiler.
Then the wheel is built once and installed into a fresh virtualenv, and its command starts.
Both need the package index (CI has it); without it the test skips locally and fails under CI.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .support.system import missing

REPOSITORY = Path(__file__).resolve().parents[1]
PLATFORMS = ["win_amd64", "macosx_11_0_arm64", "macosx_11_0_x86_64"]


def pip(*args: str, cwd: Path = REPOSITORY, python: str = sys.executable) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [python, "-m", "pip", "--disable-pip-version-check", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


def source_copy(into: Path) -> Path:
    """The files a build reads, copied to ``into`` (a build writes ``build/`` beside its source)."""
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPOSITORY / name, into / name)
    shutil.copytree(
        REPOSITORY / "src", into / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
    )
    return into


def index_unreachable(run: subprocess.CompletedProcess[str]) -> bool:
    """True when pip failed because the package index could not be reached at all."""
    return run.returncode != 0 and "NewConnectionError" in run.stderr + run.stdout


@pytest.mark.parametrize("platform", PLATFORMS)
def test_every_dependency_has_a_wheel_for(platform: str, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    (tmp_path / "source").mkdir()
    source = source_copy(tmp_path / "source")
    run = pip(
        "install", "--dry-run", "--ignore-installed", "--only-binary=:all:",
        "--platform", platform, "--python-version", "3.11", "--implementation", "cp",
        "--target", str(tmp_path / "target"), "--report", str(report), ".",
        cwd=source,
    )  # fmt: skip
    if index_unreachable(run):
        missing("the package index", "network access to PyPI")
    assert run.returncode == 0, f"pip could not resolve for {platform}:\n{run.stderr[-3000:]}"
    items = json.loads(report.read_text())["install"]
    names = {item["metadata"]["name"].lower() for item in items}
    assert {"mcp", "pydantic", "ripgrep", "tree-sitter", "watchfiles"} <= names
    for item in items:
        url = item["download_info"]["url"]
        if item["metadata"]["name"] == "mcp-server-ide":
            continue
        assert url.endswith(".whl"), f"{item['metadata']['name']} for {platform} is not a wheel: {url}"


def test_the_built_wheel_installs_into_a_fresh_venv_and_starts(tmp_path: Path) -> None:
    (tmp_path / "source").mkdir()
    wheels = tmp_path / "wheels"
    source = source_copy(tmp_path / "source")
    built = pip("wheel", "--no-deps", "-w", str(wheels), ".", cwd=source)
    assert built.returncode == 0, built.stderr[-3000:]
    [wheel] = list(wheels.glob("mcp_server_ide-*.whl"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    installed = pip("install", "--only-binary", "ripgrep", str(wheel), python=python, cwd=tmp_path)
    if index_unreachable(installed):
        missing("the package index", "network access to PyPI")
    assert installed.returncode == 0, installed.stderr[-3000:]
    started = subprocess.run(
        [str(venv / "bin" / "mcp-server-ide"), "--help"], capture_output=True, text=True, timeout=120
    )
    assert started.returncode == 0, started.stderr[-3000:]
    assert "--workspace" in started.stdout

"""A missing system dependency fails a CI run and skips, naming the install command, elsewhere.

Through the real doors: a pytest run (a subprocess) of a test that calls ``require_system``, and
``.ci/run`` itself. For ``.ci/run`` the failing ``apt-get`` is a stand-in script: a real install
cannot be made to fail here without breaking the machine, and a real one would change it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .support.system import require_system

REPO = Path(__file__).resolve().parent.parent

NEEDS_TOOLS = """
from tests.support.system import require_system


def test_present():
    assert require_system("sh", "dash").endswith("/sh")


def test_absent():
    require_system("no-such-tool-1c9e", "the-tool-package")
"""


def _pytest(folder: Path, ci: str | None) -> subprocess.CompletedProcess[str]:
    (folder / "test_needs_tools.py").write_text(NEEDS_TOOLS)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS")}
    env["PYTHONPATH"] = str(REPO)
    if ci is not None:
        env["CI"] = ci
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rfs", "-p", "no:cacheprovider", "test_needs_tools.py"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("ci", [None, "false", ""])
def test_outside_ci_a_missing_command_skips_naming_its_package(tmp_path: Path, ci: str | None) -> None:
    done = _pytest(tmp_path, ci)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed, 1 skipped" in done.stdout
    assert "needs no-such-tool-1c9e: apt-get install -y the-tool-package" in done.stdout


def test_in_ci_a_missing_command_fails_the_run(tmp_path: Path) -> None:
    done = _pytest(tmp_path, "true")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 1 passed" in done.stdout and "skipped" not in done.stdout
    assert "needs no-such-tool-1c9e: apt-get install -y the-tool-package" in done.stdout
    assert "CI=true" in done.stdout


def test_a_present_command_gives_its_path() -> None:
    assert Path(require_system("sh", "dash")).is_absolute()


def _ci_run(tmp_path: Path, ci: str | None) -> tuple[subprocess.CompletedProcess[str], bool]:
    """``.ci/run`` on a machine where nothing is installed and ``apt-get`` fails. Its next step, creating
    the virtualenv, is a stand-in ``python3`` that records being reached and stops the script."""
    fake = tmp_path / "bin"
    fake.mkdir()
    reached = tmp_path / "reached-python3"
    scripts = {
        "apt-get": "#!/bin/sh\necho 'E: Unable to locate package' >&2\nexit 100\n",
        "dpkg": "#!/bin/sh\nexit 1\n",
        "python3": f"#!/bin/sh\n: > '{reached}'\nexit 3\n",
    }
    for name, text in scripts.items():
        (fake / name).write_text(text)
        (fake / name).chmod(0o755)
    (fake / "dirname").symlink_to(require_system("dirname", "coreutils"))
    env = {"PATH": str(fake), "HOME": str(tmp_path)}
    if ci is not None:
        env["CI"] = ci
    done = subprocess.run(
        ["/bin/bash", str(REPO / ".ci" / "run")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    return done, reached.exists()


def test_ci_run_fails_when_ci_is_true_and_the_install_fails(tmp_path: Path) -> None:
    done, reached = _ci_run(tmp_path, "true")
    assert done.returncode == 1 and not reached, done.stderr
    assert "could not install" in done.stderr and "chromium" in done.stderr and "bubblewrap" in done.stderr
    assert "apt-get install -y" in done.stderr


def test_ci_run_outside_ci_warns_and_goes_on(tmp_path: Path) -> None:
    done, reached = _ci_run(tmp_path, None)
    assert reached and done.returncode == 3, done.stderr
    assert "warning: could not install" in done.stderr and "chromium" in done.stderr

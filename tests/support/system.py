"""System dependencies of the tests (Chromium, bubblewrap, node, npm, util-linux...): present, or a clear outcome.

In CI (``CI=true``) a missing system dependency fails the test: a suite must never pass by skipping.
Locally the test skips and the reason names what to install. ``.ci/run`` installs them all.
"""

from __future__ import annotations

import os
import shutil
from typing import NoReturn

import pytest


def in_ci() -> bool:
    """True when the environment says this is a CI run (``CI=true``, as GitHub Actions and others set)."""
    return os.environ.get("CI") == "true"


def missing(what: str, install: str) -> NoReturn:
    """Stop the test because ``what`` is absent: fail under CI, else skip saying ``install``."""
    reason = f"needs {what}: {install}"
    if in_ci():
        pytest.fail(f"{reason} (CI=true: a missing system dependency fails the run)", pytrace=False)
    pytest.skip(reason)


def require_system(cmd: str, package: str) -> str:
    """The absolute path of the command ``cmd``; if it is not on PATH, :func:`missing` with the Debian
    package that provides it (``apt-get install -y PACKAGE``)."""
    found = shutil.which(cmd)
    if found is None:
        missing(cmd, f"apt-get install -y {package}")
    return found

"""Headless Chromium for tests that look at pages as a person would (REAL-CLIENTS.md).

Debian's ``chromium`` (``apt-get install -y chromium``) driven by the Python ``playwright`` package
with ``executable_path`` (Playwright's own browser download cannot work here). Screenshots go to
``tests/artifacts/`` (gitignored).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .system import missing

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"


def chromium_path() -> str | None:
    for name in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser"):
        if name and (found := shutil.which(name)):
            return found
    return None


def artifact(name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS / name


@contextmanager
def chromium_page(
    profile: Path, *, color_scheme: str = "light", width: int = 1440, height: int = 900
) -> Iterator[Any]:
    """A fresh Chromium profile and one page. Uncaught script errors collect on ``page.errors``; console
    errors (a 401 answer logs one, on purpose) on ``page.console_errors``."""
    try:
        from playwright import sync_api
    except ImportError:
        missing("the playwright Python package", "pip install -e '.[test]'")
    executable = chromium_path()
    if executable is None:
        missing("Chromium", "apt-get install -y chromium")
    with sync_api.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile),
            executable_path=executable,
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport={"width": width, "height": height},
            color_scheme=color_scheme,
        )
        try:
            page = context.pages[0] if context.pages else context.new_page()
            errors: list[str] = []
            console: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda msg: console.append(msg.text) if msg.type == "error" else None)
            page.errors = errors  # type: ignore[attr-defined]
            page.console_errors = console  # type: ignore[attr-defined]
            page.set_default_timeout(15_000)
            yield page
        finally:
            context.close()

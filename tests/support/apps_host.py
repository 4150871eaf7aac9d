"""A test host for MCP Apps: the real host side of ``@modelcontextprotocol/ext-apps`` in Chromium.

``host_page_files()`` gives the host page and its script, bundled once (esbuild) from
``review_host/host.js`` with ``@modelcontextprotocol/ext-apps`` (``AppBridge``) and
``@modelcontextprotocol/client`` (Streamable HTTP) from npm, installed into the test cache.
Tests serve these files on the server's own origin with Playwright's request routing, so the
page's MCP client is a same-origin caller of the real server's ``/mcp``.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from .npm import cache_dir, npm_bin, npm_package

EXT_APPS_VERSION = "2.0.4"
ESBUILD_VERSION = "0.28.2"
HERE = Path(__file__).resolve().parent / "review_host"


def host_bundle() -> Path:
    """The host script bundled for the browser (cached by the source's hash and the versions)."""
    source = HERE / "host.js"
    key = hashlib.sha256(source.read_bytes() + f"{EXT_APPS_VERSION} {ESBUILD_VERSION}".encode()).hexdigest()[
        :16
    ]
    out = cache_dir() / "apps-host" / f"host-{key}.js"
    if out.exists():
        return out
    # npm installs the package's peer dependencies too (@modelcontextprotocol/client and core, zod).
    package = npm_package("@modelcontextprotocol/ext-apps", EXT_APPS_VERSION)
    node_modules = package.parent.parent
    esbuild = npm_bin("esbuild", ESBUILD_VERSION, "esbuild")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp.js")
    subprocess.run(
        [
            str(esbuild),
            str(source),
            "--bundle",
            "--format=iife",
            "--platform=browser",
            "--target=es2020",
            f"--outfile={tmp}",
        ],
        check=True,
        env={**os.environ, "NODE_PATH": str(node_modules)},
        stdin=subprocess.DEVNULL,
        timeout=300,
    )
    tmp.replace(out)
    return out


def host_page_files() -> dict[str, tuple[bytes, str]]:
    """``{name: (bytes, content type)}`` for the host page."""
    return {
        "index.html": ((HERE / "index.html").read_bytes(), "text/html; charset=utf-8"),
        "host.bundle.js": (host_bundle().read_bytes(), "text/javascript; charset=utf-8"),
    }

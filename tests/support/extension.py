"""Building and testing the VS Code companion extension (``extension/``) with cached npm tools.

The same steps as ``cd extension && npm install && npm run typecheck && npm test && npm run package``,
but with esbuild, TypeScript, the type packages and ``@vscode/vsce`` installed once into the test
cache (:mod:`.npm`), so the default suite needs no ``node_modules`` in the source tree.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from .apps_host import ESBUILD_VERSION
from .npm import _package_folder, node, npm_bin, npm_package

EXTENSION = Path(__file__).resolve().parents[2] / "extension"
TYPESCRIPT_VERSION = "5.9.3"
TYPES_VSCODE_VERSION = "1.101.0"
TYPES_NODE_VERSION = "20.19.25"
VSCE_VERSION = "3.7.1"


def _run(argv: list[str], timeout: float = 300) -> str:
    done = subprocess.run(
        argv, cwd=EXTENSION, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )
    if done.returncode != 0:
        raise AssertionError(
            f"{' '.join(argv)} failed ({done.returncode}):\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
        )
    return done.stdout + done.stderr


def typecheck() -> str:
    """``tsc --noEmit`` over the extension's sources and tests, against ``@types/vscode`` 1.101."""
    tsc = npm_bin("typescript", TYPESCRIPT_VERSION, "tsc")
    npm_package("@types/vscode", TYPES_VSCODE_VERSION)
    npm_package("@types/node", TYPES_NODE_VERSION)
    roots = ",".join(
        str(_package_folder(name, version) / "node_modules" / "@types")
        for name, version in (("@types/vscode", TYPES_VSCODE_VERSION), ("@types/node", TYPES_NODE_VERSION))
    )
    return _run([str(tsc), "--noEmit", "-p", ".", "--typeRoots", roots])


def unit_tests(out: Path) -> str:
    """Bundle ``extension/test/*.test.ts`` into ``out`` and run them with node's test runner."""
    esbuild = npm_bin("esbuild", ESBUILD_VERSION, "esbuild")
    tests = sorted(str(p.relative_to(EXTENSION)) for p in (EXTENSION / "test").glob("*.test.ts"))
    _run([str(esbuild), *tests, "--bundle", "--platform=node", "--format=cjs", "--target=node20",
          f"--outdir={out}", "--log-level=warning"])  # fmt: skip
    return _run([str(node()), "--test", str(out)], timeout=120)


def build_wheel() -> Path:
    """``npm run wheel``: the server's wheel (``pip wheel --no-deps`` of this checkout) in ``dist/server``,
    which the ``.vsix`` ships so the extension can install the server where none is found."""
    folder = EXTENSION / "dist" / "server"
    shutil.rmtree(folder, ignore_errors=True)
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--quiet",
            "-w",
            str(folder),
            str(EXTENSION.parent),
        ]
    )
    (wheel,) = folder.glob("mcp_server_ide-*.whl")
    return wheel


def build_vsix(out: Path) -> Path:
    """``npm run package``: bundle the extension (``dist/extension.js``), build the server's wheel and
    package both as ``out`` (a ``.vsix``)."""
    esbuild = npm_bin("esbuild", ESBUILD_VERSION, "esbuild")
    _run([str(esbuild), "src/extension.ts", "--bundle", "--platform=node", "--format=cjs", "--target=node20",
          "--external:vscode", "--outfile=dist/extension.js", "--log-level=warning"])  # fmt: skip
    wheel = build_wheel()
    vsce = npm_package("@vscode/vsce", VSCE_VERSION) / "vsce"
    _run(
        [str(node()), str(vsce), "package", "--no-dependencies", "--allow-missing-repository", "-o", str(out)]
    )
    with zipfile.ZipFile(out) as packed:
        assert f"extension/dist/server/{wheel.name}" in packed.namelist(), packed.namelist()
    return out

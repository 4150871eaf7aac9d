"""Projects for the code-intelligence tests, generated or downloaded by the tests (never committed).

- ``python_project(root)``: a ~100-module Python package where ``compute_total`` (pkg/core.py) is
  used by exactly 10 modules, plus a class, a docstring mention and 89 unrelated modules.
- ``typescript_project(root)``: a tsconfig project where ``formatPrice`` (src/util.ts) is used by
  exactly 10 files, plus 20 unrelated ones and a ``main.ts`` that prints a checked result.
- ``rich_source(dest)``: the real ``rich`` package from PyPI (``pip download`` of a pinned wheel,
  cached), falling back to a copy of the standard library's ``asyncio`` when PyPI cannot be reached.
- ``typescript_tools()``: (node, tsc.js) of the TypeScript the product installs (typescript@6).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from .npm import cache_dir

USERS = 10
RICH = "rich==13.9.4"


def python_project(root: Path) -> Path:
    pkg = root / "pkg"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text(
        '"""A generated package. compute_total is documented here, not used."""\n'
    )
    (pkg / "core.py").write_text(
        '"""Core arithmetic."""\n'
        "\n"
        "from __future__ import annotations\n"
        "\n"
        "TAX_RATE = 0.2\n"
        "\n"
        "\n"
        "def compute_total(items: list[float], discount: float = 0.0) -> float:\n"
        '    """Sum the items, apply a discount, add tax."""\n'
        "    subtotal = sum(items) - discount\n"
        "    return round(subtotal * (1 + TAX_RATE), 2)\n"
        "\n"
        "\n"
        "class Basket:\n"
        "    def __init__(self) -> None:\n"
        "        self.items: list[float] = []\n"
        "\n"
        "    def add(self, price: float) -> Basket:\n"
        "        self.items.append(price)\n"
        "        return self\n"
        "\n"
        "    def total(self) -> float:\n"
        "        return compute_total(self.items)\n"
    )
    for i in range(USERS):
        (pkg / f"user_{i:02d}.py").write_text(
            "from pkg.core import compute_total\n"
            "\n"
            "\n"
            f"def report_{i}() -> float:\n"
            f"    # compute_total is called below with {i}\n"
            f"    return compute_total([{i}.0, 1.0], discount=0.5)\n"
        )
    for i in range(89):
        (pkg / f"other_{i:02d}.py").write_text(
            f"def other_{i}(x: int) -> int:\n    return x * {i}\n\n\nclass Thing{i}:\n    value = {i}\n"
        )
    (pkg / "extractme.py").write_text(
        "def price_with_shipping(prices: list[float], weight: float) -> float:\n"
        "    subtotal = sum(prices)\n"
        "    shipping = 5.0 + weight * 1.5 if weight > 2 else 5.0\n"
        "    total = subtotal + shipping\n"
        "    return round(total, 2)\n"
    )
    return root


def typescript_project(root: Path) -> Path:
    src = root / "src"
    src.mkdir(parents=True, exist_ok=True)
    (root / "tsconfig.json").write_text(
        '{"compilerOptions": {"target": "es2020", "module": "commonjs", "strict": true, "outDir": "out", '
        '"rootDir": "src", "types": []}, "include": ["src"]}\n'
    )
    (src / "util.ts").write_text(
        "export function formatPrice(cents: number, currency: string = 'EUR'): string {\n"
        "  const whole = Math.floor(cents / 100);\n"
        "  const rest = (cents % 100).toString().padStart(2, '0');\n"
        "  return `${whole}.${rest} ${currency}`;\n"
        "}\n"
        "\n"
        "export class Cart {\n"
        "  private items: number[] = [];\n"
        "  add(cents: number): this {\n"
        "    this.items.push(cents);\n"
        "    return this;\n"
        "  }\n"
        "  total(): string {\n"
        "    return formatPrice(this.items.reduce((a, b) => a + b, 0));\n"
        "  }\n"
        "}\n"
    )
    for i in range(USERS):
        (src / f"user{i}.ts").write_text(
            "import { formatPrice } from './util';\n"
            "\n"
            f"export function show{i}(): string {{\n"
            f"  return formatPrice({i * 101 + 5});\n"
            "}\n"
        )
    for i in range(20):
        (src / f"other{i}.ts").write_text(f"export const other{i} = (x: number): number => x * {i};\n")
    (src / "shipping.ts").write_text(
        "export function shippingCost(weight: number, express: boolean): number {\n"
        "  const base = 500;\n"
        "  const cost = base + weight * 150 + (express ? 1000 : 0);\n"
        "  return cost;\n"
        "}\n"
    )
    (src / "main.ts").write_text(
        "import { show3 } from './user3';\n"
        "import { shippingCost } from './shipping';\n"
        "console.log(show3(), shippingCost(2, true));\n"
    )
    return root


def rich_source(dest: Path) -> tuple[Path, str]:
    """A real package's folder copied into ``dest``: ('rich' from PyPI, or stdlib 'asyncio')."""
    wheels = cache_dir() / "pypi"
    wheels.mkdir(parents=True, exist_ok=True)
    found = sorted(wheels.glob("rich-13.9.4-*.whl"))
    if not found:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", RICH, "--no-deps", "-q", "-d", str(wheels)],
            check=False,
            capture_output=True,
            timeout=300,
        )
        found = sorted(wheels.glob("rich-13.9.4-*.whl"))
    if found:
        with zipfile.ZipFile(found[0]) as zf:
            for name in zf.namelist():
                if name.startswith("rich/"):
                    zf.extract(name, dest)
        return dest / "rich", "rich"
    import asyncio

    shutil.copytree(Path(asyncio.__file__).parent, dest / "asyncio_copy")
    return dest / "asyncio_copy", "asyncio_copy"


def typescript_tools() -> tuple[str, Path]:
    from mcp_server_ide.engines.lsp import install

    _cli, lib = install.ensure_typescript()
    return install.node_binary(), lib / "tsc.js"


SEED_HELPER = "function helper() {\n  return 'Hello';\n}\n\nmodule.exports = { helper };\n"
SEED_INDEX = (
    "const { helper } = require('./utils/helper');\n\nfunction main() {\n    helper();\n}\n\nmain();\n"
)


def seed_js_project(root: Path) -> Path:
    """The layout seed 000's examples assume, plain JavaScript with no jsconfig/tsconfig:
    ``src/utils/helper.js`` defines and exports ``helper`` (line 0, characters 9-15) and
    ``src/index.js`` requires it and calls it on line 3, character 4; a package.json with express and lodash."""
    (root / "src/utils").mkdir(parents=True, exist_ok=True)
    (root / "src/utils/helper.js").write_text(SEED_HELPER)
    (root / "src/index.js").write_text(SEED_INDEX)
    (root / "package.json").write_text(
        '{\n  "name": "my-project",\n  "version": "1.0.0",\n  "scripts": {"dev": "node src/index.js"},\n'
        '  "dependencies": {"express": "^4.18.2", "lodash": "^4.17.21"},\n'
        '  "devDependencies": {"typescript": "^5.0.0"}\n}\n'
    )
    return root

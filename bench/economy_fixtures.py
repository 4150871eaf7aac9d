"""The fixture repositories of ``bench_economy.py``, built fresh for every task and peer, deterministically.

- ``shop``: a small Python package (pricing, cart, receipt) with tests; ``compute_total`` has a bug
  (the discount is applied as the price), so three of its five tests fail.
- ``shop_review``: ``shop`` fixed, with a branch ``bulk-discount`` checked out whose change to
  ``subtotal`` uses an undefined name (``BULK_RATE``): what a review should catch.
- ``h11_hunt``: the real ``h11`` package, vendored from the running interpreter's site-packages into
  ``src/``, with one planted bug (``get_comma_header`` no longer lower-cases header values, so
  ``Connection: Close`` keeps the connection alive) and tests of which one fails.

Each ``pyproject.toml`` has a ``[tool.basedpyright]`` table, so a language server never takes its settings
from a config file in a parent folder (a stray ``/tmp/pyrightconfig.json`` with ``include: ["src"]`` made
references and renames see one file only). Commits carry fixed names and dates (``GIT_ENV``), so every build has the same hashes.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
    "GIT_AUTHOR_DATE": "1767323045 +0000",  # 2026-01-02T03:04:05Z in git's raw form, which GitPython
    "GIT_COMMITTER_DATE": "1767323045 +0000",  # (mcp-server-git) reads too: it refuses ISO 8601 with an offset
}
"""Who commits, and when: for the fixtures and for every peer's commits alike."""

PYTHON = sys.executable
PYTEST = f"{PYTHON} -m pytest -q -p no:cacheprovider"
"""How every peer runs the tests: the bench's interpreter by its absolute path (Desktop Commander runs
commands in a login shell, whose profile resets PATH)."""

PRICING = '''"""Prices of orders: line items, subtotals, discounts and tax."""

from __future__ import annotations

from dataclasses import dataclass

TAX_RATE = 0.2


@dataclass(frozen=True)
class Item:
    """One line of an order."""

    name: str
    price: float
    quantity: int = 1

    def cost(self) -> float:
        return self.price * self.quantity


def subtotal(items: list[Item]) -> float:
    """The sum of the items' costs, before discount and tax."""
    return sum(item.cost() for item in items)


def compute_total(items: list[Item], discount: float = 0.0) -> float:
    """The price to pay: the subtotal less a fractional ``discount`` (0.1 is 10 %), plus tax."""
    if not 0.0 <= discount < 1.0:
        raise ValueError(f"discount must be in [0, 1), not {discount}")
    base = subtotal(items)
    discounted = base * discount
    return round(discounted * (1 + TAX_RATE), 2)
'''

BUG = "    discounted = base * discount\n"
FIX = "    discounted = base * (1 - discount)\n"

CART = '''"""A shopping cart that prices itself."""

from __future__ import annotations

from .pricing import Item, compute_total


class Cart:
    """Items a customer has chosen, with an optional discount."""

    def __init__(self, discount: float = 0.0) -> None:
        self.items: list[Item] = []
        self.discount = discount

    def add(self, name: str, price: float, quantity: int = 1) -> None:
        self.items.append(Item(name, price, quantity))

    def total(self) -> float:
        return compute_total(self.items, self.discount)
'''

RECEIPT = '''"""Printable receipts."""

from __future__ import annotations

from .cart import Cart
from .pricing import compute_total


def render(cart: Cart) -> str:
    """The receipt of a cart: one line per item, then the total."""
    lines = [f"{item.quantity} x {item.name}: {item.cost():.2f}" for item in cart.items]
    lines.append(f"Total: {compute_total(cart.items, cart.discount):.2f}")
    return "\\n".join(lines)
'''

TEST_PRICING = """from shop.cart import Cart
from shop.pricing import Item, compute_total, subtotal


def test_subtotal():
    assert subtotal([Item("pen", 1.5, 2), Item("ink", 3.0)]) == 6.0


def test_total_without_discount():
    assert compute_total([Item("pen", 10.0)]) == 12.0


def test_total_with_discount():
    assert compute_total([Item("pen", 10.0)], discount=0.25) == 9.0


def test_cart_total():
    cart = Cart(discount=0.5)
    cart.add("book", 20.0)
    assert cart.total() == 12.0
"""

TEST_RECEIPT = """from shop.cart import Cart
from shop.receipt import render


def test_render_lists_items_and_total():
    cart = Cart()
    cart.add("tea", 2.5, 2)
    assert render(cart).splitlines() == ["2 x tea: 5.00", "Total: 6.00"]
"""

PYPROJECT = """[project]
name = "{name}"
version = "0.1.0"
requires-python = ">=3.11"

[tool.pytest.ini_options]
testpaths = ["tests"]
{extra}
[tool.basedpyright]
typeCheckingMode = "standard"
"""

GITIGNORE = "__pycache__/\n*.pyc\n.pytest_cache/\n"

OLD_NAME = "compute_total"
NEW_NAME = "order_total"

SUBTOTAL_BULK = '''BULK_DISCOUNT = 0.05
BULK_QUANTITY = 10


def subtotal(items: list[Item]) -> float:
    """The sum of the items' costs, before discount and tax; 5 % off lines of 10 or more."""
    total = 0.0
    for item in items:
        cost = item.cost()
        if item.quantity >= BULK_QUANTITY:
            cost *= 1 - BULK_RATE
        total += cost
    return total
'''
SUBTOTAL_PLAIN = '''def subtotal(items: list[Item]) -> float:
    """The sum of the items' costs, before discount and tax."""
    return sum(item.cost() for item in items)
'''
REVIEW_BRANCH = "bulk-discount"
UNDEFINED = "BULK_RATE"

H11_BUG_LINE = "            found_raw_value = found_raw_value.lower()\n"
H11_BUG_AFTER = "        if found_name == name:\n"
TEST_H11 = """import h11


def server_with(request: bytes) -> h11.Connection:
    conn = h11.Connection(h11.SERVER)
    conn.receive_data(request)
    return conn


def test_request_is_parsed():
    conn = server_with(b"GET /index HTTP/1.1\\r\\nHost: example.com\\r\\n\\r\\n")
    event = conn.next_event()
    assert isinstance(event, h11.Request)
    assert event.target == b"/index"


def test_keep_alive_by_default():
    conn = server_with(b"GET / HTTP/1.1\\r\\nHost: example.com\\r\\n\\r\\n")
    assert isinstance(conn.next_event(), h11.Request)
    assert isinstance(conn.next_event(), h11.EndOfMessage)
    assert conn.their_state is h11.DONE


def test_connection_close_in_any_case():
    conn = server_with(b"GET / HTTP/1.1\\r\\nHost: example.com\\r\\nConnection: Close\\r\\n\\r\\n")
    assert isinstance(conn.next_event(), h11.Request)
    assert isinstance(conn.next_event(), h11.EndOfMessage)
    assert conn.their_state is h11.MUST_CLOSE


def test_request_is_written():
    client = h11.Connection(h11.CLIENT)
    data = client.send(h11.Request(method="GET", target="/", headers=[("Host", "example.com")]))
    assert data == b"GET / HTTP/1.1\\r\\nHost: example.com\\r\\n\\r\\n"
"""
H11_FAILING = "tests/test_h11.py::test_connection_close_in_any_case"


def git(root: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_ENV, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    return subprocess.run(
        ["git", *args],
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    ).stdout


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _commit_all(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


def _init(root: Path) -> None:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")


def shop(root: Path, *, fixed: bool = False) -> Path:
    """The ``shop`` package with its tests, committed on ``main`` (the bug in place unless ``fixed``)."""
    _init(root)
    pricing = PRICING.replace(BUG, FIX) if fixed else PRICING
    _write(
        root,
        {
            ".gitignore": GITIGNORE,
            "pyproject.toml": PYPROJECT.format(name="shop", extra=""),
            "shop/__init__.py": '"""A small shop."""\n',
            "shop/pricing.py": pricing,
            "shop/cart.py": CART,
            "shop/receipt.py": RECEIPT,
            "tests/test_pricing.py": TEST_PRICING,
            "tests/test_receipt.py": TEST_RECEIPT,
        },
    )
    _commit_all(root, "Shop: pricing, cart and receipts")
    return root


def shop_review(root: Path) -> Path:
    """``shop`` (fixed) on ``main``, and the branch under review checked out."""
    shop(root, fixed=True)
    git(root, "checkout", "-q", "-b", REVIEW_BRANCH)
    pricing = root / "shop" / "pricing.py"
    text = pricing.read_text()
    assert SUBTOTAL_PLAIN in text
    pricing.write_text(text.replace(SUBTOTAL_PLAIN, SUBTOTAL_BULK))
    _commit_all(root, "Bulk discount: 5 % off lines of 10 or more")
    return root


def h11_source() -> Path:
    spec = importlib.util.find_spec("h11")
    if spec is None or spec.origin is None:
        raise RuntimeError("h11 is not installed beside this interpreter (it comes with httpx/uvicorn)")
    return Path(spec.origin).parent


def h11_hunt(root: Path) -> Path:
    """The real h11 package under ``src/`` with the planted bug, and its tests (one fails)."""
    _init(root)
    source = h11_source()
    shutil.copytree(source, root / "src" / "h11", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    headers = root / "src" / "h11" / "_headers.py"
    text = headers.read_text()
    planted = text.replace(H11_BUG_AFTER + H11_BUG_LINE, H11_BUG_AFTER, 1)
    if planted == text:
        raise RuntimeError(f"{headers}: the line to remove was not found (another h11 version?)")
    headers.write_text(planted)
    _write(
        root,
        {
            ".gitignore": GITIGNORE,
            "pyproject.toml": PYPROJECT.format(name="h11-vendored", extra='pythonpath = ["src"]\n'),
            "tests/test_h11.py": TEST_H11,
        },
    )
    _commit_all(root, "Vendor h11")
    return root


def position(root: Path, rel: str, text: str, *, word: str | None = None) -> tuple[int, int]:
    """0-based (line, character) of the first line holding ``text`` (at ``word`` in it, if given)."""
    for number, line in enumerate((root / rel).read_text().splitlines()):
        if text in line:
            return number, line.index(word if word is not None else text)
    raise RuntimeError(f"{rel}: no line holds {text!r}")


def span(root: Path, rel: str, header: str) -> tuple[int, int]:
    """1-based first and last line of the top-level block that starts with the line ``header``."""
    lines = (root / rel).read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    end = start + 1
    while end < len(lines) and (not lines[end] or lines[end][0] in " \t)"):
        end += 1
    while not lines[end - 1].strip():
        end -= 1
    return start + 1, end

"""``python -m tests.support.prefetch`` installs every npm peer the tests use.

Reads the tests' source: every ``npm_package``/``npm_bin`` call names a package (a literal, or a
module-level constant) that the prefetch list has, at the same version where the call gives one;
every conformance suite version ``run_suite`` runs is in it too.
"""

from __future__ import annotations

import ast
import contextlib
from pathlib import Path

from .support.prefetch import NPM

TESTS = Path(__file__).resolve().parent
CONFORMANCE = "@modelcontextprotocol/conformance"  # tests/e2e/test_conformance.run_suite(version, ...)
SKIP = {TESTS / "support" / "npm.py", TESTS / "support" / "prefetch.py"}


def _constants(tree: ast.Module) -> dict[str, object]:
    out: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            with contextlib.suppress(ValueError):
                out[node.targets[0].id] = ast.literal_eval(node.value)
    return out


def _args(call: ast.Call, constants: dict[str, object]) -> list[object]:
    values: list[object] = []
    for arg in call.args:
        if isinstance(arg, ast.Starred) and isinstance(arg.value, ast.Name):
            values += list(constants.get(arg.value.id, ()))  # type: ignore[call-overload]
        elif isinstance(arg, ast.Constant):
            values.append(arg.value)
        elif isinstance(arg, ast.Name):
            values.append(constants.get(arg.id))  # None: a parameter, not known here
        else:
            values.append(None)
    return values


def npm_calls() -> list[tuple[str, str, str | None]]:
    """(file, package, version or None) of every npm_package/npm_bin call in the tests."""
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        if path in SKIP:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        constants = _constants(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("npm_package", "npm_bin"):
                args = _args(node, constants)
                version = args[1] if len(args) > 1 and isinstance(args[1], str) else None
                found.append((path.relative_to(TESTS).as_posix(), str(args[0]), version))
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "run_suite":  # conformance
                version = _args(node, constants)[0]
                found.append((path.relative_to(TESTS).as_posix(), CONFORMANCE, version))  # type: ignore[arg-type]
    return found


def test_every_npm_peer_of_the_tests_is_prefetched() -> None:
    calls = npm_calls()
    assert len(calls) >= 6  # the scan finds the calls (Inspector, SDK, conformance, ext-apps, esbuild)
    listed = {(name, version) for name, version, _ in NPM}
    names = {name for name, _ in listed}
    for where, package, version in calls:
        assert package in names, f"{where} installs {package}: add it to tests/support/prefetch.NPM"
        if version is not None:
            assert (package, version) in listed, f"{where} installs {package}@{version}: update prefetch.NPM"

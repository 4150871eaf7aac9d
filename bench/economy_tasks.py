"""The tasks of ``bench_economy.py``, step by step for each peer, and the session that counts and checks them.

A :class:`Session` holds one peer's clients on one task; ``Session.call`` makes a tool call, notes the
compact size of its result as received, and checks the answer (strings it must or must not hold, and
the state of the workspace afterwards): anything else raises :class:`StepFailed` with what came back.
Each task has one script per peer, using the tools that peer offers for each step, as an assistant
would; positions and line ranges come from the fixture's own text, never from a result's shape.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import economy_fixtures as fx
from economy_peers import Wire

CALL_TIMEOUT = 180.0


class StepFailed(Exception):
    """A step did not do what the task needs; the message says which peer, step and tool, and what came back."""


@dataclass
class Call:
    step: str
    server: str
    tool: str
    size: int
    content_size: int


@dataclass
class Listing:
    server: str
    tools: int
    size: int


@dataclass
class Outcome:
    """One peer on one task."""

    peer: str
    task: str
    calls: list[Call] = field(default_factory=list)
    listings: list[Listing] = field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None

    @property
    def size(self) -> int:
        return sum(c.size for c in self.calls)

    @property
    def content_size(self) -> int:
        return sum(c.content_size for c in self.calls)

    def steps(self) -> dict[str, tuple[int, int]]:
        out: dict[str, tuple[int, int]] = {}
        for c in self.calls:
            size, n = out.get(c.step, (0, 0))
            out[c.step] = (size + c.size, n + 1)
        return out


class Session:
    """The clients of one peer on one task, and what their calls cost."""

    def __init__(self, outcome: Outcome, verbose: bool) -> None:
        self.outcome = outcome
        self.verbose = verbose
        self.clients: dict[str, tuple[Any, Wire]] = {}
        self.step = ""

    async def call(
        self,
        server: str,
        tool: str,
        args: dict[str, Any],
        *,
        expect: str | Sequence[str] | None = None,
        reject: str | Sequence[str] | None = None,
        disk: Callable[[], bool] | None = None,
    ) -> str:
        """Call ``tool`` on ``server``; the result's text (text blocks and structured content) when it
        holds every ``expect`` string, none of the ``reject`` ones, and ``disk()`` holds afterwards."""
        client, wire = self.clients[server]
        since = len(wire.order)
        where = f"{self.outcome.peer} / {self.outcome.task} / step '{self.step}' / {server}.{tool}"
        try:
            with anyio.fail_after(CALL_TIMEOUT):
                result = await client.call_tool(tool, args)
        except TimeoutError:
            raise StepFailed(f"{where}: no answer in {CALL_TIMEOUT:.0f} s") from None
        except Exception as exc:  # the client raises McpError and friends for protocol errors
            raise StepFailed(f"{where}: the call raised {type(exc).__name__}: {exc}") from None
        size = sum(wire.take("tools/call", since))
        content_size = sum(wire.take_content("tools/call", since))
        self.outcome.calls.append(Call(self.step, server, tool, size, content_size))
        parts = [getattr(block, "text", "") for block in result.content]
        if result.structured_content is not None:
            parts.append(json.dumps(result.structured_content, ensure_ascii=False))
        text = "\n".join(parts)
        if self.verbose:
            print(f"    [{size:>6} B] {server}.{tool}: {text[:160]!r}", flush=True)
        if result.is_error:
            raise StepFailed(f"{where}: the tool answered an error:\n{text[:1500]}")
        self.check(text, expect=expect, reject=reject, disk=disk, where=where)
        return text

    def check(
        self,
        text: str,
        *,
        expect: str | Sequence[str] | None = None,
        reject: str | Sequence[str] | None = None,
        disk: Callable[[], bool] | None = None,
        where: str = "",
    ) -> None:
        """Raise StepFailed unless ``text`` holds every ``expect``, no ``reject``, and ``disk()`` holds."""
        where = where or f"{self.outcome.peer} / {self.outcome.task} / step '{self.step}'"
        for wanted in [expect] if isinstance(expect, str) else expect or []:
            if wanted not in text:
                raise StepFailed(f"{where}: the answer lacks {wanted!r}:\n{text[:1500]}")
        for unwanted in [reject] if isinstance(reject, str) else reject or []:
            if unwanted in text:
                raise StepFailed(f"{where}: the answer holds {unwanted!r}:\n{text[:1500]}")
        if disk is not None:
            try:
                ok = disk()
            except Exception as exc:
                raise StepFailed(f"{where}: checking the workspace raised {exc!r}:\n{text[:1500]}") from None
            if not ok:
                raise StepFailed(f"{where}: the workspace is not as the step should leave it:\n{text[:1500]}")


# ---------------------------------------------------------------------------------------------------
# checks on disk


def source_of(root: Path, rel: str) -> str:
    return (root / rel).read_text()


def fixed(root: Path) -> Callable[[], bool]:
    return lambda: (
        fx.FIX in source_of(root, "shop/pricing.py") and fx.BUG not in source_of(root, "shop/pricing.py")
    )


SHOP_FILES = ("shop/pricing.py", "shop/cart.py", "shop/receipt.py", "tests/test_pricing.py")


def renamed(root: Path) -> Callable[[], bool]:
    def check() -> bool:
        texts = [source_of(root, rel) for rel in SHOP_FILES]
        return all(fx.OLD_NAME not in t and fx.NEW_NAME in t for t in texts)

    return check


def committed(root: Path) -> Callable[[], bool]:
    return lambda: (
        fx.git(root, "status", "--porcelain") == "" and fx.git(root, "rev-list", "--count", "HEAD") == "2\n"
    )


def h11_fixed(root: Path) -> Callable[[], bool]:
    def check() -> bool:
        text = source_of(root, "src/h11/_headers.py")
        compile(text, "_headers.py", "exec")  # a SyntaxError here is a broken edit: the step fails
        return fx.H11_BUG_AFTER + fx.H11_BUG_LINE in text

    return check


COMMIT_MESSAGE = "Apply the discount as a reduction; rename compute_total to order_total"
FAILED_3 = "3 failed, 2 passed"
PASSED_5 = "5 passed"


def rename_edits(root: Path, rel: str) -> list[dict[str, str]]:
    """The edits that rename the function in one file, line by line (what an assistant writes from the
    search results' lines)."""
    lines = [line for line in source_of(root, rel).splitlines() if fx.OLD_NAME in line]
    return [{"oldText": line, "newText": line.replace(fx.OLD_NAME, fx.NEW_NAME)} for line in lines]


# ---------------------------------------------------------------------------------------------------
# T1: search, outline, read, test, fix, rename, test, status, commit, diff


async def t1_ours(s: Session, root: Path) -> None:
    rel = "shop/pricing.py"
    s.step = "search definition"
    await s.call("ide", "search_in_files_content", {"searchText": f"def {fx.OLD_NAME}"}, expect=rel)
    s.step = "outline file"
    await s.call(
        "ide", "get_symbols_in_file", {"pathInProject": rel}, expect=[fx.OLD_NAME, "subtotal", "Item"]
    )
    s.step = "read function"
    first, last = fx.span(root, rel, f"def {fx.OLD_NAME}")
    await s.call(
        "ide", "project_fs_read", {"path": rel, "startLine": first, "endLine": last}, expect=fx.BUG.strip()
    )
    s.step = "run tests (fail)"
    await s.call("ide", "run_command_on_background", {"command": fx.PYTEST}, expect=FAILED_3)
    s.step = "fix bug"
    await s.call(
        "ide",
        "replace_specific_text",
        {"pathInProject": rel, "searchText": fx.BUG.strip(), "replaceText": fx.FIX.strip()},
        disk=fixed(root),
    )
    s.step = "rename across files"
    line, char = fx.position(root, rel, f"def {fx.OLD_NAME}", word=fx.OLD_NAME)
    await s.call(
        "ide",
        "refactor_code_at_location",
        {
            "pathInProject": rel,
            "line": line,
            "character": char,
            "refactorType": "rename",
            "options": {"newName": fx.NEW_NAME},
        },
        disk=renamed(root),
    )
    s.step = "run tests (pass)"
    await s.call("ide", "run_command_on_background", {"command": fx.PYTEST}, expect=PASSED_5, reject="failed")
    s.step = "git status"
    await s.call("ide", "get_project_vcs_status", {}, expect=SHOP_FILES[:2])
    s.step = "commit"
    await s.call(
        "ide", "commit_changes", {"message": COMMIT_MESSAGE, "files": ["shop", "tests"]}, disk=committed(root)
    )
    s.step = "diff commit"
    await s.call(
        "ide",
        "get_file_diff",
        {"pathInProject": ".", "commit2": "HEAD"},
        expect=[fx.NEW_NAME, fx.FIX.strip()],
    )


async def t1_serena(s: Session, root: Path) -> None:
    rel = "shop/pricing.py"
    s.step = "search definition"
    await s.call("serena", "find_symbol", {"name_path_pattern": fx.OLD_NAME}, expect=rel)
    s.step = "outline file"
    await s.call(
        "serena", "get_symbols_overview", {"relative_path": rel}, expect=[fx.OLD_NAME, "subtotal", "Item"]
    )
    s.step = "read function"
    await s.call(
        "serena",
        "find_symbol",
        {"name_path_pattern": fx.OLD_NAME, "relative_path": rel, "include_body": True},
        expect=fx.BUG.strip(),
    )
    s.step = "run tests (fail)"
    await s.call("serena", "execute_shell_command", {"command": fx.PYTEST}, expect=FAILED_3)
    s.step = "fix bug"
    await s.call(
        "serena",
        "replace_content",
        {"relative_path": rel, "needle": fx.BUG.strip(), "repl": fx.FIX.strip(), "mode": "literal"},
        disk=fixed(root),
    )
    s.step = "rename across files"
    await s.call(
        "serena",
        "rename_symbol",
        {"name_path": fx.OLD_NAME, "relative_path": rel, "new_name": fx.NEW_NAME},
        disk=renamed(root),
    )
    s.step = "run tests (pass)"
    await s.call("serena", "execute_shell_command", {"command": fx.PYTEST}, expect=PASSED_5, reject="failed")
    s.step = "git status"
    await s.call("serena", "execute_shell_command", {"command": "git status --short"}, expect=SHOP_FILES[:2])
    s.step = "commit"
    await s.call(
        "serena",
        "execute_shell_command",
        {"command": f"git add -A && git commit -q -m '{COMMIT_MESSAGE}'"},
        disk=committed(root),
    )
    s.step = "diff commit"
    await s.call(
        "serena", "execute_shell_command", {"command": "git show HEAD"}, expect=[fx.NEW_NAME, fx.FIX.strip()]
    )


async def dc_search(s: Session, root: Path, pattern: str, expect: str | Sequence[str], path: str = "") -> str:
    """A content search through Desktop Commander: ``git grep`` in its shell. (Its own ``start_search``
    answers after at most 40 ms with whatever ripgrep found by then, so its answer, and whether a
    ``get_more_search_results`` call is needed, changes from run to run.)"""
    where = f" -- {path}" if path else ""
    return await dc_run(s, f"git grep -n -F {shlex.quote(pattern)}{where}", expect=expect)


async def dc_run(s: Session, command: str, **checks: Any) -> str:
    """A command through Desktop Commander: ``start_process``, then ``read_process_output`` for as long as
    it says the process is still running (it returns early when the output pauses, e.g. between pytest's
    progress line and its summary, taking that for a prompt). The checks apply to all the output."""
    text = await s.call("commander", "start_process", {"command": command, "timeout_ms": 60000})
    pid = re.search(r"PID (-?\d+)", text)
    if pid is None:
        raise StepFailed(
            f"{s.outcome.peer} / {s.outcome.task} / {s.step}: no PID in the answer:\n{text[:800]}"
        )
    read = {"pid": int(pid.group(1)), "timeout_ms": 5000}
    last = text
    if text.rstrip().endswith("Initial output:"):
        # It answers on the process's exit event, which can come before the output has been read: the
        # answer is then empty, and the output is read from the finished session.
        last = await s.call("commander", "read_process_output", read)
        text += last
    rounds = 0
    while ("🔄" in text or "⏳" in text) and "Process completed" not in last:
        rounds += 1
        if rounds > 20:
            raise StepFailed(f"{s.outcome.peer} / {s.outcome.task} / {s.step}: `{command}` still running")
        last = await s.call("commander", "read_process_output", read)
        text += last
    s.check(text, **checks)
    return text


async def t1_reference(s: Session, root: Path) -> None:
    rel = "shop/pricing.py"
    repo = {"repo_path": str(root)}
    s.step = "search definition"
    await dc_search(s, root, f"def {fx.OLD_NAME}", expect=rel)
    s.step = "outline file"  # no outline tool: read the file
    await s.call(
        "filesystem", "read_text_file", {"path": str(root / rel)}, expect=[fx.OLD_NAME, fx.BUG.strip()]
    )
    s.step = "read function"  # already read whole
    s.step = "run tests (fail)"
    await dc_run(s, fx.PYTEST, expect=FAILED_3)
    s.step = "fix bug"
    await s.call(
        "filesystem",
        "edit_file",
        {
            "path": str(root / rel),
            "edits": [{"oldText": fx.BUG.rstrip("\n"), "newText": fx.FIX.rstrip("\n")}],
        },
        disk=fixed(root),
    )
    s.step = "rename across files"
    await dc_search(s, root, fx.OLD_NAME, expect=list(SHOP_FILES))
    for file in SHOP_FILES:
        await s.call("filesystem", "edit_file", {"path": str(root / file), "edits": rename_edits(root, file)})
    if not renamed(root)():
        raise StepFailed(f"reference / T1 / rename: {fx.OLD_NAME} is still in the files")
    s.step = "run tests (pass)"
    await dc_run(s, fx.PYTEST, expect=PASSED_5, reject="failed")
    s.step = "git status"
    await s.call("git", "git_status", repo, expect=SHOP_FILES[:2])
    s.step = "commit"
    await s.call("git", "git_add", {**repo, "files": list(SHOP_FILES)})
    await s.call("git", "git_commit", {**repo, "message": COMMIT_MESSAGE}, disk=committed(root))
    s.step = "diff commit"
    await s.call("git", "git_show", {**repo, "revision": "HEAD"}, expect=[fx.NEW_NAME, fx.FIX.strip()])


# ---------------------------------------------------------------------------------------------------
# T2: review a branch: diff, context, references, problems


async def t2_ours(s: Session, root: Path) -> None:
    rel = "shop/pricing.py"
    s.step = "branch diff"
    await s.call(
        "ide",
        "get_file_diff",
        {"pathInProject": ".", "commit1": "main", "commit2": "HEAD"},
        expect=fx.UNDEFINED,
    )
    s.step = "changed function"
    first, last = fx.span(root, rel, "def subtotal")
    await s.call(
        "ide", "project_fs_read", {"path": rel, "startLine": first, "endLine": last}, expect=fx.UNDEFINED
    )
    s.step = "references"
    line, char = fx.position(root, rel, "def subtotal", word="subtotal")
    await s.call(
        "ide",
        "find_references",
        {"pathInProject": rel, "line": line, "character": char},
        expect="tests/test_pricing.py",
    )
    s.step = "problems"
    await s.call("ide", "get_file_problems", {"pathInProject": rel}, expect=fx.UNDEFINED)


async def t2_serena(s: Session, root: Path) -> None:
    rel = "shop/pricing.py"
    s.step = "branch diff"
    await s.call("serena", "execute_shell_command", {"command": "git diff main...HEAD"}, expect=fx.UNDEFINED)
    s.step = "changed function"
    await s.call(
        "serena",
        "find_symbol",
        {"name_path_pattern": "subtotal", "relative_path": rel, "include_body": True},
        expect=fx.UNDEFINED,
    )
    s.step = "references"
    await s.call(
        "serena",
        "find_referencing_symbols",
        {"name_path": "subtotal", "relative_path": rel},
        expect="test_pricing",
    )
    s.step = "problems"
    await s.call("serena", "get_diagnostics_for_file", {"relative_path": rel}, expect=fx.UNDEFINED)


async def t2_reference(s: Session, root: Path) -> None:
    rel = "shop/pricing.py"
    s.step = "branch diff"
    await s.call("git", "git_diff", {"repo_path": str(root), "target": "main"}, expect=fx.UNDEFINED)
    s.step = "changed function"
    await s.call("filesystem", "read_text_file", {"path": str(root / rel)}, expect=fx.UNDEFINED)
    s.step = "references"
    await dc_search(s, root, "subtotal(", expect="test_pricing.py")
    s.step = "problems"
    await dc_run(s, f"{fx.PYTHON} -m ruff check {rel}", expect=fx.UNDEFINED)


# ---------------------------------------------------------------------------------------------------
# T3: failing-test hunt in h11


H11_CONNECTION = "src/h11/_connection.py"
H11_HEADERS = "src/h11/_headers.py"
H11_PASS = "4 passed"
H11_FAIL = "1 failed, 3 passed"


async def t3_ours(s: Session, root: Path) -> None:
    s.step = "run tests"
    await s.call(
        "ide",
        "run_command_on_background",
        {"command": f"{fx.PYTEST} --tb=no"},
        expect=[fx.H11_FAILING, H11_FAIL],
    )
    s.step = "read traceback"
    await s.call(
        "ide", "run_command_on_background", {"command": f"{fx.PYTEST} {fx.H11_FAILING}"}, expect="MUST_CLOSE"
    )
    s.step = "search code"
    await s.call(
        "ide",
        "search_in_files_content",
        {"searchText": 'b"close"', "include": "src/**"},
        expect=H11_CONNECTION,
    )
    s.step = "read code"
    first, last = fx.span(root, H11_CONNECTION, "def _keep_alive")
    await s.call(
        "ide",
        "project_fs_read",
        {"path": H11_CONNECTION, "startLine": first, "endLine": last},
        expect="get_comma_header",
    )
    s.step = "go to helper"
    line, char = fx.position(root, H11_CONNECTION, 'get_comma_header(event.headers, b"connection")')
    await s.call(
        "ide",
        "go_to_definition",
        {"pathInProject": H11_CONNECTION, "line": line, "character": char},
        expect="_headers.py",
    )
    s.step = "read helper"
    first, last = fx.span(root, H11_HEADERS, "def get_comma_header")
    await s.call(
        "ide",
        "project_fs_read",
        {"path": H11_HEADERS, "startLine": first, "endLine": last},
        expect="found_raw_value",
    )
    s.step = "fix bug"
    await s.call(
        "ide",
        "replace_specific_text",
        {"pathInProject": H11_HEADERS, "searchText": fx.H11_BUG_AFTER.strip(), "replaceText": h11_fix_text()},
        disk=h11_fixed(root),
    )
    s.step = "rerun tests"
    await s.call("ide", "run_command_on_background", {"command": fx.PYTEST}, expect=H11_PASS, reject="failed")


def h11_fix_text() -> str:
    """What replaces the ``if found_name == name:`` line: itself and the lower-casing line restored."""
    return fx.H11_BUG_AFTER.strip() + "\n" + fx.H11_BUG_LINE.rstrip("\n")


async def t3_serena(s: Session, root: Path) -> None:
    s.step = "run tests"
    await s.call(
        "serena",
        "execute_shell_command",
        {"command": f"{fx.PYTEST} --tb=no"},
        expect=[fx.H11_FAILING, H11_FAIL],
    )
    s.step = "read traceback"
    await s.call(
        "serena", "execute_shell_command", {"command": f"{fx.PYTEST} {fx.H11_FAILING}"}, expect="MUST_CLOSE"
    )
    s.step = "search code"
    await s.call(
        "serena",
        "search_for_pattern",
        {"substring_pattern": 'b"close"', "relative_path": "src"},
        expect="_connection.py",
    )
    s.step = "read code"
    await s.call(
        "serena",
        "find_symbol",
        {"name_path_pattern": "_keep_alive", "relative_path": H11_CONNECTION, "include_body": True},
        expect="get_comma_header",
    )
    s.step = "go to helper"  # finding the symbol by name brings its body too
    await s.call(
        "serena",
        "find_symbol",
        {"name_path_pattern": "get_comma_header", "relative_path": "src", "include_body": True},
        expect="found_raw_value",
    )
    s.step = "read helper"  # already read with the definition
    s.step = "fix bug"
    await s.call(
        "serena",
        "replace_content",
        {
            "relative_path": H11_HEADERS,
            "needle": fx.H11_BUG_AFTER.strip(),
            "repl": h11_fix_text(),
            "mode": "literal",
        },
        disk=h11_fixed(root),
    )
    s.step = "rerun tests"
    await s.call("serena", "execute_shell_command", {"command": fx.PYTEST}, expect=H11_PASS, reject="failed")


async def t3_reference(s: Session, root: Path) -> None:
    s.step = "run tests"
    await dc_run(s, f"{fx.PYTEST} --tb=no", expect=[fx.H11_FAILING, H11_FAIL])
    s.step = "read traceback"
    await dc_run(s, f"{fx.PYTEST} {fx.H11_FAILING}", expect="MUST_CLOSE")
    s.step = "search code"
    await dc_search(s, root, 'b"close"', expect="_connection.py", path="src")
    s.step = "read code"  # the file's head, down to the end of the function the search pointed at
    _, last = fx.span(root, H11_CONNECTION, "def _keep_alive")
    await s.call(
        "filesystem",
        "read_text_file",
        {"path": str(root / H11_CONNECTION), "head": last},
        expect="_keep_alive",
    )
    s.step = "go to helper"
    await dc_search(s, root, "def get_comma_header", expect="_headers.py", path="src")
    s.step = "read helper"
    _, last = fx.span(root, H11_HEADERS, "def get_comma_header")
    await s.call(
        "filesystem",
        "read_text_file",
        {"path": str(root / H11_HEADERS), "head": last},
        expect="found_raw_value",
    )
    s.step = "fix bug"
    await s.call(
        "filesystem",
        "edit_file",
        {
            "path": str(root / H11_HEADERS),
            "edits": [
                {
                    "oldText": fx.H11_BUG_AFTER.rstrip("\n"),
                    "newText": (fx.H11_BUG_AFTER + fx.H11_BUG_LINE).rstrip("\n"),
                }
            ],
        },
        disk=h11_fixed(root),
    )
    s.step = "rerun tests"
    await dc_run(s, fx.PYTEST, expect=H11_PASS, reject="failed")


SCRIPTS: dict[str, dict[str, Callable[[Session, Path], Awaitable[None]]]] = {
    "T1": {"ours": t1_ours, "serena": t1_serena, "reference": t1_reference},
    "T2": {"ours": t2_ours, "serena": t2_serena, "reference": t2_reference},
    "T3": {"ours": t3_ours, "serena": t3_serena, "reference": t3_reference},
}
FIXTURES: dict[str, Callable[[Path], Path]] = {"T1": fx.shop, "T2": fx.shop_review, "T3": fx.h11_hunt}

"""SECURITY.md §1, the path sandbox, attacked through the real doors.

Every tool that takes a path (file, search and project_fs tools, found from the registry so later
ones are covered too) is aimed at paths that leave the workspace: ``..`` climbs, absolute paths, a
sibling folder that shares the root's name as a prefix (created for real), symlinks out (to a
file, to ``/``, to ``/proc/self/root``, dangling), NUL bytes, backslashes, FIFOs and devices,
symlink loops and very long paths. Each must be refused with a message naming the rule, with the
same text whether or not the target exists, without echoing a host path outside the workspace,
without blocking and without crashing. URL-encoded and Unicode look-alikes must be taken
literally (inside the workspace). Recursive walks never follow links out and never loop.

Writes never aim at real system files: their targets outside the workspace are files in the test's
own tmp folder, or names in /etc that do not exist (checked to still not exist afterwards).
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import anyio
import httpx
import pytest

from .support.security import (
    CORE_CATEGORIES,
    args_for,
    data_of,
    host_leaks,
    is_crash,
    path_key,
    registered_specs,
    result_text,
    snapshot,
)

pytestmark = pytest.mark.anyio

PROBE = f"mcp-ide-probe-{uuid.uuid4().hex[:10]}"


def _path_tools() -> list[Any]:
    from mcp_server_ide.runner import ToolRunner

    specs = [s for s in registered_specs() if s.category in CORE_CATEGORIES]
    runner = ToolRunner(specs, lambda *a: None)  # type: ignore[arg-type,return-value]
    return [s for s in specs if path_key(runner.input_schema(s.name))]


PATH_TOOLS = _path_tools()
PATH_TOOL_NAMES = [s.name for s in PATH_TOOLS]
MUTATING = {s.name for s in PATH_TOOLS if not s.read_only}


class Arena:
    """A workspace with every kind of way out, and things outside it to protect."""

    def __init__(self, base: Path, ws: Path) -> None:
        self.base, self.ws = base, ws
        (ws / "a.txt").write_text("hello root\n")
        (ws / "src").mkdir()
        (ws / "src/app.py").write_text("print('root')\n")
        (ws / "sub").mkdir()
        (ws / "sub/inner.txt").write_text("inner\n")
        self.sibling = base / (ws.name + "_evil")  # prefix bypass: <root>_evil
        self.sibling.mkdir()
        (self.sibling / "x").write_text("EVIL-SECRET root\n")
        self.outside = base / "outside"
        self.outside.mkdir()
        (self.outside / "secret.txt").write_text("OUTSIDE-SECRET root\n")
        links = {
            "leak": "/etc/passwd",
            "leak_missing": f"/etc/{PROBE}",
            "d": "/",
            "ev": f"../{self.sibling.name}",
            "out": str(self.outside),
            "leak_out": str(self.outside / "secret.txt"),
            "dl_out": str(self.outside / "not-yet.txt"),
            "p": "/proc/self/root",
            "z": "/dev/zero",
            "loop1": "loop2",
            "loop2": "loop1",
            "self": "self",
            "sub/up": "..",
            "sub/upup": "../..",
        }
        for name, target in links.items():
            os.symlink(target, ws / name)
        os.mkfifo(ws / "fifo")
        self.has_device = True
        try:
            os.mknod(ws / "zero", stat.S_IFCHR | 0o666, os.makedev(1, 5))
        except (PermissionError, OSError):
            self.has_device = False
        self.before = self.outside_state()

    def outside_state(self) -> dict[str, Any]:
        state = snapshot(self.base, skip=self.ws)
        return {k: v for k, v in state.items() if not k.startswith("server-")}

    def fmt(self, path: str) -> str:
        return path.format(ws=self.ws, sib=self.sibling, out=self.outside, base=self.base, probe=PROBE)

    def forbidden(self) -> list[str]:
        return [str(self.base), str(self.sibling), str(self.outside), "/etc/", "/proc/", "/dev/"]

    def check_untouched(self) -> None:
        assert self.outside_state() == self.before, "something outside the workspace changed"
        assert not os.path.lexists(f"/etc/{PROBE}"), "a write reached /etc"
        assert not os.path.lexists(f"/{PROBE}")


@pytest.fixture
def arena(ws_path: Path) -> Arena:
    return Arena(ws_path.parent, ws_path)


# Paths that leave the workspace. Read tools get all of them; write tools get the ones whose
# outside target is harmless (tmp files, names that do not exist in /etc).
OUTSIDE_READ = [
    "../../etc/passwd",
    "src/../../etc/passwd",
    "/etc/passwd",
    "//etc/passwd",
    "/./etc/passwd",
    "/etc/../etc/passwd",
    "../{sib.name}/x",
    "{sib}/x",
    "{ws}_evil/x",
    "{ws}/../{sib.name}/x",
    "{ws}/../../../../etc/passwd",
    "ev/x",
    "ev",
    "leak",
    "leak_missing",
    "d",
    "d/etc/passwd",
    "d/etc/shadow",
    "/proc/self/root/etc/passwd",
    "/proc/self/cwd",
    "/proc/self/environ",
    "p/etc/passwd",
    "/dev/zero",
    "z",
    "..\\..\\etc\\passwd",
    "src\\..\\..\\etc\\passwd",
    "..\\{sib.name}\\x",
    "out",
    "out/secret.txt",
    "leak_out",
    "dl_out",
    "sub/upup",
    "sub/upup/{sib.name}/x",
    "/workspace/../etc/passwd",
    "/workspace/../../etc/passwd",
    "/workspace/../{sib.name}/x",
    "./../{sib.name}/x",
    "a.txt/../../{sib.name}/x",
    "src/./../../{sib.name}/x",
    "..",
    "../",
    "/..",
    "/tmp",
    "~/../../etc/passwd",
    "../" * 60 + "etc/passwd",
    "/" + "../" * 60 + "etc/passwd",
    "a\x00.txt",
    "src/app.py\x00/../../../etc/passwd",
    "\x00",
    "\\\\evil\\share\\x",  # a UNC path
    "C:\\..\\..\\etc\\passwd",
    "sub/up/../../etc/passwd",  # lexically inside, really out (sub/up is the root)
    "sub/up/../a.txt",
]

OUTSIDE_WRITE = [
    "../../etc/{probe}",
    "src/../../{probe}",
    "/etc/{probe}",
    "//etc/{probe}",
    "/{probe}",
    "../{sib.name}/x",
    "../{sib.name}/{probe}",
    "{sib}/x",
    "{sib}/{probe}",
    "{ws}_evil/x",
    "{ws}/../{sib.name}/x",
    "ev/x",
    "ev/{probe}",
    "ev/new/{probe}",
    "leak_out",
    "dl_out",
    "d/etc/{probe}",
    "d{out}/secret.txt",
    "d{out}/{probe}",
    "/proc/self/root/etc/{probe}",
    "p/etc/{probe}",
    "p{out}/secret.txt",
    "..\\{sib.name}\\x",
    "out/secret.txt",
    "out/{probe}",
    "out/newdir/{probe}",
    "{out}/secret.txt",
    "sub/upup/{sib.name}/x",
    "sub/upup/outside/secret.txt",
    "/workspace/../{sib.name}/x",
    "a.txt/../../{sib.name}/x",
    "./../{sib.name}/x",
    "..",
    "/..",
    "../" * 60 + "etc/{probe}",
    "/dev/zero",
    "/dev/null",
    "z",
    "a\x00.txt",
    "src/{probe}\x00/../../x",
]

# Taken literally: a folder named '%2e%2e' or '．．' is just a folder inside the workspace.
LITERAL = [
    "%2e%2e/%2e%2e/etc/passwd",
    "..%2f..%2fetc%2fpasswd",
    "%252e%252e/%252e%252e/etc/passwd",
    "\u2025/etc/passwd",  # two dot leader
    "\uff0e\uff0e/\uff0e\uff0e/etc/passwd",  # fullwidth full stops (NFKC would make '..')
    "..\u2215..\u2215etc\u2215passwd",  # division slash
    "..\u2044..\u2044etc\u2044passwd",  # fraction slash
    "\u2024\u2024/\u2024\u2024/etc/passwd",  # one dot leaders
    ".\u200b./.\u200b./etc/passwd",  # zero-width space between the dots
    "..\uff0f..\uff0fetc\uff0fpasswd",  # fullwidth solidus
    "....//....//etc/passwd",
    ".../.../etc/passwd",
    "..;/..;/etc/passwd",
    "~/.ssh/id_rsa",
    "$HOME/.bashrc",
    "file:///etc/passwd",
    " ../../etc/passwd",
]


async def _call(client: Any, tool: str, args: dict[str, Any], timeout: float = 15) -> Any:
    with anyio.fail_after(timeout):
        return await client.call_tool(tool, args)


def _schemas() -> dict[str, dict[str, Any]]:
    from mcp_server_ide.runner import ToolRunner

    runner = ToolRunner(PATH_TOOLS, lambda *a: None)  # type: ignore[arg-type,return-value]
    return {s.name: runner.input_schema(s.name) for s in PATH_TOOLS}


SCHEMAS = _schemas()


def _refusal_ok(tool: str, attack: str, result: Any, arena: Arena) -> str:
    text = result_text(result)
    where = f"{tool}({attack!r})"
    assert result.is_error, f"{where} was not refused: {text[:300]}"
    assert not is_crash(tool, text), f"{where} crashed the tool: {text}"
    assert "rule:" in text, f"{where} refusal does not name its rule: {text}"
    leaks = host_leaks(text, ws=arena.ws, forbidden=arena.forbidden(), echo=attack)
    assert not leaks, f"{where} leaked {leaks}: {text}"
    return text


def test_every_core_path_tool_is_covered() -> None:
    names = set(PATH_TOOL_NAMES)
    for expected in (
        "get_file_text_by_path",
        "list_files_in_folder",
        "rewrite_file_content",
        "create_new_file_with_text",
        "replace_file_content_at_position",
        "append_file_content",
        "replace_specific_text",
    ):
        assert expected in names
    project_fs = {s.name for s in registered_specs() if s.category == "project_fs"}
    assert project_fs <= names, "every project_fs tool takes a path and is attacked here"


@pytest.mark.parametrize("tool", PATH_TOOL_NAMES)
async def test_paths_out_of_the_workspace_are_refused(mcp, arena: Arena, tool: str) -> None:
    attacks = OUTSIDE_WRITE if tool in MUTATING else OUTSIDE_READ + OUTSIDE_WRITE
    async with mcp(arena.ws) as client:
        for raw in attacks:
            attack = arena.fmt(raw)
            result = await _call(client, tool, args_for(tool, SCHEMAS[tool], attack))
            _refusal_ok(tool, attack, result, arena)
    arena.check_untouched()


# Pairs (exists, does not exist) outside the workspace: the refusals must be the same text.
ORACLE_PAIRS_READ = [
    ("/etc/passwd", "/etc/{probe}"),
    ("/etc", "/{probe}"),
    ("d/etc/passwd", "d/etc/{probe}"),
    ("/proc/self/root/etc/passwd", "/proc/self/root/etc/{probe}"),
    ("../" * 40 + "etc/passwd", "../" * 40 + "etc/{probe}"),
    ("leak", "leak_missing"),
]
ORACLE_PAIRS_WRITE = [
    ("../{sib.name}/x", "../{sib.name}/{probe}"),
    ("../{sib.name}", "../{probe}"),
    ("{sib}/x", "{sib}/{probe}"),
    ("ev/x", "ev/{probe}"),
    ("out/secret.txt", "out/{probe}"),
    ("leak_out", "dl_out"),
    ("{out}/secret.txt", "{out}/{probe}"),
    ("sub/upup/outside/secret.txt", "sub/upup/outside/{probe}"),
]


@pytest.mark.parametrize("tool", PATH_TOOL_NAMES)
async def test_no_existence_oracle(mcp, arena: Arena, tool: str) -> None:
    pairs = ORACLE_PAIRS_WRITE + ([] if tool in MUTATING else ORACLE_PAIRS_READ)
    async with mcp(arena.ws) as client:
        for raw_a, raw_b in pairs:
            a, b = arena.fmt(raw_a), arena.fmt(raw_b)
            ra = await _call(client, tool, args_for(tool, SCHEMAS[tool], a))
            rb = await _call(client, tool, args_for(tool, SCHEMAS[tool], b))
            ta = _refusal_ok(tool, a, ra, arena).replace(repr(a), "<P>").replace(a, "<P>")
            tb = _refusal_ok(tool, b, rb, arena).replace(repr(b), "<P>").replace(b, "<P>")
            assert ta == tb, f"{tool}: {a!r} (exists) and {b!r} (missing) answer differently:\n{ta}\n{tb}"
    arena.check_untouched()


@pytest.mark.parametrize("tool", PATH_TOOL_NAMES)
async def test_lookalikes_are_taken_literally(mcp, arena: Arena, tool: str) -> None:
    async with mcp(arena.ws) as client:
        for attack in LITERAL:
            result = await _call(client, tool, args_for(tool, SCHEMAS[tool], attack))
            text = result_text(result)
            assert not is_crash(tool, text), f"{tool}({attack!r}) crashed: {text}"
            # The answer may name the literal path inside the workspace; never a host path outside.
            leaks = host_leaks(text, ws=arena.ws, forbidden=arena.forbidden()[:3], echo=attack)
            assert not leaks, f"{tool}({attack!r}) leaked {leaks}: {text}"
            if result.is_error:
                assert "outside the workspace" not in text, f"{tool}({attack!r}) was decoded: {text}"
    arena.check_untouched()
    # Whatever a write created is a literal name inside the workspace.
    for path in arena.ws.rglob("*"):
        assert os.path.realpath(path).startswith(str(arena.ws)) or path.is_symlink()


@pytest.mark.parametrize("tool", PATH_TOOL_NAMES)
async def test_fifos_and_devices_are_refused_without_blocking(mcp, arena: Arena, tool: str) -> None:
    targets = ["fifo", "z", "/dev/zero", "/dev/stdin", "/proc/self/fd/0", "fifo/x"]
    if arena.has_device:
        targets.append("zero")
    async with mcp(arena.ws) as client:
        for target in targets:
            result = await _call(client, tool, args_for(tool, SCHEMAS[tool], target), timeout=10)
            text = result_text(result)
            assert result.is_error, f"{tool}({target!r}) was not refused: {text[:300]}"
            assert not is_crash(tool, text), f"{tool}({target!r}) crashed: {text}"
            assert not host_leaks(text, ws=arena.ws, forbidden=arena.forbidden(), echo=target)
        # The FIFO and the device are still what they were: never replaced by a regular file.
        assert stat.S_ISFIFO((arena.ws / "fifo").lstat().st_mode)
        if arena.has_device:
            assert stat.S_ISCHR((arena.ws / "zero").lstat().st_mode)
    arena.check_untouched()


@pytest.mark.parametrize("tool", PATH_TOOL_NAMES)
async def test_symlink_loops_and_long_paths_fail_cleanly(mcp, arena: Arena, tool: str) -> None:
    deep_inside = "sub/up/" * 30 + "a.txt"  # a loop of links that stays inside: fine to follow
    targets = [
        "loop1",
        "loop2/x",
        "self",
        "self/x",
        "sub/up/" * 30 + "loop1",
        "a/" * 3000 + "x",
        "b" * 300,
        "c" * 5000 + "/x",
        "x/" * 40000,
        "../" * 5000 + "etc/passwd",
        "bad\ud800name.txt",  # a lone surrogate: no file name can hold it
    ]
    async with mcp(arena.ws) as client:
        for target in targets:
            result = await _call(client, tool, args_for(tool, SCHEMAS[tool], target), timeout=20)
            text = result_text(result)
            assert result.is_error, f"{tool}({target[:40]!r}…) was not refused: {text[:300]}"
            assert not is_crash(tool, text), f"{tool}({target[:40]!r}…) crashed: {text[:300]}"
            assert len(text) < 5000, f"{tool} echoed a {len(text)}-character answer for a long path"
            assert not host_leaks(text, ws=arena.ws, forbidden=arena.forbidden(), echo=target)
        if tool == "get_file_text_by_path":
            ok = await _call(client, tool, {"pathInProject": deep_inside})
            assert not ok.is_error and data_of(ok)["content"] == "hello root\n"
    assert os.path.islink(arena.ws / "loop1") and os.path.islink(arena.ws / "self")
    arena.check_untouched()


def _walk_tools() -> list[tuple[str, dict[str, Any]]]:
    names = {s.name for s in registered_specs()}
    calls: list[tuple[str, dict[str, Any]]] = [
        ("list_files_in_folder", {"pathInProject": "/"}),
        ("list_files_in_folder", {"pathInProject": "sub"}),
        ("list_files_in_folder", {"pathInProject": "sub/up"}),
    ]
    if "search_in_files_content" in names:
        for text in ("SECRET", "root:x:0", "root", "inner"):
            calls.append(("search_in_files_content", {"searchText": text}))
            calls.append(("search_in_files_content", {"searchText": text, "includeIgnored": True}))
        for glob in ("../**", "/etc/**", "d/**", "ev/**", "**/passwd", "out/*", "{sib}/**"):
            calls.append(("search_in_files_content", {"searchText": "root", "include": glob}))
        calls.append(
            ("search_in_files_content", {"searchText": "root:x:0", "isRegex": True, "include": ["**"]})
        )
    if "find_files_by_name_substring" in names:
        for text in ("passwd", "shadow", "secret", "x", "inner", "/etc/", "../", "etc/passwd"):
            calls.append(("find_files_by_name_substring", {"nameSubstring": text}))
            calls.append(("find_files_by_name_substring", {"nameSubstring": text, "includeIgnored": True}))
    if "project_fs_list" in names:
        key = "dir"
        calls += [
            ("project_fs_list", {}),
            ("project_fs_list", {"recursive": True}),
            ("project_fs_list", {key: "sub", "recursive": True}),
            ("project_fs_list", {key: "sub/up", "recursive": True}),
        ]
    return calls


async def test_recursive_walks_never_follow_links_out_nor_loop(mcp, arena: Arena) -> None:
    # More ways round and round: a link to the root from deep down, and a link to its own folder.
    (arena.ws / "sub/deeper/more").mkdir(parents=True)
    os.symlink("../../..", arena.ws / "sub/deeper/more/root")
    os.symlink(".", arena.ws / "sub/here")
    async with mcp(arena.ws) as client:
        for tool, args in _walk_tools():
            args = {k: arena.fmt(v) if isinstance(v, str) else v for k, v in args.items()}
            result = await _call(client, tool, args, timeout=60)
            text = result_text(result)
            where = f"{tool}({args})"
            assert not is_crash(tool, text), f"{where} crashed: {text[:300]}"
            leaks = host_leaks(text, ws=arena.ws, forbidden=arena.forbidden())
            assert not leaks, f"{where} leaked {leaks}: {text[:2000]}"
            for bad in ("d/etc", "d/proc", "ev/x", "out/secret", "sub/upup/", "p/etc"):
                assert bad not in text.replace("\\", "/"), f"{where} walked a link out ({bad}): {text[:2000]}"
            # A walk through `sub/up` (-> root) would repeat paths forever; at most one level shows.
            assert "sub/up/sub/up" not in text.replace("\\", "/"), f"{where} followed a link loop"
            assert "sub/here/sub/here" not in text.replace("\\", "/")
        # The folder listing shows a link out as a bare symlink: no size or type of its target,
        # and the same entry whether or not the target exists.
        listing = await _call(client, "list_files_in_folder", {"pathInProject": "/"})
        entries = {e["name"]: e for e in _items(listing)}
        for name in ("leak", "leak_missing", "leak_out", "dl_out", "d", "ev", "out", "p", "z"):
            shape = {k: v for k, v in entries[name].items() if k not in ("name", "path")}
            assert shape == {"type": "symlink"}, f"link out {name!r} listed as {entries[name]}"
        if "project_fs_list" in {s.name for s in registered_specs()}:
            listing = await _call(client, "project_fs_list", {})
            assert not listing.is_error, result_text(listing)
            by_path = {e["path"]: e for e in data_of(listing)["entries"]}
            shapes = {
                name: {k: v for k, v in by_path[name].items() if k != "path"}
                for name in ("leak", "leak_missing", "leak_out", "dl_out")
                if name in by_path
            }
            assert len({repr(s) for s in shapes.values()}) <= 1, f"links out differ: {shapes}"
            for name, shape in shapes.items():
                assert shape.get("size") in (None, 0), f"{name} shows its outside target's size: {shape}"
    arena.check_untouched()


async def test_names_that_are_not_utf8_never_break_an_answer(mcp, ws_path: Path) -> None:
    # A file name is bytes: a Latin-1 name from an old archive must not make a whole listing fail.
    raw = bytes(ws_path)
    os.makedirs(os.path.join(raw, b"d\xe9"))
    for name in (b"caf\xe9.txt", b"d\xe9/\xff\xfe.txt"):
        with open(os.path.join(raw, name), "wb") as fh:
            fh.write(b"root here\n")
    names = {s.name for s in registered_specs()}
    calls: list[tuple[str, dict[str, Any]]] = [
        ("list_files_in_folder", {"pathInProject": "/"}),
        ("list_files_in_folder", {"pathInProject": "d\udce9"}),
        ("get_file_text_by_path", {"pathInProject": "caf\udce9.txt"}),
        (
            "replace_specific_text",
            {"pathInProject": "caf\udce9.txt", "searchText": "here", "replaceText": "there"},
        ),
    ]
    if "project_fs_list" in names:
        calls += [
            ("project_fs_list", {"recursive": True}),
            ("project_fs_read", {"path": "d\udce9/\udcff\udcfe.txt"}),
        ]
    if "search_in_files_content" in names:
        calls += [
            ("search_in_files_content", {"searchText": "root"}),
            ("find_files_by_name_substring", {"nameSubstring": "caf"}),
        ]
    async with mcp(ws_path) as client:
        for tool, args in calls:
            result = await _call(client, tool, args)
            assert not result.is_error, f"{tool}({args}): {result_text(result)[:300]}"
            assert "\ufffd" in result_text(result) or tool in ("replace_specific_text", "project_fs_read")
        missing = await _call(client, "get_file_text_by_path", {"pathInProject": "nope\udce9.txt"})
        assert missing.is_error and not is_crash("get_file_text_by_path", result_text(missing))
    assert Path(os.fsdecode(os.path.join(raw, b"caf\xe9.txt"))).read_bytes() == b"root there\n"


SWAPPER = """
import os, sys
ws, out, stop = sys.argv[1], sys.argv[2], sys.argv[3]
sub, real = os.path.join(ws, "sub"), os.path.join(ws, "sub_real")
swaps = 0
while not os.path.exists(stop):
    swaps += 1
    try:
        os.rename(sub, real)
        os.symlink(out, sub)
        os.unlink(sub)
        os.rename(real, sub)
    except OSError:
        if os.path.islink(sub):
            os.unlink(sub)
        if os.path.isdir(real):
            try:
                os.rename(real, sub)
            except OSError:
                pass
print(swaps, flush=True)
"""


async def test_a_folder_swapped_for_a_link_mid_call_never_leads_outside(mcp, ws_path: Path) -> None:
    """Another process swaps `sub` between a real folder and a link to a folder outside, as fast as
    it can, while tools read, list and write under `sub`: no call may read, list or write outside
    (resolve-then-open races; each step is taken beneath the root without following links)."""
    outside = ws_path.parent / "outside"
    outside.mkdir()
    (outside / "inner.txt").write_text("OUTSIDE-SECRET\n")
    (outside / "only-outside.txt").write_text("OUTSIDE-SECRET\n")
    (ws_path / "sub").mkdir()
    (ws_path / "sub/inner.txt").write_text("inner\n")
    before = snapshot(outside)
    names = {s.name for s in registered_specs()}
    stop = ws_path.parent / "stop-swapping"
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(ws_path), str(outside), str(stop)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        async with mcp(ws_path) as client:
            # A fixed number of rounds, however loaded the machine: the swapper runs until they end.
            for calls in range(1, 61):
                batch = [
                    ("get_file_text_by_path", {"pathInProject": "sub/inner.txt"}),
                    ("list_files_in_folder", {"pathInProject": "sub"}),
                    ("create_new_file_with_text", {"pathInProject": f"sub/new{calls}.txt", "text": "x"}),
                    ("append_file_content", {"pathInProject": "sub/log.txt", "text": "x"}),
                    (
                        "replace_specific_text",
                        {"pathInProject": "sub/inner.txt", "searchText": "inner", "replaceText": "inner"},
                    ),
                ]
                if "project_fs_read" in names:
                    batch += [
                        ("project_fs_read", {"path": "sub/inner.txt"}),
                        ("project_fs_write", {"path": f"sub/pfs{calls}.txt", "content": "x"}),
                        ("project_fs_list", {"dir": "sub"}),
                    ]
                for tool, args in batch:
                    result = await _call(client, tool, args)
                    text = result_text(result)
                    assert not is_crash(tool, text), f"{tool} crashed in the race: {text[:300]}"
                    assert "OUTSIDE-SECRET" not in text and "only-outside" not in text, (
                        f"{tool} read outside: {text[:300]}"
                    )
    finally:
        stop.touch()
        swaps = int(swapper.communicate(timeout=30)[0] or 0)
    assert snapshot(outside) == before, "a write went outside through the swapped folder"
    assert swaps > calls, f"the swapper ran {swaps} rounds beside {calls} rounds of calls"


def _items(result: Any) -> list[dict[str, Any]]:
    data = data_of(result)
    if isinstance(data, dict) and "result" in data:
        data = data["result"]
    assert isinstance(data, list), data
    return data


OTHER_PATH_KEYS = ("pathInProject", "path", "cwd", "paths", "files")
OTHER_ATTACKS = [
    "../../etc/passwd",
    "/etc/passwd",
    "leak",
    "d/etc/passwd",
    "../{sib.name}/x",
    "ev/x",
    "out/secret.txt",
    "/proc/self/root/etc/passwd",
    "a\x00.txt",
    "d",
    "sub/upup",
]


def _other_path_tools() -> list[tuple[str, str]]:
    from mcp_server_ide.runner import ToolRunner

    specs = [s for s in registered_specs() if s.category not in CORE_CATEGORIES]
    runner = ToolRunner(specs, lambda *a: None)  # type: ignore[arg-type,return-value]
    found = []
    for spec in specs:
        props = runner.input_schema(spec.name).get("properties", {})
        found += [(spec.name, key) for key in OTHER_PATH_KEYS if key in props]
    return found


OTHER_PATH_TOOLS = _other_path_tools()


@pytest.mark.parametrize(("tool", "key"), OTHER_PATH_TOOLS, ids=[f"{t}.{k}" for t, k in OTHER_PATH_TOOLS])
async def test_every_other_path_parameter_stays_inside(mcp, arena: Arena, tool: str, key: str) -> None:
    """The same walls for the other tools that take a path (editor, code, git, journal, terminal cwd...)."""
    spec = next(s for s in registered_specs() if s.name == tool)
    async with mcp(arena.ws) as client:
        for raw in OTHER_ATTACKS:
            attack = arena.fmt(raw)
            args = dict(spec.example or {})
            args[key] = [attack] if key in ("paths", "files") else attack
            result = await _call(client, tool, args, timeout=60)
            text = result_text(result)
            where = f"{tool}({key}={attack!r})"
            assert not is_crash(tool, text), f"{where} crashed: {text[:300]}"
            leaks = host_leaks(text, ws=arena.ws, forbidden=arena.forbidden()[:3], echo=attack)
            assert not leaks, f"{where} leaked {leaks}: {text[:1000]}"
            assert result.is_error, f"{where} was not refused: {text[:300]}"
    arena.check_untouched()


RESOURCE_ATTACKS = [
    "file:///etc/passwd",
    "file://localhost/etc/passwd",
    "file:///etc/{probe}",
    "file://{ws}/../{sib.name}/x",
    "file://{ws}/%2e%2e/%2e%2e/etc/passwd",
    "file://{ws}/%2E%2E/{sib.name}/x",
    "file://{ws}_evil/x",
    "file://{ws}/leak",
    "file://{ws}/leak_missing",
    "file://{ws}/d/etc/shadow",
    "file://{ws}/ev/x",
    "file://{ws}/out/secret.txt",
    "file://{ws}/p/etc/passwd",
    "file:///proc/self/root/etc/passwd",
    "file://{ws}/fifo",
    "file://{ws}/z",
    "file:///dev/zero",
    "file://{ws}/a%00.txt",
    "file://{ws}/loop1",
    "file://{ws}/" + "a/" * 3000,
    "file://evil.com/etc/passwd",
    "file:etc/passwd",
    "FILE:///etc/passwd",
    "file:///{ws}/..%2f..%2fetc%2fpasswd",
    "ide://../../etc/passwd",
]


async def test_file_resources_stay_inside(mcp, arena: Arena) -> None:
    async with mcp(arena.ws) as client:
        answers: dict[str, str] = {}
        for raw in RESOURCE_ATTACKS:
            uri = arena.fmt(raw)
            try:
                with anyio.fail_after(10):
                    result = await client.read_resource(uri)
            except TimeoutError:
                raise AssertionError(f"resources/read {uri!r} blocked") from None
            except Exception as exc:  # the JSON-RPC error the client raises
                text = str(exc)
            else:
                raise AssertionError(f"resources/read {uri!r} was answered: {str(result)[:300]}")
            # The caller's own URI (or the path in it, %-decoded) may be echoed; nothing else.
            for form in (uri, unquote(uri)):
                text = text.replace(form, "<URI>").replace(form[len("file://") :], "<P>")
            leaks = host_leaks(text, ws=arena.ws, forbidden=arena.forbidden()[:3])
            assert not leaks, f"resources/read {uri!r} leaked {leaks}: {text}"
            answers[raw] = text.replace(PROBE, "passwd")
        # No existence oracle: a real /etc/passwd and a missing name answer alike.
        assert answers["file:///etc/passwd"] == answers["file:///etc/{probe}"]
        listed = await client.list_resources()
        for resource in listed.resources:
            uri = str(resource.uri)
            if uri.startswith("file:"):
                path = Path(uri[len("file://") :])
                assert path.is_relative_to(arena.ws) and not path.is_symlink(), f"listed {uri}"
                assert os.path.realpath(path).startswith(str(arena.ws) + os.sep), f"listed {uri}"
    arena.check_untouched()


async def test_wrong_typed_paths_are_refused(mcp, arena: Arena) -> None:
    async with mcp(arena.ws) as client:
        for tool in PATH_TOOL_NAMES:
            key = path_key(SCHEMAS[tool])
            optional = key not in SCHEMAS[tool].get("required", [])
            for bad in (["../../etc/passwd"], {"path": "/etc/passwd"}, 1, None, True):
                if bad is None and optional:
                    continue  # an optional path left out means the root
                args = args_for(tool, SCHEMAS[tool], "a.txt")
                args[key] = bad
                result = await _call(client, tool, args)
                text = result_text(result)
                assert result.is_error and not is_crash(tool, text), f"{tool}({bad!r}): {text[:300]}"
                assert "root:x:0" not in text
    arena.check_untouched()


# ----------------------------------------------------------------------------- other doors


REST_TOOLS = [
    t
    for t in (
        "get_file_text_by_path",
        "list_files_in_folder",
        "rewrite_file_content",
        "replace_specific_text",
        "project_fs_read",
        "project_fs_list",
        "project_fs_write",
        "project_fs_edit",
    )
    if t in PATH_TOOL_NAMES
]


def test_rest_door_refuses_the_same_paths(http_server, arena: Arena) -> None:
    server = http_server(arena.ws)
    with httpx.Client(base_url=server.url, timeout=20) as http:
        for tool in REST_TOOLS:
            attacks = OUTSIDE_WRITE if tool in MUTATING else OUTSIDE_READ + OUTSIDE_WRITE
            for raw in attacks:
                attack = arena.fmt(raw)
                args = args_for(tool, SCHEMAS[tool], attack)
                # Both body forms of the seed: direct parameters and JSON-RPC.
                for body in (
                    args,
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "tools/call",
                        "params": {"name": tool, "arguments": args},
                    },
                ):
                    r = http.post(f"/mcp/{tool}", json=body)
                    where = f"REST {tool}({attack!r})"
                    assert r.status_code in (400, 403), f"{where}: {r.status_code} {r.text[:300]}"
                    data = r.json()
                    assert data["status"] is None and "rule:" in data["error"], f"{where}: {data}"
                    assert not host_leaks(r.text, ws=arena.ws, forbidden=arena.forbidden(), echo=attack)
            pairs = ORACLE_PAIRS_WRITE + ([] if tool in MUTATING else ORACLE_PAIRS_READ)
            for raw_a, raw_b in pairs:
                a, b = arena.fmt(raw_a), arena.fmt(raw_b)
                ra = http.post(f"/mcp/{tool}", json=args_for(tool, SCHEMAS[tool], a))
                rb = http.post(f"/mcp/{tool}", json=args_for(tool, SCHEMAS[tool], b))
                assert ra.status_code == rb.status_code
                ea = ra.json()["error"].replace(repr(a), "<P>")
                eb = rb.json()["error"].replace(repr(b), "<P>")
                assert ea == eb, f"REST {tool}: {a!r} and {b!r} answer differently:\n{ea}\n{eb}"
        # The tool name in the URL is never a path either.
        for url in (
            "/mcp/..%2F..%2Fetc%2Fpasswd",
            "/mcp/%2e%2e/%2e%2e/etc/passwd",
            "/mcp/get_file_text_by_path%00",
        ):
            r = http.post(url, json={"pathInProject": "a.txt"})
            assert r.status_code in (400, 404, 405), f"{url}: {r.status_code}"
            assert "root:x:0" not in r.text
        # The server is still up and serves the workspace.
        r = http.post("/mcp/get_file_text_by_path", json={"pathInProject": "a.txt"})
        assert r.status_code == 200 and r.json()["status"]["content"] == "hello root\n"
    arena.check_untouched()


async def test_stdio_door_refuses_paths_out(stdio_server_params, arena: Arena) -> None:
    from mcp import Client

    attacks = [
        "../../etc/passwd",
        "/etc/passwd",
        "leak",
        "d/etc/shadow",
        "ev/x",
        "a\x00.txt",
        "{sib}/x",
        "fifo",
    ]
    async with Client(stdio_server_params(arena.ws)) as client:
        for raw in attacks:
            attack = arena.fmt(raw)
            with anyio.fail_after(20):
                read = await client.call_tool("get_file_text_by_path", {"pathInProject": attack})
            if raw != "fifo":
                _refusal_ok("get_file_text_by_path", attack, read, arena)
            else:
                assert read.is_error and "rule:" in result_text(read)
        for raw in ("ev/x", "leak_out", "dl_out", "out/{probe}", "/etc/{probe}", "d/etc/{probe}"):
            attack = arena.fmt(raw)
            with anyio.fail_after(20):
                result = await client.call_tool(
                    "rewrite_file_content", {"pathInProject": attack, "text": "PWNED"}
                )
            _refusal_ok("rewrite_file_content", attack, result, arena)
    arena.check_untouched()

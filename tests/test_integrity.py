"""SECURITY.md §7, data integrity, through the real doors.

- kill -9 of the server process at random moments of a multi-megabyte write leaves the old bytes or
  the new ones, never a torn file; leftover temp files are never listed, nor removed by a listing
  (writes and start-up sweep them: tests/test_write_hygiene.py).
- A full disk leaves the original intact (a 64 KB tmpfs mounted for the test when we are root and
  may mount; otherwise a server process under ``prlimit --fsize``, where a write past the limit
  fails with EFBIG instead of ENOSPC).
- Concurrent writes to one file end as exactly one of them; concurrent edits are serialised.
- A stale ``expectedHash`` is refused and changes nothing; 0 or 2+ matches change nothing and say
  how many.
- Line endings (LF, CRLF, CR, mixed), BOMs (UTF-8, UTF-16 LE/BE), final newline present or absent,
  legacy encodings (Windows-1252, Latin-1), invalid UTF-8, file mode and owner survive every edit
  tool byte for byte.
- Truncated text (a ``project_fs_read`` of a file over 200 KB) is never written back.
"""

from __future__ import annotations

import codecs
import contextlib
import hashlib
import json
import os
import random
import re
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from .support.security import data_of, is_crash, registered_specs, result_text
from .support.servers import start_http_server
from .support.system import require_system

pytestmark = pytest.mark.anyio

TOOL_NAMES = {s.name for s in registered_specs()}
TEMP_RE = re.compile(r"\.mcp-ide\.tmp$")


def _temp_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if TEMP_RE.search(p.name)]


async def _call(client: Any, tool: str, args: dict[str, Any], timeout: float = 30) -> Any:
    with anyio.fail_after(timeout):
        return await client.call_tool(tool, args)


def _ok(result: Any, where: str = "") -> Any:
    assert not result.is_error, f"{where}: {result_text(result)[:500]}"
    return result


# ----------------------------------------------------------------------------- kill -9


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(10)


def test_kill_9_during_large_writes_leaves_old_or_new(ws_path: Path) -> None:
    old = b"".join(b"old line %07d of the original file\n" % i for i in range(120_000))  # ~4.3 MB
    new_text = "".join(
        f"NEW {i:07d} replacement text, longer than before\n" for i in range(130_000)
    )  # ~6.4 MB
    new = new_text.encode()
    target = ws_path / "big.txt"
    body = json.dumps({"pathInProject": "big.txt", "text": new_text}).encode()
    rng = random.Random(0xC0FFEE)
    outcomes = {"old": 0, "new": 0}

    # How long one whole write takes here, to spread the kills over it.
    target.write_bytes(old)
    server = start_http_server(ws_path)
    start = time.monotonic()
    r = httpx.post(
        f"{server.url}/mcp/rewrite_file_content",
        content=body,
        headers={"Content-Type": "application/json"},
        timeout=60,
    )
    full = time.monotonic() - start
    assert r.status_code == 200, r.text
    assert target.read_bytes() == new
    _kill_group(server.process)

    for _ in range(10):
        target.write_bytes(old)
        os.chmod(target, 0o640)
        server = start_http_server(ws_path)

        def send(url: str = server.url) -> None:
            with contextlib.suppress(httpx.HTTPError):
                httpx.post(
                    f"{url}/mcp/rewrite_file_content",
                    content=body,
                    headers={"Content-Type": "application/json"},
                    timeout=60,
                )

        sender = threading.Thread(target=send)
        sender.start()
        time.sleep(rng.uniform(0, full * 1.1))
        _kill_group(server.process)
        sender.join(30)
        data = target.read_bytes()
        assert data in (old, new), f"torn file after kill -9: {len(data)} bytes"
        assert stat.S_IMODE(target.stat().st_mode) == 0o640
        outcomes["old" if data == old else "new"] += 1
        leftovers = _temp_files(ws_path)
        if leftovers:  # killed between the temp file's creation and the rename
            outcomes["mid-write"] = outcomes.get("mid-write", 0) + 1
            for temp in leftovers:
                temp.unlink()
    print(f"kill -9 outcomes over 10 runs (one write takes {full * 1000:.0f} ms): {outcomes}")


async def test_leftover_temp_files_are_never_listed_nor_removed_by_a_listing(mcp, ws_path: Path) -> None:
    (ws_path / "src").mkdir()
    (ws_path / "src/app.py").write_text("print('app')\n")
    # What a killed write leaves behind: our temp name, next to its file, partly written.
    stale = ws_path / "src/.app.py.k1llEd.mcp-ide.tmp"
    stale.write_text("print('ap")
    fresh = ws_path / ".big.txt.fr3sh.mcp-ide.tmp"
    fresh.write_text("in flight")
    long_ago = time.time() - 3600
    os.utime(stale, (long_ago, long_ago))
    async with mcp(ws_path) as client:
        listings = [
            ("list_files_in_folder", {"pathInProject": "src"}),
            ("list_files_in_folder", {"pathInProject": "/"}),
        ]
        if "project_fs_list" in TOOL_NAMES:
            listings += [
                ("project_fs_list", {"recursive": True}),
                ("project_fs_list", {"recursive": True, "includeIgnored": True}),
                ("project_fs_list", {"dir": "src"}),
            ]
        if "find_files_by_name_substring" in TOOL_NAMES:
            listings += [
                ("find_files_by_name_substring", {"nameSubstring": "app"}),
                ("find_files_by_name_substring", {"nameSubstring": "tmp"}),
                ("find_files_by_name_substring", {"nameSubstring": "mcp-ide", "includeIgnored": True}),
            ]
        if "search_in_files_content" in TOOL_NAMES:
            listings += [
                ("search_in_files_content", {"searchText": "print"}),
                ("search_in_files_content", {"searchText": "in flight", "includeIgnored": True}),
            ]
        for tool, args in listings:
            result = _ok(await _call(client, tool, args), f"{tool}({args})")
            text = result_text(result)
            assert "mcp-ide.tmp" not in text and "k1llEd" not in text and "fr3sh" not in text, (
                f"{tool}({args}) listed a temp file: {text[:500]}"
            )
    # Listings only read: sweeping is for writes and start-up (tests/test_write_hygiene.py).
    assert stale.exists(), "a listing removed a file"
    assert fresh.exists(), "a listing removed a file"


# ----------------------------------------------------------------------------- disk full


@contextlib.contextmanager
def _small_disk(base: Path, size: str = "64k") -> Iterator[Path | None]:
    mount = base / "tiny"
    mount.mkdir()
    if os.geteuid() != 0:
        yield None
        return
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        yield None
        return
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(folder: Path, leave: int) -> None:
    """Fill the file system of ``folder`` until about ``leave`` bytes are free."""
    st = os.statvfs(folder)
    free = st.f_bavail * st.f_frsize
    with open(folder / "filler.bin", "wb") as fh, contextlib.suppress(OSError):
        fh.write(b"\0" * max(0, free - leave))


DISK_FULL_EDITS = [
    ("rewrite_file_content", lambda: {"pathInProject": "doc.txt", "text": "rewritten " * 3000}),
    ("append_file_content", lambda: {"pathInProject": "doc.txt", "text": "more " * 3000}),
    (
        "replace_specific_text",
        lambda: {"pathInProject": "doc.txt", "searchText": "line 00001", "replaceText": "LINE ONE"},
    ),
    (
        "replace_file_content_at_position",
        lambda: {"pathInProject": "doc.txt", "startLine": 2, "endLine": 2, "content": "two"},
    ),
    ("create_new_file_with_text", lambda: {"pathInProject": "new.txt", "text": "x" * 30_000}),
    ("project_fs_write", lambda: {"path": "doc.txt", "content": "rewritten " * 3000}),
    ("project_fs_edit", lambda: {"path": "doc.txt", "oldText": "line 00001", "newText": "LINE ONE"}),
    ("project_fs_write", lambda: {"path": "new2.txt", "content": "y" * 30_000}),
]


async def test_a_full_disk_leaves_the_original_intact(mcp, tmp_path: Path) -> None:
    original = "".join(f"line {i:05d} of the document\n" for i in range(700)).encode()  # ~19 KB
    with _small_disk(tmp_path) as disk:
        if disk is None:
            pytest.skip("cannot mount a tmpfs here; test_disk_full_under_a_file_size_limit covers this")
        ws = disk / "ws"
        ws.mkdir()
        doc = ws / "doc.txt"
        doc.write_bytes(original)
        os.chmod(doc, 0o600)
        _fill(disk, leave=8 * 1024)  # less room than a second copy of doc.txt needs
        async with mcp(ws) as client:
            _ok(await _call(client, "get_file_text_by_path", {"pathInProject": "doc.txt"}))
            for tool, make in DISK_FULL_EDITS:
                if tool not in TOOL_NAMES:
                    continue
                result = await _call(client, tool, make())
                text = result_text(result)
                assert result.is_error, f"{tool} succeeded on a full disk?"
                assert not is_crash(tool, text), f"{tool} crashed on a full disk: {text}"
                assert "no space" in text.lower() and "unchanged" in text, f"{tool}: {text}"
                assert doc.read_bytes() == original, f"{tool} damaged the original on a full disk"
                assert stat.S_IMODE(doc.stat().st_mode) == 0o600
                assert not _temp_files(ws), f"{tool} left a temp file behind"
                assert not (ws / "new.txt").exists() and not (ws / "new2.txt").exists(), (
                    f"{tool} left a partial new file"
                )
            # Free the space: the same edit now goes through.
            (disk / "filler.bin").unlink()
            _ok(
                await _call(
                    client,
                    "replace_specific_text",
                    {"pathInProject": "doc.txt", "searchText": "line 00001", "replaceText": "LINE ONE"},
                )
            )
        assert doc.read_bytes() == original.replace(b"line 00001", b"LINE ONE")


def test_disk_full_under_a_file_size_limit(ws_path: Path) -> None:
    """The fallback for machines where tmpfs cannot be mounted: the server runs under
    ``prlimit --fsize``, so a write past the limit fails (EFBIG) as a full disk would: the file is
    unchanged, no temp file stays, and a create leaves none of the folders it made (issue 13, item 9)."""
    prlimit = require_system("prlimit", "util-linux")
    original = "".join(f"line {i:05d} of the document\n" for i in range(700)).encode()
    doc = ws_path / "doc.txt"
    doc.write_bytes(original)
    log = ws_path.parent / "limited-server.log"
    env = dict(os.environ)
    cmd = [
        prlimit,
        f"--fsize={48 * 1024}",
        sys.executable,
        "-m",
        "mcp_server_ide",
        "--http",
        "--port",
        "0",
        "--workspace",
        str(ws_path),
    ]
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            cmd,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
    try:
        url = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and url is None:
            found = re.search(r"listening on (http://\S+?)/mcp", log.read_text(errors="replace"))
            url = found.group(1) if found else None
            time.sleep(0.05)
        assert url, log.read_text()
        big = "grown " * 20_000  # 120 KB, past the limit
        for tool, args in (
            ("rewrite_file_content", {"pathInProject": "doc.txt", "text": big}),
            ("append_file_content", {"pathInProject": "doc.txt", "text": big}),
            ("project_fs_write", {"path": "doc.txt", "content": big}),
            ("create_new_file_with_text", {"pathInProject": "new.txt", "text": big}),
        ):
            if tool not in TOOL_NAMES:
                continue
            r = httpx.post(f"{url}/mcp/{tool}", json=args, timeout=30)
            assert r.status_code >= 400 and "unchanged" in r.json()["error"], (
                f"{tool}: {r.status_code} {r.text[:300]}"
            )
            assert doc.read_bytes() == original
            assert not _temp_files(ws_path) and not (ws_path / "new.txt").exists()
        # A create that fails takes back the folders it made on the way, and only those.
        (ws_path / "kept").mkdir()
        for tool, args in (
            ("create_new_file_with_text", {"pathInProject": "made/on/the/way/new.txt", "text": big}),
            ("create_new_file_with_text", {"pathInProject": "kept/made/new.txt", "text": big}),
            ("project_fs_write", {"path": "pfs/made/new.txt", "content": big}),
        ):
            if tool not in TOOL_NAMES:
                continue
            r = httpx.post(f"{url}/mcp/{tool}", json=args, timeout=30)
            assert r.status_code >= 400, f"{tool}: {r.status_code} {r.text[:300]}"
            left = sorted(p.relative_to(ws_path).as_posix() for p in ws_path.rglob("*"))
            assert left == ["doc.txt", "kept"], f"{tool}({args}) left {left}"
        assert proc.poll() is None, "the server died at the file size limit"
    finally:
        _kill_group(proc)


# ----------------------------------------------------------------------------- concurrency


def test_concurrent_writes_end_as_exactly_one_of_them(http_server, ws_path: Path) -> None:
    target = ws_path / "shared.txt"
    target.write_text("start\n")
    servers = [http_server(ws_path), http_server(ws_path)]  # two processes: no shared lock
    contents = [(chr(ord("A") + i) * 99 + "\n") * 2600 for i in range(16)]  # 260 KB each

    def write(i: int) -> None:
        url = servers[i % 2].url
        r = httpx.post(
            f"{url}/mcp/rewrite_file_content",
            json={"pathInProject": "shared.txt", "text": contents[i]},
            timeout=60,
        )
        assert r.status_code == 200, r.text

    for _round in range(3):
        threads = [threading.Thread(target=write, args=(i,)) for i in range(len(contents))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        final = target.read_text()
        assert final in contents, f"the file is a mix of writes ({len(final)} chars)"
    assert not _temp_files(ws_path)


def test_concurrent_edits_are_serialised(http_server, ws_path: Path) -> None:
    target = ws_path / "log.txt"
    tokens = [f"slot-{i:02d}" for i in range(24)]
    target.write_text("".join(f"{t}\n" for t in tokens))
    server = http_server(ws_path)

    def edit(i: int) -> None:
        tool, args = (
            (
                "replace_specific_text",
                {
                    "pathInProject": "log.txt",
                    "searchText": f"{tokens[i]}\n",
                    "replaceText": f"{tokens[i]} done\n",
                },
            )
            if i % 2 or "project_fs_edit" not in TOOL_NAMES
            else (
                "project_fs_edit",
                {"path": "log.txt", "oldText": f"{tokens[i]}\n", "newText": f"{tokens[i]} done\n"},
            )
        )
        r = httpx.post(f"{server.url}/mcp/{tool}", json=args, timeout=60)
        assert r.status_code == 200, r.text

    def append(i: int) -> None:
        r = httpx.post(
            f"{server.url}/mcp/append_file_content",
            json={"pathInProject": "log.txt", "text": f"appended-{i:02d}\n"},
            timeout=60,
        )
        assert r.status_code == 200, r.text

    threads = [threading.Thread(target=edit, args=(i,)) for i in range(len(tokens))]
    threads += [threading.Thread(target=append, args=(i,)) for i in range(12)]
    random.Random(7).shuffle(threads)
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    lines = target.read_text().splitlines()
    for token in tokens:
        assert lines.count(f"{token} done") == 1, f"an edit of {token} was lost"
    for i in range(12):
        assert lines.count(f"appended-{i:02d}") == 1, f"append {i} was lost"
    assert len(lines) == len(tokens) + 12


# ----------------------------------------------------------------------------- stale hashes, ambiguous matches


def _hash_tools() -> list[tuple[str, dict[str, Any]]]:
    calls = [
        ("rewrite_file_content", {"pathInProject": "f.txt", "text": "mine\n"}),
        (
            "replace_file_content_at_position",
            {"pathInProject": "f.txt", "startLine": 1, "endLine": 1, "content": "mine"},
        ),
        ("append_file_content", {"pathInProject": "f.txt", "text": "mine\n"}),
        ("replace_specific_text", {"pathInProject": "f.txt", "searchText": "theirs", "replaceText": "mine"}),
        ("project_fs_write", {"path": "f.txt", "content": "mine\n"}),
        ("project_fs_edit", {"path": "f.txt", "oldText": "theirs", "newText": "mine"}),
    ]
    return [c for c in calls if c[0] in TOOL_NAMES]


async def test_a_stale_expected_hash_changes_nothing(mcp, ws_path: Path) -> None:
    target = ws_path / "f.txt"
    target.write_text("v1 theirs\n")
    async with mcp(ws_path) as client:
        for tool, args in _hash_tools():
            target.write_text("v1 theirs\n")
            read = _ok(await _call(client, "get_file_text_by_path", {"pathInProject": "f.txt"}))
            stale = data_of(read).get("hash") or hashlib.sha256(target.read_bytes()).hexdigest()
            assert hashlib.sha256(target.read_bytes()).hexdigest().startswith(stale)
            target.write_bytes(b"v2 theirs, written by someone else\n")
            snapshot = (target.read_bytes(), target.stat().st_mtime_ns)
            for bad in (stale, stale.upper(), "0" * 64, "not-a-hash", "absent"):
                result = await _call(client, tool, {**args, "expectedHash": bad})
                text = result_text(result)
                assert result.is_error, f"{tool} wrote against a stale hash {bad!r}"
                assert "changed" in text or "conflict" in text, f"{tool}: {text}"
                assert (target.read_bytes(), target.stat().st_mtime_ns) == snapshot, (
                    f"{tool} changed the file"
                )
            # The current hash, in any case, lets the edit through.
            await _call(client, "get_file_text_by_path", {"pathInProject": "f.txt"})
            now = hashlib.sha256(target.read_bytes()).hexdigest()
            _ok(await _call(client, tool, {**args, "expectedHash": now.upper()}), tool)
        # A hash for a file that does not exist creates nothing.
        for tool, args in _hash_tools():
            gone = {**args, "expectedHash": "0" * 64}
            gone = {
                k: (v.replace("f.txt", "ghost.txt") if isinstance(v, str) else v) for k, v in gone.items()
            }
            result = await _call(client, tool, gone)
            assert result.is_error and not (ws_path / "ghost.txt").exists(), f"{tool}: {result_text(result)}"


def test_a_stale_expected_hash_on_the_rest_door(http_server, ws_path: Path) -> None:
    target = ws_path / "f.txt"
    target.write_text("v1 theirs\n")
    server = http_server(ws_path)
    with httpx.Client(base_url=server.url, timeout=20) as http:
        stale = http.post("/mcp/get_file_text_by_path", json={"pathInProject": "f.txt"}).json()["status"][
            "hash"
        ]
        target.write_text("v2 theirs\n")
        for tool, args in _hash_tools():
            r = http.post(f"/mcp/{tool}", json={**args, "expectedHash": stale})
            assert r.status_code == 409, f"{tool}: {r.status_code} {r.text}"
            assert target.read_text() == "v2 theirs\n"


async def test_zero_or_several_matches_change_nothing_and_say_how_many(mcp, ws_path: Path) -> None:
    target = ws_path / "m.txt"
    original = b"one two two three three three\naaa\n  indented(x)\n"
    target.write_bytes(original)
    tools = [("replace_specific_text", "pathInProject", "searchText", "replaceText")]
    if "project_fs_edit" in TOOL_NAMES:
        tools.append(("project_fs_edit", "path", "oldText", "newText"))
    async with mcp(ws_path) as client:
        for tool, path_key, old_key, new_key in tools:
            cases = [("four", "0"), ("two", "2"), ("three", "3"), ("indented( x)", "0"), ("ONE", "0")]
            if tool == "project_fs_edit":
                cases.append(("aa", "2"))  # overlapping occurrences count
            for needle, count in cases:
                before = (target.read_bytes(), target.stat().st_mtime_ns)
                result = await _call(client, tool, {path_key: "m.txt", old_key: needle, new_key: "X"})
                text = result_text(result)
                assert result.is_error, f"{tool}({needle!r}) changed the file"
                assert f"{count} times" in text, f"{tool}({needle!r}) should say {count} matched: {text}"
                assert "nothing was changed" in text and "rule:" in text
                assert (target.read_bytes(), target.stat().st_mtime_ns) == before
            result = await _call(client, tool, {path_key: "m.txt", old_key: "", new_key: "X"})
            assert result.is_error and target.read_bytes() == original
        result = await _call(
            client,
            "replace_specific_text",
            {"pathInProject": "m.txt", "searchText": "four", "replaceText": "X", "replaceAll": True},
        )
        assert result.is_error and "0 times" in result_text(result)
        # replaceAll with several matches is the one way to change them all.
        _ok(
            await _call(
                client,
                "replace_specific_text",
                {"pathInProject": "m.txt", "searchText": "three", "replaceText": "3", "replaceAll": True},
            )
        )
    assert target.read_bytes() == original.replace(b"three", b"3")


# ----------------------------------------------------------------------------- encodings, endings, modes


@dataclass
class Sample:
    name: str
    raw: bytes
    codec: str
    """Python codec of the text after the BOM."""
    newline: str
    """The ending an appended line gets ('\\n' for mixed files: they are edited as they are)."""


def _samples() -> list[Sample]:
    def s(name: str, text: str, codec: str = "utf-8", bom: bytes = b"", newline: str = "\n") -> Sample:
        return Sample(name, bom + text.encode(codec), codec, newline)

    return [
        s("lf.txt", "alpha\nbeta\ngamma\n"),
        s("crlf.txt", "alpha\r\nbeta\r\ngamma\r\n", newline="\r\n"),
        s("cr.txt", "alpha\rbeta\rgamma\r", newline="\r"),
        s("mixed.txt", "alpha\r\nbeta\ngamma\r"),
        s("mixed2.txt", "alpha\nbeta\r\ngamma\rdelta\n"),
        s("nofinal_lf.txt", "alpha\nbeta\ngamma"),
        s("nofinal_crlf.txt", "alpha\r\nbeta\r\ngamma", newline="\r\n"),
        s("single_line.txt", "beta"),
        s("bom8.txt", "alpha\r\nbeta\r\ngamma\r\n", bom=codecs.BOM_UTF8, newline="\r\n"),
        s("bom8_lf.txt", "alpha\nbeta\ngamma", bom=codecs.BOM_UTF8),
        s("u16le.txt", "alpha\r\nbeta\r\ngamma \u00e9\r\n", "utf-16-le", codecs.BOM_UTF16_LE, "\r\n"),
        s("u16be.txt", "alpha\nbeta\ngamma \u65e5\u672c\n", "utf-16-be", codecs.BOM_UTF16_BE),
        s("u16le_nofinal.txt", "alpha\nbeta\ngamma", "utf-16-le", codecs.BOM_UTF16_LE),
        s("cp1252.txt", "caf\u00e9 alpha\r\nbeta \u20ac\r\ngamma \u2019\r\n", "cp1252", newline="\r\n"),
        s("latin1.txt", "alpha \u0081\nbeta\ngamma \u00ff\n", "latin-1"),
        s("utf8.txt", "alpha \u00fcn\u00efc\u00f6d\u00e9\nbeta\ngamma \u65e5\u672c \U0001f600\n"),
        s("ff_ls.txt", "alpha\x0c\nbeta\ngamma \u2028 sep \u0085 nel\x0b vt\n"),
        Sample("invalid_utf8.txt", b"alpha \xc3\x28\nbeta\ngamma \xff\xfe\n", "cp1252", "\n"),
        Sample("tabs_trailing.txt", b"\talpha  \n    beta \t\ngamma\t\n", "utf-8", "\n"),
    ]


SAMPLES = _samples()


def _expected_replace(sample: Sample) -> bytes:
    old, new = "beta".encode(sample.codec), "BETA".encode(sample.codec)
    assert sample.raw.count(old) == 1, sample.name
    return sample.raw.replace(old, new)


def _bom(raw: bytes) -> bytes:
    return next(
        (b for b in (codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE) if raw.startswith(b)), b""
    )


def _expected_line(sample: Sample, number: int) -> bytes:
    """Line ``number`` (1-based; only \\n, \\r\\n and \\r end lines, as in an editor) becomes 'BETA'."""
    bom = _bom(sample.raw)
    lines = re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z", sample.raw[len(bom) :].decode(sample.codec))
    line = lines[number - 1]
    lines[number - 1] = "BETA" + line[len(line.rstrip("\r\n")) :]
    return bom + "".join(lines).encode(sample.codec)


def _expected_append(sample: Sample) -> bytes:
    return sample.raw + ("delta" + sample.newline).encode(sample.codec)


async def _edit_every_way(client: Any, ws: Path, sample: Sample) -> list[str]:
    """Each edit tool changes 'beta' to 'BETA' (or appends 'delta'); returns the failures."""
    path = ws / sample.name
    failures: list[str] = []

    async def check(tool: str, expected: bytes, args: dict[str, Any]) -> None:
        path.write_bytes(sample.raw)
        os.chmod(path, 0o755 if len(sample.name) % 2 else 0o600)
        mode = stat.S_IMODE(path.stat().st_mode)
        if os.geteuid() == 0:
            os.chown(path, 4321, 4322)  # an edit by a server running as root keeps the user's ownership
        owner = (path.stat().st_uid, path.stat().st_gid)
        result = await _call(client, tool, args() if callable(args) else args)
        if result.is_error:
            failures.append(f"{sample.name} {tool}: refused: {result_text(result)[:200]}")
            return
        got = path.read_bytes()
        if got != expected:
            failures.append(f"{sample.name} {tool}: {got!r} != {expected!r}")
        if stat.S_IMODE(path.stat().st_mode) != mode:
            failures.append(f"{sample.name} {tool}: mode {oct(path.stat().st_mode)} != {oct(mode)}")
        if (path.stat().st_uid, path.stat().st_gid) != owner:
            failures.append(
                f"{sample.name} {tool}: owner {(path.stat().st_uid, path.stat().st_gid)} != {owner}"
            )

    name = sample.name
    replaced = _expected_replace(sample)
    await check(
        "replace_specific_text",
        replaced,
        {"pathInProject": name, "searchText": "beta", "replaceText": "BETA"},
    )
    line = 1 if name == "single_line.txt" else 2
    await check(
        "replace_file_content_at_position",
        _expected_line(sample, line),
        {"pathInProject": name, "startLine": line, "endLine": line, "content": "BETA"},
    )
    await check("append_file_content", _expected_append(sample), {"pathInProject": name, "text": "delta\n"})

    async def via_read() -> dict[str, Any]:
        read = _ok(await _call(client, "get_file_text_by_path", {"pathInProject": name}), name)
        return {"pathInProject": name, "text": data_of(read)["content"].replace("beta", "BETA")}

    path.write_bytes(sample.raw)
    await check("rewrite_file_content", replaced, await via_read())
    if "project_fs_edit" in TOOL_NAMES:
        await check("project_fs_edit", replaced, {"path": name, "oldText": "beta", "newText": "BETA"})
    if "project_fs_write" in TOOL_NAMES:
        path.write_bytes(sample.raw)
        read = _ok(await _call(client, "project_fs_read", {"path": name}), name)
        assert "truncated" not in data_of(read)  # on MCP only when true
        await check(
            "project_fs_write",
            replaced,
            {"path": name, "content": data_of(read)["content"].replace("beta", "BETA")},
        )
    # Reading back: never a crash, and the text is what the bytes say.
    path.write_bytes(sample.raw)
    read = _ok(await _call(client, "get_file_text_by_path", {"pathInProject": name}), name)
    content = data_of(read)["content"]
    bom = _bom(sample.raw)
    decoded = sample.raw[len(bom) :].decode(sample.codec)

    def lines(text: str) -> str:
        return text.replace("\r\n", "\n").replace("\r", "\n")

    if lines(content) != lines(decoded):
        failures.append(f"{name} read: {content!r} vs {decoded!r}")
    return failures


async def test_every_edit_keeps_encoding_endings_bom_mode_and_owner(mcp, ws_path: Path) -> None:
    failures: list[str] = []
    async with mcp(ws_path) as client:
        for sample in SAMPLES:
            failures += await _edit_every_way(client, ws_path, sample)
    assert not failures, "\n".join(failures)


async def test_a_file_with_a_name_near_the_limit_can_be_edited(mcp, ws_path: Path) -> None:
    # The temp file's name must fit in NAME_MAX too.
    name = "n" * 250 + ".txt"
    (ws_path / name).write_text("beta\n")
    async with mcp(ws_path) as client:
        _ok(
            await _call(
                client,
                "replace_specific_text",
                {"pathInProject": name, "searchText": "beta", "replaceText": "BETA"},
            )
        )
        _ok(await _call(client, "create_new_file_with_text", {"pathInProject": "m" * 255, "text": "new"}))
    assert (ws_path / name).read_text() == "BETA\n" and (ws_path / ("m" * 255)).read_text() == "new"
    assert not _temp_files(ws_path)


async def test_text_the_encoding_cannot_hold_is_refused_not_mangled(mcp, ws_path: Path) -> None:
    latin = ws_path / "latin.txt"
    latin.write_bytes("caf\u00e9\n".encode("latin-1") + b"\x81\n")
    cp = ws_path / "cp.txt"
    cp.write_bytes("caf\u00e9\r\n".encode("cp1252"))
    utf8 = ws_path / "u.txt"
    utf8.write_bytes(b"plain\n")
    async with mcp(ws_path) as client:
        for path, new in (
            (latin, "\u20ac uro"),
            (latin, "\u65e5"),
            (cp, "\u65e5\u672c"),
            (utf8, "bad \ud800 surrogate"),
        ):
            before = path.read_bytes()
            for tool, args in (
                (
                    "replace_specific_text",
                    {
                        "pathInProject": path.name,
                        "searchText": "\n",
                        "replaceText": new + "\n",
                        "replaceAll": True,
                    },
                ),
                ("append_file_content", {"pathInProject": path.name, "text": new}),
                (
                    "project_fs_edit",
                    {"path": path.name, "oldText": before.decode("latin-1")[:3], "newText": new},
                ),
            ):
                if tool not in TOOL_NAMES:
                    continue
                result = await _call(client, tool, args)
                text = result_text(result)
                assert result.is_error and not is_crash(tool, text), f"{tool} {path.name} {new!r}: {text}"
                assert "rule:" in text
                assert path.read_bytes() == before


async def test_files_that_are_not_what_they_seem_read_without_crashing(mcp, ws_path: Path) -> None:
    odd = {
        "bom16_odd.txt": codecs.BOM_UTF16_LE + b"abc",  # a UTF-16 BOM, then an odd number of bytes
        "bom16_bad_surrogate.txt": codecs.BOM_UTF16_LE + b"\x00\xd8a\x00",
        "bom8_invalid.txt": codecs.BOM_UTF8 + b"caf\xe9 \xff\n",  # a UTF-8 BOM, then Latin-1
        "bom32ish.txt": b"\xff\xfe\x00\x00" + b"\x00\x00\x00",
        "lone_cr.txt": b"\r",
        "empty.txt": b"",
        "only_bom.txt": codecs.BOM_UTF8,
        "nul_late.txt": b"a" * 9000 + b"\x00tail\n",
        "binary.bin": bytes(range(256)),
        "overlong.txt": b"\xc0\xaf\xe0\x80\xaf slash\n",
    }
    for name, raw in odd.items():
        (ws_path / name).write_bytes(raw)
    async with mcp(ws_path) as client:
        for name, raw in odd.items():
            for tool, args in (
                ("get_file_text_by_path", {"pathInProject": name}),
                ("project_fs_read", {"path": name}),
                (
                    "replace_specific_text",
                    {"pathInProject": name, "searchText": "zzz-not-there", "replaceText": "x"},
                ),
                ("project_fs_edit", {"path": name, "oldText": "zzz-not-there", "newText": "x"}),
                ("search_in_files_content", {"searchText": "slash"}),
            ):
                if tool not in TOOL_NAMES:
                    continue
                result = await _call(client, tool, args)
                text = result_text(result)
                assert not is_crash(tool, text), f"{tool}({name}) crashed: {text}"
                if result.is_error:
                    assert "rule:" in text or "0 times" in text, f"{tool}({name}): {text}"
                assert (ws_path / name).read_bytes() == raw, f"{tool} changed {name}"
        # Whatever reads, round-trips byte for byte through an edit that changes nothing visible.
        for name, raw in odd.items():
            read = await _call(client, "get_file_text_by_path", {"pathInProject": name})
            if read.is_error or not data_of(read)["content"]:
                continue
            await _call(
                client,
                "rewrite_file_content",
                {"pathInProject": name, "text": data_of(read)["content"]},
            )
            assert (ws_path / name).read_bytes() == raw, f"rewriting {name} with its own text changed it"


# ----------------------------------------------------------------------------- truncated text


async def test_truncated_text_is_never_written_back(mcp, ws_path: Path) -> None:
    if "project_fs_read" not in TOOL_NAMES:
        pytest.skip("no project_fs tools in this build")
    big = ws_path / "big.txt"
    original = "".join(f"line {i:06d} " + "x" * 40 + "\n" for i in range(6000)).encode()  # ~330 KB
    big.write_bytes(original)
    async with mcp(ws_path) as client:
        read = _ok(await _call(client, "project_fs_read", {"path": "big.txt"}))
        data = data_of(read)
        assert data["truncated"] is True and "bytes truncated]" in data["content"]
        content = data["content"]
        marker = re.search(r"…\[\d+ bytes truncated\]…", content).group(0)
        attempts = [
            ("project_fs_write", {"path": "big.txt", "content": content}),
            (
                "project_fs_write",
                {"path": "big.txt", "content": content.replace("line 000000", "LINE 000000")},
            ),
            ("project_fs_write", {"path": "copy.txt", "content": content}),
            (
                "project_fs_edit",
                {"path": "big.txt", "oldText": "line 000001", "newText": f"line 000001 {marker}"},
            ),
            (
                "rewrite_file_content",
                {"pathInProject": "big.txt", "text": content, "expectedHash": data.get("hash")},
            ),
            ("rewrite_file_content", {"pathInProject": "copy2.txt", "text": content}),
            ("create_new_file_with_text", {"pathInProject": "copy3.txt", "text": content}),
            (
                "replace_specific_text",
                {
                    "pathInProject": "big.txt",
                    "searchText": "line 000002",
                    "replaceText": f"line 000002 {marker}",
                },
            ),
            ("append_file_content", {"pathInProject": "big.txt", "text": content[-5000:] + marker}),
        ]
        await _call(client, "get_file_text_by_path", {"pathInProject": "big.txt"})
        for tool, args in attempts:
            if tool not in TOOL_NAMES:
                continue
            args = {k: v for k, v in args.items() if v is not None}
            result = await _call(client, tool, args)
            text = result_text(result)
            assert result.is_error, f"{tool} wrote truncated text back"
            assert "truncat" in text and "rule:" in text, f"{tool}: {text[:300]}"
            assert big.read_bytes() == original, f"{tool} changed big.txt"
        for name in ("copy.txt", "copy2.txt", "copy3.txt"):
            assert not (ws_path / name).exists(), f"{name} was created from truncated text"
        # Slices are the way to edit a big file: a slice read is not truncated and edits go through.
        part = _ok(
            await _call(client, "project_fs_read", {"path": "big.txt", "startLine": 10, "endLine": 12})
        )
        part = data_of(part)
        assert "truncated" not in part and part["content"].startswith("line 000009")
        _ok(
            await _call(
                client,
                "project_fs_edit",
                {"path": "big.txt", "oldText": "line 000009 ", "newText": "LINE 000009 "},
            )
        )
    assert big.read_bytes() == original.replace(b"line 000009 ", b"LINE 000009 ")
    # A file whose own text holds the marker (a log of this very server, say) can still be edited.
    log = ws_path / "notes.txt"
    log.write_text(f"seen: {marker}\nnext\n")
    async with mcp(ws_path) as client:
        _ok(
            await _call(
                client, "project_fs_edit", {"path": "notes.txt", "oldText": "next", "newText": "done"}
            )
        )
        await _call(client, "get_file_text_by_path", {"pathInProject": "notes.txt"})
        _ok(
            await _call(
                client,
                "rewrite_file_content",
                {"pathInProject": "notes.txt", "text": f"seen: {marker}\ndone again\n"},
            )
        )
    assert log.read_text() == f"seen: {marker}\ndone again\n"

"""ripgrep's list of names split as it arrives (``project_fs_list`` gathers them while ripgrep still
walks): the same names as splitting the whole output, wherever the chunks are cut."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from mcp_server_ide.engines import search
from mcp_server_ide.engines.search.names import NameStream, split_names
from mcp_server_ide.engines.search.ripgrep import rg_binary, run


def _tree(root: Path) -> None:
    (root / ".gitignore").write_text("build/\n*.log\n")
    for i in range(40):
        folder = root / f"pkg{i % 5}" / f"sub{i % 3}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file {i}.py").write_text("x\n")
        (folder / f"note{i}.log").write_text("x\n")
    (root / "build").mkdir()
    (root / "build" / "out.js").write_text("x\n")
    (root / "ünïcode.txt").write_text("x\n")
    os.close(os.open(os.fsencode(root) + b"/not-utf8-\xff.txt", os.O_CREAT | os.O_WRONLY, 0o644))


def _output(root: Path) -> bytes:
    out, _err, code, reason = run([rg_binary(), "--files", "--null", "--", "."], root, 30.0, 1 << 20)
    assert code == 0 and reason is None
    return out


def test_chunks_cut_anywhere_give_the_whole_outputs_names(tmp_path: Path) -> None:
    _tree(tmp_path)
    out = _output(tmp_path)
    whole = split_names(out)
    assert "not-utf8-\udcff.txt" in whole and "ünïcode.txt" in whole
    rng = random.Random(12)
    for size in [1, 2, 3, 7, 64, len(out) - 1, len(out), len(out) + 5, *rng.sample(range(1, len(out)), 20)]:
        got: list[str] = []
        stream = NameStream(got.extend)
        for start in range(0, len(out), size):
            stream.feed(out[start : start + size])
        stream.end(cut=False)
        assert got == whole, size


def test_a_cut_output_drops_its_unfinished_last_name(tmp_path: Path) -> None:
    out = b"./a.py\x00./b/c.py\x00./d/e"
    got: list[str] = []
    stream = NameStream(got.extend)
    stream.feed(out)
    stream.end(cut=True)
    assert got == split_names(out, cut=True) == ["a.py", "b/c.py"]
    got.clear()
    stream = NameStream(got.extend)
    stream.feed(out)
    stream.end(cut=False)
    assert got == split_names(out) == ["a.py", "b/c.py", "d/e"]


def test_streamed_files_are_the_listed_files(tmp_path: Path) -> None:
    _tree(tmp_path)
    got: set[str] = set()
    reason = search.stream_files(tmp_path, got.update)
    assert reason is None
    assert got == set(search.list_files(tmp_path).paths)
    assert "build/out.js" not in got and "pkg0/sub0/note0.log" not in got and "pkg0/sub0/file 0.py" in got


def test_a_failing_receiver_stops_ripgrep_and_is_raised(tmp_path: Path) -> None:
    _tree(tmp_path)

    def fail(chunk: bytes) -> None:
        raise RuntimeError("receiver failed")

    with pytest.raises(RuntimeError, match="receiver failed"):
        run([rg_binary(), "--files", "--null", "--", "."], tmp_path, 30.0, 1 << 20, fail)

"""Change-journal benchmark: what journaling costs a write, and how fast review/restore are.

Measured in one run, interleaved, medians:

- one edit through ``textio.edit_text`` (read, transform, atomic write, journal record with both
  blobs, change announcement) against the floor: the same read + ``atomic_write`` with no journal.
  Target: journaled edit <= 2.5x the floor (it adds two fsyncs: the new bytes' blob, written once
  under its hash, and the log line; the floor has the file's and its folder's).
- ``diff_since_checkpoint`` and ``restore_checkpoint`` over ``--files`` edited files, through the tool
  functions (no transport), in ms per file.

    python bench/bench_journal.py [--rounds 300] [--files 200]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))


def bump(text: str, i: int) -> str:
    """A different first line each round, so every round really writes."""
    return f"header {i}\n" + text.split("\n", 1)[1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--files", type=int, default=200)
    opts = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_STATE_HOME"] = str(Path(tmp) / "state")
        root = Path(tmp) / "ws"
        root.mkdir()
        from mcp_server_ide.call import Call, calling
        from mcp_server_ide.engines import sandbox, textio
        from mcp_server_ide.registry import load_builtin_tools
        from mcp_server_ide.tools import journal as tools
        from mcp_server_ide.workspace import Workspace

        load_builtin_tools()
        ws = Workspace.open(root)
        body = "".join(f"line {i}: some text of a typical source file\n" for i in range(400))  # ~18 KB
        (root / "journaled.txt").write_text(body)
        (root / "floor.txt").write_text(body)

        journaled, floor = [], []
        with calling(Call(workspace=ws, door="bench", tool="bench")):
            target = sandbox.resolve_for_write(ws, "journaled.txt")
            plain = sandbox.resolve_for_write(ws, "floor.txt")
            for i in range(opts.rounds):
                t0 = time.perf_counter()
                textio.edit_text(ws, target, lambda tf, i=i: bump(tf.text, i))
                t1 = time.perf_counter()
                with textio.file_lock(plain.path):
                    old = textio.read_text(plain)
                    new = textio.encode(bump(old.text, i), old)
                    textio.atomic_write(plain.path, new, old.mode)
                t2 = time.perf_counter()
                journaled.append(t1 - t0)
                floor.append(t2 - t1)

            for n in range(opts.files):
                (root / "many").mkdir(exist_ok=True)
                (root / "many" / f"f{n}.py").write_text(f"value_{n} = {n}\n" * 50)
            tools.create_checkpoint("bench")
            for n in range(opts.files):
                resolved = sandbox.resolve_for_write(ws, f"many/f{n}.py")
                textio.edit_text(
                    ws, resolved, lambda tf, n=n: tf.text.replace(f"value_{n} = ", f"changed_{n} = ", 1)
                )
            t0 = time.perf_counter()
            diff = tools.diff_since_checkpoint("bench")
            t1 = time.perf_counter()
            restored = tools.restore_checkpoint("bench")
            t2 = time.perf_counter()
            assert len(diff["files"]) >= opts.files and len(restored["restored"]) >= opts.files

        med_j, med_f = statistics.median(journaled) * 1000, statistics.median(floor) * 1000
        ratio = med_j / med_f
        print(f"edit, journaled:        {med_j:7.3f} ms (median of {opts.rounds})")
        print(f"edit, floor (no journal): {med_f:5.3f} ms")
        print(f"ratio journaled/floor:  {ratio:7.2f}x  (target <= 2.5x) {'OK' if ratio <= 2.5 else 'OVER'}")
        print(
            f"diff_since_checkpoint:  {(t1 - t0) * 1000:7.1f} ms for {len(diff['files'])} files ({(t1 - t0) * 1000 / len(diff['files']):.2f} ms/file)"
        )
        print(
            f"restore_checkpoint:     {(t2 - t1) * 1000:7.1f} ms for {len(restored['restored'])} files ({(t2 - t1) * 1000 / len(restored['restored']):.2f} ms/file)"
        )
        ws.close()


if __name__ == "__main__":
    main()

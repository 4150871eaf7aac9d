"""kill -9 in the middle of a write, through the real REST door, many times over.

Each trial sends one write (``rewrite_file_content`` of 0 bytes to 24 MB of text, or
``replace_specific_text`` on a 30 or 50 MB file, whose body stays small: the HTTP doors cap bodies at
32 MB) and SIGKILLs the server's whole process group at a random moment while it works. Then: the
file is wholly the old text or wholly the new one (sha256), and after the next start, before any
tool runs, no temp file (``*.mcp-ide.tmp``) is left in the workspace.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import requests

from mcp_server_ide.engines.sandbox import TEMP_MARK

from .fuzzing import Sandbox, start_sandboxed_http
from .servers import HttpServer

MB = 1024 * 1024
BIG_FILES = {"soak/big30.txt": 30 * MB, "soak/big50.txt": 50 * MB}


@dataclass
class SoakFigures:
    trials: int = 0
    killed_mid_write: int = 0
    """Trials whose request had not been answered when the kill came."""
    torn: list[str] = field(default_factory=list)
    leftovers: list[str] = field(default_factory=list)
    """Temp files found after the next start (before any tool ran)."""
    start_failures: list[str] = field(default_factory=list)
    largest: int = 0
    seconds: float = 0.0

    def summary(self) -> str:
        return (
            f"{self.trials} trials in {self.seconds:.0f} s ({self.killed_mid_write} killed before the answer, "
            f"largest file {self.largest / MB:.0f} MB); {len(self.torn)} torn files, "
            f"{len(self.leftovers)} temp files left after the next start, {len(self.start_failures)} failed starts"
        )


def _digest(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


def _text(size: int, seed: int) -> str:
    line = f"{seed:010d} the quick brown fox jumps over the lazy dog\n"
    return (line * (size // len(line) + 1))[:size]


def run_soak(box: Sandbox, trials: int, *, max_size: int, big: bool, seed: int = 0) -> SoakFigures:
    """``trials`` kills mid-write; files up to ``max_size`` bytes, and the 30/50 MB ones when ``big``."""
    rng = random.Random(seed)
    figures = SoakFigures()
    sizes = [s for s in (0, 1, 100, 10_000, 300_000, MB, 4 * MB, 12 * MB, 24 * MB) if s <= max_size]
    small_files = [f"soak/f{i}.txt" for i in range(4)]
    big_marks: dict[str, int] = {}
    if big:
        for name, size in BIG_FILES.items():
            path = box.ws / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("@@MARK-0@@\n" + _text(size, 0))
            big_marks[name] = 0
    seconds_per_mb = 0.05  # learnt from the writes that finish before the kill
    started = time.monotonic()
    server = _start(box, figures)
    for trial in range(trials):
        if server is None:
            break
        if big and rng.random() < 0.2:
            name = rng.choice(list(BIG_FILES))
            mark = big_marks[name]
            tool, body = (
                "replace_specific_text",
                {
                    "pathInProject": name,
                    "searchText": f"@@MARK-{mark}@@",
                    "replaceText": f"@@MARK-{mark + 1}@@",
                },
            )
            old = (box.ws / name).read_bytes()
            new_hash = hashlib.sha256(
                old.replace(f"@@MARK-{mark}@@".encode(), f"@@MARK-{mark + 1}@@".encode(), 1)
            ).hexdigest()
            size = len(old)
        else:
            name = rng.choice(small_files)
            size = rng.choice(sizes)
            text = _text(size, trial + 1)
            tool, body = "rewrite_file_content", {"pathInProject": name, "text": text}
            new_hash = hashlib.sha256(text.encode()).hexdigest()
        path = box.ws / name
        old_hash = _digest(path)
        figures.largest = max(figures.largest, size)
        answered = threading.Event()
        began = time.monotonic()

        def send(
            url: str = f"{server.url}/mcp/{tool}",
            body: dict[str, object] = body,
            event: threading.Event = answered,
        ) -> None:
            with contextlib.suppress(requests.RequestException):
                requests.post(url, json=body, timeout=300)
                event.set()

        sender = threading.Thread(target=send, daemon=True)
        sender.start()
        expected = 0.05 + seconds_per_mb * size / MB
        time.sleep(rng.uniform(0, expected * 1.3))
        if not answered.is_set():
            figures.killed_mid_write += 1
        else:
            seconds_per_mb = max(0.005, (time.monotonic() - began) / max(size / MB, 0.1))
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.process.pid, signal.SIGKILL)
        server.process.wait(30)
        sender.join(30)
        got = _digest(path)
        if got not in (old_hash, new_hash):
            figures.torn.append(f"trial {trial}: {name} ({size} bytes) is neither the old nor the new text")
        if name in big_marks and got == new_hash:
            big_marks[name] += 1
        figures.trials += 1
        if figures.trials % 10 == 0:
            figures.seconds = time.monotonic() - started
            print(f"[soak] {figures.summary()}", flush=True)
        server = _start(box, figures)
        for temp in box.ws.rglob(f"*{TEMP_MARK}"):
            figures.leftovers.append(f"trial {trial}: {temp.relative_to(box.ws)}")
            temp.unlink()  # each trial starts clean, so each leftover is counted once
    if server is not None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.process.pid, signal.SIGTERM)
        server.process.wait(30)
    figures.seconds = time.monotonic() - started
    return figures


def _start(box: Sandbox, figures: SoakFigures) -> HttpServer | None:
    try:
        return start_sandboxed_http(box, "--confirm-policy", "allow")
    except RuntimeError as exc:
        figures.start_failures.append(str(exc)[-2000:])
        return None

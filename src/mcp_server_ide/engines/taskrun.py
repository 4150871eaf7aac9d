"""The step runner of a run configuration with several steps (``dependsOn``, ``preLaunchTask``, compounds).

Started by :mod:`.runconfigs` as the one process of a job of the process engine
(``python -I taskrun.py PLAN.json [PROGRESS.json]``), so the job's process group, timeout,
output capture and cancellation cover every step it starts. Standard library only, and no
import of the server: it must start fast and see nothing of the server.

- A group runs its steps in sequence (stopping at the first failure, as VS Code does) or in
  parallel (all run; the group fails when one does).
- Each step's output goes to this process's output, lines prefixed with ``[label]`` when steps
  run in parallel. Before and after each step a line says what runs and how it ended.
- The exit code is the first failing step's (1 when it died of a signal), 0 when all succeeded.
- Progress (steps done of all) is written to PROGRESS.json for ``get_progress_indicators``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from typing import Any

_print_lock = threading.Lock()
_children: set[subprocess.Popen[bytes]] = set()
_children_lock = threading.Lock()
_stopping = threading.Event()


def say(text: str) -> None:
    with _print_lock:
        sys.stdout.buffer.write(text.encode("utf-8", "replace"))
        sys.stdout.buffer.flush()


class Progress:
    def __init__(self, path: str | None, total: int) -> None:
        self.path = path
        self.total = total
        self.done = 0
        self.current: list[str] = []
        self.lock = threading.Lock()

    def update(self, *, start: str | None = None, finish: str | None = None) -> None:
        with self.lock:
            if start:
                self.current.append(start)
            if finish:
                self.done += 1
                if finish in self.current:
                    self.current.remove(finish)
            data = {"done": self.done, "total": self.total, "running": list(self.current)}
        if not self.path:
            return
        tmp = self.path + ".tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(data, fh)
            os.replace(tmp, self.path)
        except OSError:
            pass


def count(plan: dict[str, Any]) -> int:
    if plan["kind"] == "step":
        return 1
    return sum(count(s) for s in plan["steps"])


def run_step(step: dict[str, Any], prefix: str, progress: Progress) -> int:
    label = step["label"]
    shown = step.get("shell") or " ".join(step["argv"])
    say(f"> Executing task: {label} ({shown})\n")
    if _stopping.is_set():
        return 130
    env = dict(os.environ)
    env.update(step.get("env") or {})
    progress.update(start=label)
    try:
        proc = subprocess.Popen(
            step["argv"],
            cwd=step["cwd"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
    except OSError as exc:
        say(f"> {label}: could not start: {exc.strerror or exc}\n")
        progress.update(finish=label)
        return 127
    with _children_lock:
        _children.add(proc)
    assert proc.stdout is not None
    pending = b""
    while True:
        chunk = getattr(proc.stdout, "read1", proc.stdout.read)(65536)
        if not chunk:
            break
        if not prefix:
            with _print_lock:
                sys.stdout.buffer.write(chunk)
                sys.stdout.buffer.flush()
            continue
        pending += chunk
        *lines, pending = pending.split(b"\n")
        if lines:
            say("".join(f"{prefix}{line.decode('utf-8', 'replace')}\n" for line in lines))
    if pending:
        say(f"{prefix}{pending.decode('utf-8', 'replace')}\n")
    code = proc.wait()
    with _children_lock:
        _children.discard(proc)
    progress.update(finish=label)
    if code < 0:
        say(f"> {label}: ended by signal {-code}\n")
        return 1
    say(f"> {label}: exited with code {code}\n")
    return code


def run(plan: dict[str, Any], progress: Progress, prefixed: bool = False) -> int:
    if plan["kind"] == "step":
        return run_step(plan, f"[{plan['label']}] " if prefixed else "", progress)
    steps = plan["steps"]
    if plan["order"] == "sequence":
        for index, step in enumerate(steps):
            code = run(step, progress, prefixed)
            if code != 0:
                skipped = len(steps) - index - 1
                if skipped:
                    say(
                        f"> {step['label']} failed (exit code {code}); {skipped} later step(s) of "
                        f"{plan['label']} did not run\n"
                    )
                return code
        return 0
    results: list[int] = [0] * len(steps)

    def worker(i: int) -> None:
        results[i] = run(steps[i], progress, True)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(steps))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return next((c for c in results if c != 0), 0)


def _terminate(signum: int, frame: Any) -> None:
    _stopping.set()
    with _children_lock:
        children = list(_children)
    for child in children:
        with contextlib.suppress(OSError):
            child.send_signal(signum)


def main(argv: list[str]) -> int:
    with open(argv[1], encoding="utf-8") as fh:
        plan = json.load(fh)
    with contextlib.suppress(OSError):
        os.unlink(argv[1])
    progress = Progress(argv[2] if len(argv) > 2 else None, count(plan))
    progress.update()
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGINT, _terminate)
    code = run(plan, progress)
    say(f"> {plan['label']}: {'succeeded' if code == 0 else f'failed with exit code {code}'}\n")
    return code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))

"""Checkpoints: a name for "the state of every journaled file now", and files compared with one.

A checkpoint stores the current bytes of every file the journal knows; a file first changed after
the checkpoint is compared with (and restored to) the ``before`` of its first change after it.
``keep`` moves a file's checkpoint state to its current bytes by writing a newer record of the
checkpoint: the log holds every record, the latest of a name is the checkpoint. :mod:`.undo` writes
a checkpoint's states back.
"""

from __future__ import annotations

import time
from pathlib import Path

from ..failures import ToolFailure
from .budget import BUDGET_ENV
from .core import JournalCore
from .paths import hash_now, read_current
from .records import START, UNREADABLE_FILE, Checkpoint, Entry, FileState, journaled_paths


def start() -> Checkpoint:
    """The implicit checkpoint before the oldest change kept."""
    return Checkpoint(name=START, time=0.0, last_entry=0, files={}, observed=0)


def find(cps: list[Checkpoint], name: str | None) -> Checkpoint:
    """A checkpoint by name; None is the newest one, or the journal's start when there is none."""
    if name is None:
        return cps[-1] if cps else start()
    for cp in cps:
        if cp.name == name:
            return cp
    if name == START:
        return start()
    known = ", ".join(repr(c.name) for c in cps) or "none yet"
    raise ToolFailure(
        f"not found: no checkpoint named {name!r} (checkpoints: {known}; '{START}' is the state before the "
        "oldest journaled change kept; a checkpoint older than that change was dropped when the journal "
        "pruned itself; create one with create_checkpoint)",
        kind="not_found",
    )


def snapshot(j: JournalCore, name: str, description: str = "") -> Checkpoint:
    """Snapshot every journaled file's current bytes under ``name`` (replacing a checkpoint of that name).

    Refused when the snapshot alone would not fit in the journal's byte budget."""
    with j.op, j.lock, j.lock_file.held():
        entries = j.entry_log.load()
        files: dict[str, str] = {}
        sizes: dict[str, int] = {}
        written: list[Path] = []
        for path in journaled_paths(entries):
            data = read_current(j.ws, path)
            if data is not UNREADABLE_FILE:
                files[path] = j.store(data, written)
                sizes[files[path]] = len(data) if data is not None else 0
        needed = sum(sizes.values())
        if needed > j.budget:
            for blob in written:
                blob.unlink(missing_ok=True)
            j.size.grow(-sum(sizes.get(b.name, 0) for b in written))
            raise ToolFailure(
                f"too large: the checkpoint would hold {needed} bytes of file contents, more than the "
                f"journal's budget of {j.budget} bytes (rule: the journal never keeps more than its "
                f"budget; start the server with a larger {BUDGET_ENV}, e.g. {BUDGET_ENV}=1G)",
                kind="too_large",
            )
        cp = Checkpoint(
            name=name,
            time=time.time(),
            last_entry=j.entry_log.last_id,
            files=files,
            observed=j.entry_log.last_id,
            description=description,
        )
        j.size.grow(j.checkpoint_log.append(cp))
    return cp


def keep_current(j: JournalCore, name: str | None, wanted: list[str] | None) -> tuple[Checkpoint, list[str]]:
    """Move the checkpoint's state of ``wanted`` (every changed file when None) to their current bytes."""
    with j.op:
        cp = find(j.checkpoints(), name)
        states = compare(j, cp, wanted)
        kept = [s.path for s in states if s.changed]
        files = dict(cp.files)
        seen: dict[str, str] = {}
        with j.lock, j.lock_file.held():  # the bytes are stored and written down under the lock file
            _ = j.entry_log.load()
            for state in states:
                if state.path in kept:
                    data = read_current(j.ws, state.path)
                    if data is UNREADABLE_FILE:
                        continue
                    files[state.path] = seen[state.path] = j.store(data)
            updated = Checkpoint(
                name=cp.name,
                time=cp.time or time.time(),
                last_entry=cp.last_entry,
                files=files,
                observed=j.entry_log.last_id,
                description=cp.description,
                seen=seen,
            )
            j.size.grow(j.checkpoint_log.append(updated))
    return updated, kept


def compare(j: JournalCore, cp: Checkpoint, wanted: list[str] | None = None) -> list[FileState]:
    """Every journaled file (or those in ``wanted``) compared with checkpoint ``cp``."""
    with j.lock:
        entries = list(j.entry_log.load())
        records = list(j.checkpoint_log.load())
    only = None if wanted is None else {j.user_path(p) for p in wanted}
    after_cp: dict[str, list[Entry]] = {}
    for e in entries:
        if e.id > cp.last_entry:
            after_cp.setdefault(e.path, []).append(e)
    names = list(cp.files) + [p for p in after_cp if p not in cp.files]
    observed = observations(entries, records)
    out: list[FileState] = []
    for path in sorted(names):
        if only is not None and path not in only:
            continue
        target = cp.files[path] if path in cp.files else after_cp[path][0].before
        current = hash_now(j.ws, path)
        out.append(
            FileState(
                path=path,
                target=target,
                current=current,
                known=observed.get(path, current),
                entries=tuple(e.id for e in after_cp.get(path, [])),
            )
        )
    return out


def observations(entries: list[Entry], records: list[Checkpoint]) -> dict[str, str]:
    """For every path, the newest state the journal observed: an entry's ``after`` or a checkpoint snapshot."""
    best: dict[str, tuple[int, int, str]] = {}
    for e in entries:
        seen = best.get(e.path)
        if seen is None or (e.id, 0) >= seen[:2]:
            best[e.path] = (e.id, 0, e.after)
    for cp in records:
        for path, digest in cp.seen.items():
            seen = best.get(path)
            if seen is None or (cp.observed, 1) >= seen[:2]:
                best[path] = (cp.observed, 1, digest)
    return {path: item[2] for path, item in best.items()}

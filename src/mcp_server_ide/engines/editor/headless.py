"""The editor model: open files, the active file, a selection per file, and breakpoints.

The editor tools talk to an :class:`EditorBackend`. Without VS Code the backend is
:class:`HeadlessEditor`, a model kept per workspace in its state folder (never in the
workspace), so it survives restarts; a VS Code bridge implements the same protocol over the
live editor and is switched in with :meth:`Editor.use`, and nothing above changes.

The headless model holds no copy of any file's text: every read goes to the disk, so a file
changed by someone else is seen by the next call. What it keeps per file is positions
(0-based lines and characters, as VS Code stores them; characters count Unicode code points)
plus enough to revalidate them: the hash of the file when they were last known good and the
hash of the lines the selection spans. When another program changed the file, the selection
is looked for again (the same lines, found once elsewhere, move it there); when it cannot be
found, an edit of the selection is refused rather than applied to the wrong text.

Edits made by this server's own tools are followed exactly: the model reads the change
journal (:mod:`.journal`, fed by :mod:`.changes`) and maps breakpoints and selections through
a line diff of each change, so a breakpoint stays on its line when lines are inserted or
deleted above it. Reading the journal (rather than only listening) also covers changes made
before the model was loaded in this process.

Several server processes on one workspace (stdio for VS Code, HTTP for a script) share the
state file: it is re-read when another process changed it, and updated under a file lock.
"""

from __future__ import annotations

import bisect
import contextlib
import difflib
import fcntl
import hashlib
import json
import logging
import os
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, TypedDict, runtime_checkable

from ...workspace import Workspace
from .. import sandbox, textio
from ..failures import ToolFailure

log = logging.getLogger(__name__)

STATE_FILE = "editor.json"
STATE_VERSION = 1
END_OF_LINE = -1
"""A character position meaning "the end of that line" in a selection request."""
MAX_RELOCATE_LINES = 2000
MAX_DIFF_CELLS = 4_000_000


# ----------------------------------------------------------------------------- values


@dataclass(frozen=True, order=True)
class Position:
    """A place in a text: 0-based line and character (Unicode code points), as VS Code's ``Position``."""

    line: int
    character: int


@dataclass(frozen=True)
class Selection:
    """``anchor`` is where the selection started, ``active`` where the cursor is (they are equal for a cursor)."""

    anchor: Position
    active: Position

    @classmethod
    def cursor(cls, line: int, character: int = 0) -> Selection:
        return cls(Position(line, character), Position(line, character))

    @property
    def start(self) -> Position:
        return min(self.anchor, self.active)

    @property
    def end(self) -> Position:
        return max(self.anchor, self.active)

    @property
    def is_empty(self) -> bool:
        return self.anchor == self.active


@dataclass(frozen=True)
class Breakpoint:
    path: Path
    line: int
    """0-based."""


@dataclass(frozen=True)
class EditorState:
    active: Path | None
    open: list[Path]


@dataclass(frozen=True)
class ActiveDocument:
    """The active file as it is now: its path, text (read fresh) and selection."""

    path: Path
    text: str
    """The text with line endings as :func:`textio.read_text` gives them (``\\n`` unless mixed)."""
    selection: Selection
    hash: str


class EditorStatus(TypedDict):
    activeFile: str
    openFiles: list[str]


# ----------------------------------------------------------------------------- the backend protocol


@runtime_checkable
class EditorBackend(Protocol):
    """What the editor and debug tools need from an editor.

    Paths given to a backend are already checked by the sandbox (absolute, real, inside the
    workspace; writes also checked against protected paths). Lines and characters are 0-based.
    Failures the caller can act on are raised as ``ToolFailure``.
    """

    def state(self) -> EditorState:
        """The active file and the open files, in the order they were opened."""
        ...

    def open(
        self, path: Path, selection: Selection | None = None, select_text: str | None = None
    ) -> Selection:
        """Open ``path`` (a text file) and make it active; set the selection when one is given
        (``END_OF_LINE`` as a character means the end of that line), or select the only
        occurrence of ``select_text``. Returns the selection the file now has."""
        ...

    def close(self, path: Path | None = None) -> bool:
        """Close ``path`` (the active file when None); True when it was open."""
        ...

    def active(self) -> ActiveDocument | None:
        """The active file, read now, or None when no file is open."""
        ...

    def replace_selection(self, text: str, expected_hash: str | None = None) -> Selection:
        """Replace the active file's selection with ``text`` (insert at the cursor when the
        selection is empty); the cursor ends after the new text. Returns the new selection."""
        ...

    def replace_text(self, text: str, expected_hash: str | None = None) -> None:
        """Replace the whole text of the active file."""
        ...

    def breakpoints(self) -> list[Breakpoint]: ...

    def toggle_breakpoint(self, path: Path, line: int) -> bool:
        """Add a breakpoint at ``line`` (0-based) of ``path``, or remove the one there. True when added."""
        ...

    def clear_breakpoints(self) -> int: ...


class Editor:
    """The workspace's editor service: the backend the tools use (headless unless a bridge is attached)."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._headless: HeadlessEditor | None = None
        self._bridge: EditorBackend | None = None
        self._lock = threading.Lock()

    @property
    def backend(self) -> EditorBackend:
        with self._lock:
            if self._bridge is not None:
                return self._bridge
            if self._headless is None:
                self._headless = HeadlessEditor(self.ws)
            return self._headless

    @property
    def headless(self) -> HeadlessEditor:
        with self._lock:
            if self._headless is None:
                self._headless = HeadlessEditor(self.ws)
            return self._headless

    def use(self, bridge: EditorBackend | None) -> None:
        """Serve the tools from ``bridge`` (a live editor), or from the headless model again with None."""
        with self._lock:
            self._bridge = bridge

    def close(self) -> None:
        with self._lock:
            if self._headless is not None:
                self._headless.shutdown()


def editor_for(ws: Workspace) -> EditorBackend:
    """The backend the editor tools of ``ws`` act on."""
    return ws.service(Editor).backend


def editor_status(ws: Workspace) -> EditorStatus:
    """``activeFile`` ("" when none) and ``openFiles`` (absolute paths), for ``/mcp/status``."""
    try:
        state = editor_for(ws).state()
    except Exception:  # the status page must answer even if the model cannot be read
        log.debug("editor state unavailable", exc_info=True)
        return EditorStatus(activeFile="", openFiles=[])
    return EditorStatus(
        activeFile=str(state.active) if state.active else "",
        openFiles=[str(p) for p in state.open],
    )


# ----------------------------------------------------------------------------- line mapping


def line_mapper(old: str, new: str) -> Callable[[int], int | None]:
    """How 0-based line numbers of ``old`` move in ``new``: the new line, or None when the line was deleted.

    Lines inside a changed block keep their offset in the block while the new block is long
    enough, and otherwise land on its last line; lines of a block that was only deleted are None.
    """
    a = old.split("\n")
    b = new.split("\n")
    shortest = min(len(a), len(b))
    prefix = 0
    while prefix < shortest and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < shortest - prefix and a[len(a) - 1 - suffix] == b[len(b) - 1 - suffix]:
        suffix += 1
    mid_a = a[prefix : len(a) - suffix]
    mid_b = b[prefix : len(b) - suffix]
    if not mid_a or not mid_b or len(mid_a) * len(mid_b) > MAX_DIFF_CELLS:
        opcodes = [
            ("replace" if mid_a and mid_b else "delete" if mid_a else "insert", 0, len(mid_a), 0, len(mid_b))
        ]
    else:
        opcodes = difflib.SequenceMatcher(None, mid_a, mid_b, autojunk=False).get_opcodes()
    delta = len(b) - len(a)
    end_a = len(a) - suffix

    def map_line(line: int) -> int | None:
        if line < prefix:
            return line
        if line >= end_a:
            return line + delta
        k = line - prefix
        for tag, i1, i2, j1, j2 in opcodes:
            if i1 <= k < i2:
                if tag == "equal":
                    return prefix + j1 + (k - i1)
                if tag == "replace" or (tag != "delete" and j2 > j1):
                    return prefix + j1 + min(k - i1, j2 - j1 - 1)
                return None
        return None

    return map_line


def _block_start(old: str, new: str, line: int) -> int:
    """Where a deleted line's block now begins in ``new`` (the line that took its place)."""
    mapper = line_mapper(old, new)
    probe = line
    total = old.count("\n") + 1
    while probe < total:
        mapped = mapper(probe)
        if mapped is not None:
            return mapped
        probe += 1
    return max(new.count("\n"), 0)


# ----------------------------------------------------------------------------- the headless model


@dataclass
class _FileState:
    selection: Selection = field(default_factory=lambda: Selection.cursor(0))
    sync_hash: str = ""
    """Hash of the file's bytes when the selection was last known to be right."""
    lines_hash: str = ""
    """Hash of the lines the selection spans, at that time (to find them again after outside edits)."""


def _lines_key(lines: list[str], sel: Selection) -> str:
    block = "\n".join(lines[sel.start.line : sel.end.line + 1])
    return hashlib.sha256(block.encode("utf-8", "surrogatepass")).hexdigest()


def _split(text: str) -> list[str]:
    return text.split("\n")


class HeadlessEditor:
    """The editor model without an editor: positions kept in the state folder, text always read from disk."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.path = ws.state_dir / STATE_FILE
        self._lock_path = ws.state_dir / (STATE_FILE + ".lock")
        self._lock = threading.RLock()
        self._open: list[str] = []
        self._active: str | None = None
        self._files: dict[str, _FileState] = {}
        self._breakpoints: dict[str, set[int]] = {}
        self._journal_seen: int | None = None
        self._stamp: bytes | None = None
        self._closed = False
        from .. import changes

        with self._transaction():
            pass  # loads the state and catches up with the journal
        self._unsubscribe = changes.subscribe(ws, self._on_change)

    def shutdown(self) -> None:
        """Stop following changes (the workspace is closing)."""
        self._closed = True
        self._unsubscribe()

    # -- persistence ---------------------------------------------------------------

    def _file_stamp(self) -> bytes | None:
        """The saved state's bytes: compared whole, since another process's save may reuse the inode,
        size and (coarse) mtime of ours. The file is small, so this costs a few microseconds."""
        try:
            with open(self.path, "rb") as fh:
                return fh.read()
        except FileNotFoundError:
            return None

    def _load_if_changed(self) -> None:
        stamp = self._file_stamp()
        if stamp == self._stamp and (stamp is not None or self._journal_seen is not None):
            return
        self._stamp = stamp
        data: dict[str, Any] = {}
        if stamp is not None:
            try:
                data = json.loads(stamp.decode("utf-8"))
            except ValueError:
                log.warning("editor state %s is unreadable; starting with an empty editor", self.path)
                data = {}
        if data.get("version") != STATE_VERSION:
            data = {}
        self._open = [p for p in data.get("open", []) if isinstance(p, str)]
        active = data.get("active")
        self._active = active if isinstance(active, str) and active in self._open else None
        self._files = {}
        for path, item in (data.get("files") or {}).items():
            try:
                al, ac, cl, cc = (int(v) for v in item["selection"])
                self._files[path] = _FileState(
                    Selection(Position(al, ac), Position(cl, cc)),
                    str(item.get("sync", "")),
                    str(item.get("lines", "")),
                )
            except (KeyError, TypeError, ValueError):
                continue
        self._breakpoints = {}
        for path, lines in (data.get("breakpoints") or {}).items():
            good = {int(n) for n in lines if isinstance(n, int) and n >= 0}
            if good:
                self._breakpoints[path] = good
        seen = data.get("journal")
        self._journal_seen = seen if isinstance(seen, int) else None

    def _save(self) -> None:
        data = {
            "version": STATE_VERSION,
            "open": self._open,
            "active": self._active,
            "files": {
                path: {
                    "selection": [
                        fs.selection.anchor.line,
                        fs.selection.anchor.character,
                        fs.selection.active.line,
                        fs.selection.active.character,
                    ],
                    "sync": fs.sync_hash,
                    "lines": fs.lines_hash,
                }
                for path, fs in self._files.items()
                if path in self._open
            },
            "breakpoints": {
                path: sorted(lines) for path, lines in sorted(self._breakpoints.items()) if lines
            },
            "journal": self._journal_seen,
        }
        payload = json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8")
        # Replaced atomically (a reader sees the old state or the new), without fsync: the state
        # changes on every cursor move, and losing the last move in a power cut costs nothing.
        fd, tmp = tempfile.mkstemp(prefix=".editor.", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(payload)
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        self._stamp = self._file_stamp()

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        """Reload if another process changed the state, run the body, save: all under the state lock."""
        with self._lock, open(self._lock_path, "a") as lock_file:
            fcntl.flock(lock_file, fcntl.LOCK_EX)
            try:
                self._load_if_changed()
                before = self._snapshot()
                self._catch_up()
                yield
                if self._snapshot() != before or self._file_stamp() is None:
                    self._save()
            finally:
                fcntl.flock(lock_file, fcntl.LOCK_UN)

    def _snapshot(self) -> Any:
        return (
            list(self._open),
            self._active,
            {k: (v.selection, v.sync_hash, v.lines_hash) for k, v in self._files.items()},
            {k: frozenset(v) for k, v in self._breakpoints.items()},
            self._journal_seen,
        )

    def _read(self) -> None:
        """Bring the in-memory state up to date for a read (no lock needed: saves are atomic)."""
        with self._lock:
            stamp = self._file_stamp()
            if stamp != self._stamp:
                with self._transaction():
                    pass

    # -- following this server's own edits -----------------------------------------------

    def _on_change(self, change: Any) -> None:
        if self._closed:
            return
        key = str(change.path)
        with self._lock:
            tracked = key in self._breakpoints or key in self._files or key in self._open
        if tracked:
            with self._transaction():
                pass  # _transaction catches up with the journal, which already holds this change
        # Changes to other files are passed over by the next catch-up, at no cost now.

    def _catch_up(self) -> None:
        from ..journal import Journal

        journal = self.ws.service(Journal)
        entries = journal.entries()
        last = entries[-1].id if entries else 0
        if self._journal_seen is None or self._journal_seen > last:
            self._journal_seen = last
            return
        if self._journal_seen == last:
            return
        start = bisect.bisect_right([e.id for e in entries], self._journal_seen)
        tracked = set(self._breakpoints) | set(self._files) | set(self._open)
        for entry in entries[start:]:
            self._journal_seen = entry.id
            for root in self.ws.roots:
                key = str(root / entry.path) if entry.path else str(root)
                if key in tracked:
                    try:
                        self._apply_change(key, journal.blob(entry.before), journal.blob(entry.after))
                    except Exception:
                        log.exception("editor model could not follow the change of %s", entry.path)

    def _apply_change(self, key: str, before: bytes | None, after: bytes | None) -> None:
        if after is None:  # deleted: close it and forget its breakpoints
            self._breakpoints.pop(key, None)
            self._forget(key)
            return
        if before is None:
            return
        try:
            old = textio.decode(before).text
            new_file = textio.decode(after)
        except ToolFailure:
            return
        new = new_file.text
        mapper = line_mapper(old, new)
        lines = self._breakpoints.get(key)
        if lines:
            moved = {m for m in (mapper(n) for n in lines) if m is not None}
            if moved:
                self._breakpoints[key] = moved
            else:
                self._breakpoints.pop(key, None)
        fs = self._files.get(key)
        if fs is not None and fs.sync_hash == textio.content_hash(before):
            new_lines = _split(new)

            def move(pos: Position) -> Position:
                mapped = mapper(pos.line)
                if mapped is None:
                    return Position(_block_start(old, new, pos.line), 0)
                return Position(mapped, min(pos.character, len(new_lines[mapped])))

            sel = Selection(move(fs.selection.anchor), move(fs.selection.active))
            self._files[key] = _FileState(sel, textio.content_hash(after), _lines_key(new_lines, sel))

    def _forget(self, key: str) -> None:
        if key in self._open:
            self._open.remove(key)
        self._files.pop(key, None)
        if self._active == key:
            self._active = self._open[-1] if self._open else None

    # -- the protocol ------------------------------------------------------------------

    def _prune_missing(self) -> None:
        for key in list(self._open):
            if not os.path.isfile(key):
                self._forget(key)
        for key in list(self._breakpoints):
            if not os.path.isfile(key):
                self._breakpoints.pop(key, None)

    def state(self) -> EditorState:
        self._read()
        with self._lock:
            if any(not os.path.isfile(p) for p in self._open):
                with self._transaction():
                    self._prune_missing()
            return EditorState(
                active=Path(self._active) if self._active else None, open=[Path(p) for p in self._open]
            )

    def open(
        self, path: Path, selection: Selection | None = None, select_text: str | None = None
    ) -> Selection:
        resolved = self._resolved(path)
        tf = textio.read_text(resolved)  # refuses folders, binaries, FIFOs
        lines = _split(tf.text)
        key = str(resolved.path)
        with self._transaction():
            if select_text is not None:
                selection = _find_text(tf.text, textio.normalise_input(select_text, tf), resolved.display_rel)
            if selection is not None:
                selection = _checked(selection, lines, resolved.display_rel)
                fs = _FileState(selection, tf.hash, _lines_key(lines, selection))
            else:
                fs = self._files.get(key) or _FileState(
                    Selection.cursor(0), tf.hash, _lines_key(lines, Selection.cursor(0))
                )
                fs = self._revalidated(fs, tf, lines, strict=False)
            self._files[key] = fs
            if key in self._open:
                self._open.remove(key)
            self._open.append(key)
            self._active = key
            return fs.selection

    def close(self, path: Path | None = None) -> bool:
        with self._transaction():
            key = str(path) if path is not None else self._active
            if key is None or key not in self._open:
                return False
            self._forget(key)
            return True

    def active(self) -> ActiveDocument | None:
        self._read()
        with self._lock:
            key = self._active
            if key is None:
                return None
            fs = self._files.get(key) or _FileState()
        resolved = self._resolved(Path(key), gone_closes=True)
        tf = self._read_active(resolved)
        lines = _split(tf.text)
        sel = self._revalidated(fs, tf, lines, strict=False).selection
        return ActiveDocument(path=resolved.path, text=tf.text, selection=sel, hash=tf.hash)

    def replace_selection(self, text: str, expected_hash: str | None = None) -> Selection:
        resolved = self._active_for_write()
        key = str(resolved.path)
        new_selection: Selection | None = None

        def transform(tf: textio.TextFile) -> str:
            nonlocal new_selection
            lines = _split(tf.text)
            with self._lock:
                fs = self._files.get(key) or _FileState()
            fs = self._revalidated(fs, tf, lines, strict=True)
            sel = fs.selection
            start = _offset(lines, sel.start)
            end = _offset(lines, sel.end)
            insert = textio.normalise_input(text, tf)
            new_text = tf.text[:start] + insert + tf.text[end:]
            head = (tf.text[:start] + insert).split("\n")
            new_selection = Selection.cursor(len(head) - 1, len(head[-1]))
            return new_text

        _, data = textio.edit_text(self.ws, resolved, transform, expected_hash=expected_hash)
        assert new_selection is not None
        lines = _split(textio.decode(data).text)
        with self._transaction():
            self._files[key] = _FileState(
                new_selection, textio.content_hash(data), _lines_key(lines, new_selection)
            )
        return new_selection

    def replace_text(self, text: str, expected_hash: str | None = None) -> None:
        resolved = self._active_for_write()
        textio.edit_text(
            self.ws, resolved, lambda tf: textio.normalise_input(text, tf), expected_hash=expected_hash
        )

    def breakpoints(self) -> list[Breakpoint]:
        self._read()
        with self._lock:
            if any(not os.path.isfile(p) for p in self._breakpoints):
                with self._transaction():
                    self._prune_missing()
            return [
                Breakpoint(Path(p), n)
                for p in sorted(self._breakpoints)
                for n in sorted(self._breakpoints[p])
            ]

    def toggle_breakpoint(self, path: Path, line: int) -> bool:
        resolved = self._resolved(path)
        tf = textio.read_text(resolved)
        total = len(_split(tf.text))
        if tf.text.endswith("\n") and total > 1:
            total -= 1  # the empty string after the final newline is not a line a person sees
        if line < 0 or line >= total:
            raise ToolFailure(
                f"invalid parameters: line {line + 1} is past the end of {resolved.display_rel!r} "
                f"({total} lines; rule: breakpoints go on lines 1..{total})"
            )
        key = str(resolved.path)
        with self._transaction():
            lines = self._breakpoints.setdefault(key, set())
            if line in lines:
                lines.discard(line)
                if not lines:
                    self._breakpoints.pop(key, None)
                return False
            lines.add(line)
            return True

    def clear_breakpoints(self) -> int:
        with self._transaction():
            count = sum(len(v) for v in self._breakpoints.values())
            self._breakpoints.clear()
            return count

    # -- helpers -------------------------------------------------------------------------

    def _resolved(self, path: Path, *, gone_closes: bool = False) -> sandbox.Resolved:
        resolved = sandbox.resolve(self.ws, str(path))
        if gone_closes and not resolved.path.is_file():
            with self._transaction():
                self._forget(str(path))
            raise ToolFailure(
                f"not found: the active file {resolved.display_rel!r} no longer exists on disk, so it was closed "
                "(open another file with open_file_in_editor)",
                kind="not_found",
            )
        return resolved

    def _read_active(self, resolved: sandbox.Resolved) -> textio.TextFile:
        return textio.read_text(resolved)

    def _active_for_write(self) -> sandbox.Resolved:
        self._read()
        with self._lock:
            key = self._active
        if key is None:
            raise no_active_editor()
        self._resolved(Path(key), gone_closes=True)
        return sandbox.resolve_for_write(self.ws, key)

    def _revalidated(
        self, fs: _FileState, tf: textio.TextFile, lines: list[str], *, strict: bool
    ) -> _FileState:
        """The file state checked against the file as it is now.

        When the file changed outside this server since the selection was made, the selected
        lines are looked for: where they still are, nothing changes; where they moved (found
        exactly once), the selection moves with them; otherwise ``strict`` refuses and the lax
        form clamps the selection into the file.
        """
        if fs.sync_hash == tf.hash:
            return fs
        sel = fs.selection
        span = sel.end.line - sel.start.line + 1
        if sel.end.line < len(lines) and _lines_key(lines, sel) == fs.lines_hash:
            return replace(fs, sync_hash=tf.hash)
        if fs.lines_hash and span <= MAX_RELOCATE_LINES:
            hits = [
                i
                for i in range(0, len(lines) - span + 1)
                if _lines_key(lines, Selection(Position(i, 0), Position(i + span - 1, 0))) == fs.lines_hash
            ]
            if len(hits) == 1:
                shift = hits[0] - sel.start.line
                moved = Selection(
                    Position(sel.anchor.line + shift, sel.anchor.character),
                    Position(sel.active.line + shift, sel.active.character),
                )
                return _FileState(moved, tf.hash, fs.lines_hash)
        if strict:
            raise ToolFailure(
                "conflict: the active file changed on disk since its selection was made and the selected lines "
                "are no longer there; nothing was changed (select again with open_file_in_editor, giving "
                "startLine/endLine or selectText)",
                kind="conflict",
            )
        clamped = _clamp(sel, lines)
        return _FileState(clamped, tf.hash, _lines_key(lines, clamped))


def no_active_editor() -> ToolFailure:
    return ToolFailure(
        "no active editor: no file is open in the editor (open one with open_file_in_editor first)",
        kind="not_found",
    )


def _offset(lines: list[str], pos: Position) -> int:
    return sum(len(line) + 1 for line in lines[: pos.line]) + pos.character


def _clamp(sel: Selection, lines: list[str]) -> Selection:
    def fit(pos: Position) -> Position:
        line = min(max(pos.line, 0), len(lines) - 1)
        return Position(line, min(max(pos.character, 0), len(lines[line])))

    return Selection(fit(sel.anchor), fit(sel.active))


def _checked(sel: Selection, lines: list[str], name: str) -> Selection:
    """A requested selection made concrete (``END_OF_LINE`` resolved), or a clear refusal."""

    def concrete(pos: Position, which: str) -> Position:
        if pos.line < 0 or pos.line >= len(lines):
            raise ToolFailure(
                f"invalid parameters: {which} line {pos.line + 1} is outside 1..{len(lines)} for {name!r}"
            )
        length = len(lines[pos.line])
        character = length if pos.character == END_OF_LINE else pos.character
        if character < 0 or character > length:
            raise ToolFailure(
                f"invalid parameters: {which} character {pos.character} is outside 0..{length} on line {pos.line + 1} "
                f"of {name!r} (characters are 0-based; the line has {length})"
            )
        return Position(pos.line, character)

    return Selection(concrete(sel.anchor, "start"), concrete(sel.active, "end"))


def _find_text(text: str, needle: str, name: str) -> Selection:
    if not needle:
        raise ToolFailure("invalid parameters: selectText is empty; give the exact text to select")
    count = text.count(needle)
    if count != 1:
        raise ToolFailure(
            f"{'no match' if count == 0 else 'ambiguous'}: selectText occurs {count} times in {name!r}; "
            "nothing was selected (give text that occurs exactly once, or use startLine/endLine)",
            kind="conflict" if count else "not_found",
        )
    start = text.index(needle)
    head = text[:start].split("\n")
    tail = text[: start + len(needle)].split("\n")
    return Selection(Position(len(head) - 1, len(head[-1])), Position(len(tail) - 1, len(tail[-1])))

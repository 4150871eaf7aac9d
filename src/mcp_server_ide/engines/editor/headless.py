"""The headless editor: the editor model without an editor, for when VS Code is not connected.

Positions are kept per workspace in its state folder (:mod:`.state`, never in the workspace), so
they survive restarts; the model holds no copy of any file's text: every read goes to the disk,
so a file changed by someone else is seen by the next call (:mod:`.tracking` keeps each file's
selection right, or refuses an edit of a selection it cannot find again).

Edits made by this server's own tools are followed exactly: the model reads the change journal
(:mod:`..journal`, fed by :mod:`..changes`) and maps breakpoints and selections through a line
diff of each change (:mod:`.linemap`), so a breakpoint stays on its line when lines are inserted
or deleted above it. Reading the journal (rather than only listening) also covers changes made
before the model was loaded in this process.

Several server processes on one workspace share the state file: it is re-read when another
process changed it, and updated under a file lock (:meth:`HeadlessEditor._transaction`).
"""

from __future__ import annotations

import bisect
import contextlib
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ...workspace import Workspace
from .. import sandbox, textio
from ..failures import ToolFailure
from .backend import ActiveDocument, EditorState, no_active_editor
from .breakpoints import Breakpoint, check_line
from .linemap import line_mapper
from .positions import Selection, checked, find_text, offset, split_lines
from .state import EditorData, StateFile
from .tracking import FileState, followed, lines_key, revalidated

if TYPE_CHECKING:
    from ..changes import FileChange

log = logging.getLogger(__name__)


class HeadlessEditor:
    """The editor model without an editor: positions kept in the state folder, text always read from disk."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._file = StateFile(ws.state_dir)
        self._lock = threading.RLock()
        self._data = EditorData()
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

    def _load_if_changed(self) -> None:
        stamp = self._file.read()
        if stamp == self._stamp and (stamp is not None or self._data.journal_seen is not None):
            return
        self._stamp = stamp
        self._data = self._file.parse(stamp)

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        """Reload if another process changed the state, run the body, save: all under the state lock."""
        with self._lock, self._file.locked():
            self._load_if_changed()
            before = self._data.snapshot()
            self._catch_up()
            yield
            if self._data.snapshot() != before or self._file.read() is None:
                self._file.write(self._data)
                self._stamp = self._file.read()

    def _read(self) -> None:
        """Bring the in-memory state up to date for a read (no lock needed: saves are atomic)."""
        with self._lock:
            stamp = self._file.read()
            if stamp != self._stamp:
                with self._transaction():
                    pass

    # -- following this server's own edits -----------------------------------------------

    def _on_change(self, change: FileChange) -> None:
        if self._closed:
            return
        key = str(change.path)
        with self._lock:
            tracked = self._data.tracked(key)
        if tracked:
            with self._transaction():
                pass  # _transaction catches up with the journal, which already holds this change
        # Changes to other files are passed over by the next catch-up, at no cost now.

    def _catch_up(self) -> None:
        from ..journal import Journal

        data = self._data
        journal = self.ws.service(Journal)
        entries = journal.entries()
        last = entries[-1].id if entries else 0
        if data.journal_seen is None or data.journal_seen > last:
            data.journal_seen = last
            return
        if data.journal_seen == last:
            return
        start = bisect.bisect_right([e.id for e in entries], data.journal_seen)
        tracked = data.tracked_files()
        for entry in entries[start:]:
            data.journal_seen = entry.id
            for root in self.ws.roots:
                key = str(root / entry.path) if entry.path else str(root)
                if key in tracked:
                    try:
                        self._apply_change(key, journal.blob(entry.before), journal.blob(entry.after))
                    except Exception:
                        log.exception("editor model could not follow the change of %s", entry.path)

    def _apply_change(self, key: str, before: bytes | None, after: bytes | None) -> None:
        data = self._data
        if after is None:  # deleted: close it and forget its breakpoints
            data.breakpoints.forget(key)
            data.forget(key)
            return
        if before is None:
            return
        try:
            old = textio.decode(before).text
            new = textio.decode(after).text
        except ToolFailure:
            return
        mapper = line_mapper(old, new)
        data.breakpoints.follow(key, mapper)
        fs = data.files.get(key)
        if fs is not None and fs.sync_hash == textio.content_hash(before):
            data.files[key] = followed(fs, old, new, mapper, textio.content_hash(after))

    # -- the protocol ------------------------------------------------------------------

    def state(self) -> EditorState:
        self._read()
        with self._lock:
            if any(not os.path.isfile(p) for p in self._data.open):
                with self._transaction():
                    self._data.prune_missing()
            return EditorState(
                active=Path(self._data.active) if self._data.active else None,
                open=[Path(p) for p in self._data.open],
            )

    def open(
        self, path: Path, selection: Selection | None = None, select_text: str | None = None
    ) -> Selection:
        resolved = self._resolved(path)
        tf = textio.read_text(resolved)  # refuses folders, binaries, FIFOs
        lines = split_lines(tf.text)
        key = str(resolved.path)
        with self._transaction():
            data = self._data
            if select_text is not None:
                selection = find_text(tf.text, textio.normalise_input(select_text, tf), resolved.display_rel)
            if selection is not None:
                selection = checked(selection, lines, resolved.display_rel)
                fs = FileState(selection, tf.hash, lines_key(lines, selection))
            else:
                fs = data.files.get(key) or FileState(
                    Selection.cursor(0), tf.hash, lines_key(lines, Selection.cursor(0))
                )
                fs = revalidated(fs, tf, lines, strict=False)
            data.files[key] = fs
            if key in data.open:
                data.open.remove(key)
            data.open.append(key)
            data.active = key
            return fs.selection

    def close(self, path: Path | None = None) -> bool:
        with self._transaction():
            key = str(path) if path is not None else self._data.active
            if key is None or key not in self._data.open:
                return False
            self._data.forget(key)
            return True

    def active(self) -> ActiveDocument | None:
        self._read()
        with self._lock:
            key = self._data.active
            if key is None:
                return None
            fs = self._data.files.get(key) or FileState()
        resolved = self._resolved(Path(key), gone_closes=True)
        tf = self._read_active(resolved)
        lines = split_lines(tf.text)
        sel = revalidated(fs, tf, lines, strict=False).selection
        return ActiveDocument(path=resolved.path, text=tf.text, selection=sel, hash=tf.hash)

    def replace_selection(self, text: str, expected_hash: str | None = None) -> Selection:
        resolved = self._active_for_write()
        key = str(resolved.path)
        new_selection: Selection | None = None

        def transform(tf: textio.TextFile) -> str:
            nonlocal new_selection
            lines = split_lines(tf.text)
            with self._lock:
                fs = self._data.files.get(key) or FileState()
            fs = revalidated(fs, tf, lines, strict=True)
            sel = fs.selection
            start = offset(lines, sel.start)
            end = offset(lines, sel.end)
            insert = textio.normalise_input(text, tf)
            new_text = tf.text[:start] + insert + tf.text[end:]
            head = (tf.text[:start] + insert).split("\n")
            new_selection = Selection.cursor(len(head) - 1, len(head[-1]))
            return new_text

        _, data = textio.edit_text(self.ws, resolved, transform, expected_hash=expected_hash)
        assert new_selection is not None
        lines = split_lines(textio.decode(data).text)
        with self._transaction():
            self._data.files[key] = FileState(
                new_selection, textio.content_hash(data), lines_key(lines, new_selection)
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
            if self._data.breakpoints.missing():
                with self._transaction():
                    self._data.prune_missing()
            return self._data.breakpoints.all()

    def toggle_breakpoint(self, path: Path, line: int) -> bool:
        resolved = self._resolved(path)
        check_line(textio.read_text(resolved), line, resolved.display_rel)
        with self._transaction():
            return self._data.breakpoints.toggle(str(resolved.path), line)

    def clear_breakpoints(self) -> int:
        with self._transaction():
            return self._data.breakpoints.clear()

    # -- helpers -------------------------------------------------------------------------

    def _resolved(self, path: Path, *, gone_closes: bool = False) -> sandbox.Resolved:
        resolved = sandbox.resolve(self.ws, str(path))
        if gone_closes and not resolved.path.is_file():
            with self._transaction():
                self._data.forget(str(path))
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
            key = self._data.active
        if key is None:
            raise no_active_editor()
        self._resolved(Path(key), gone_closes=True)
        return sandbox.resolve_for_write(self.ws, key)

"""A file's tracked selection: the positions the editor model keeps per file and how they stay right.

The model holds no copy of a file's text. Per file it keeps the selection plus enough to
revalidate it: the hash of the file when the selection was last known good and the hash of the
lines it spans. When another program changed the file, the selection is looked for again
(:func:`revalidated`: the same lines, found once elsewhere, move it there); when this server's
own tools changed it, the selection is moved through a line diff of the change (:func:`followed`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace

from .. import textio
from ..failures import ToolFailure
from .linemap import LineMapper, block_start
from .positions import Position, Selection, clamp, split_lines

MAX_RELOCATE_LINES = 2000
"""A selection spanning more lines than this is not looked for after an outside change."""


@dataclass
class FileState:
    """One open file's selection and the hashes that tell whether it is still right."""

    selection: Selection = field(default_factory=lambda: Selection.cursor(0))
    sync_hash: str = ""
    """Hash of the file's bytes when the selection was last known to be right."""
    lines_hash: str = ""
    """Hash of the lines the selection spans, at that time (to find them again after outside edits)."""


def lines_key(lines: list[str], sel: Selection) -> str:
    """The hash of the lines ``sel`` spans."""
    block = "\n".join(lines[sel.start.line : sel.end.line + 1])
    return hashlib.sha256(block.encode("utf-8", "surrogatepass")).hexdigest()


def revalidated(fs: FileState, tf: textio.TextFile, lines: list[str], *, strict: bool) -> FileState:
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
    if sel.end.line < len(lines) and lines_key(lines, sel) == fs.lines_hash:
        return replace(fs, sync_hash=tf.hash)
    if fs.lines_hash and span <= MAX_RELOCATE_LINES:
        hits = [
            i
            for i in range(0, len(lines) - span + 1)
            if lines_key(lines, Selection(Position(i, 0), Position(i + span - 1, 0))) == fs.lines_hash
        ]
        if len(hits) == 1:
            shift = hits[0] - sel.start.line
            moved = Selection(
                Position(sel.anchor.line + shift, sel.anchor.character),
                Position(sel.active.line + shift, sel.active.character),
            )
            return FileState(moved, tf.hash, fs.lines_hash)
    if strict:
        raise ToolFailure(
            "conflict: the active file changed on disk since its selection was made and the selected lines "
            "are no longer there; nothing was changed (select again with open_file_in_editor, giving "
            "startLine/endLine or selectText)",
            kind="conflict",
        )
    clamped = clamp(sel, lines)
    return FileState(clamped, tf.hash, lines_key(lines, clamped))


def followed(fs: FileState, old: str, new: str, mapper: LineMapper, after_hash: str) -> FileState:
    """``fs`` moved through an edit of this server from ``old`` to ``new`` (``after_hash``: the new bytes' hash).

    A position on a line that was deleted goes to the start of the block that took its place."""
    new_lines = split_lines(new)

    def move(pos: Position) -> Position:
        mapped = mapper(pos.line)
        if mapped is None:
            return Position(block_start(old, new, pos.line), 0)
        return Position(mapped, min(pos.character, len(new_lines[mapped])))

    sel = Selection(move(fs.selection.anchor), move(fs.selection.active))
    return FileState(sel, after_hash, lines_key(new_lines, sel))

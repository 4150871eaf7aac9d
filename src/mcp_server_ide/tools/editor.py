"""Editor tools (seed 000, "Editor"): the active file, its selection, and edits through the editor.

They act on the workspace's editor (:mod:`..engines.editor`): a headless model kept across
restarts, or the live VS Code when the companion extension is connected. Lines here are
1-based and characters 0-based, as in the other file tools; the engine stores 0-based
positions as VS Code does.

None of them runs inline on the event loop: any call of the headless model may wait for the lock
of its state file (shared by every server process on the workspace), follow journaled edits with
a line diff, or read the whole active file; they run on a worker thread.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field
from typing_extensions import TypedDict

from ..call import current
from ..engines import editor, sandbox
from ..engines.editor import END_OF_LINE, Position, Selection
from ..registry import ToolFailure, tool
from ..workspace import Workspace

PathInProject = Annotated[
    str,
    Field(
        description="Path of the file, relative to the workspace root (an absolute path inside the root also works)."
    ),
]
ExpectedHash = Annotated[
    str | None,
    Field(
        description="Optional SHA-256 of the file's current bytes (the `hash` a read returned). "
        "When given and the file has changed since, nothing is written."
    ),
]


class SelectionInfo(TypedDict):
    startLine: int
    startCharacter: int
    endLine: int
    endCharacter: int
    text: str


class EditorInfo(TypedDict):
    activeFile: str
    openFiles: list[str]
    selection: SelectionInfo | None


def _ws() -> Workspace:
    return current().workspace


@tool(
    "editor",
    title="Active file text",
    read_only=True,
    structured=False,
    example={},
    errors=("the active file was deleted on disk",),
)
def get_open_in_editor_file_text() -> str:
    """The whole text of the file open in the editor (the active file), read from disk now, so changes
    made by other programs are seen. Line endings come back as `\\n`. Returns an empty string when no
    file is open; open one with `open_file_in_editor`."""
    doc = editor.editor_for(_ws()).active()
    return doc.text if doc is not None else ""


@tool("editor", title="Active file path", read_only=True, structured=False, example={})
def get_open_in_editor_file_path() -> str:
    """The absolute path of the file open in the editor (the active file), or an empty string when no
    file is open."""
    state = editor.editor_for(_ws()).state()
    return str(state.active) if state.active is not None else ""


@tool("editor", title="Selected text", read_only=True, structured=False, example={})
def get_selected_in_editor_text() -> str:
    """The text selected in the active file, or an empty string when nothing is selected (only a cursor)
    or no file is open. `get_editor_state` gives the selection's position."""
    doc = editor.editor_for(_ws()).active()
    if doc is None or doc.selection.is_empty:
        return ""
    return _selected(doc.text, doc.selection)


@tool("editor", title="Editor state", read_only=True, example={})
def get_editor_state() -> EditorInfo:
    """The editor as a person would see it: `activeFile` (absolute path, "" when none), `openFiles` (in the
    order they were opened) and the active file's `selection` (`startLine`/`endLine` 1-based,
    `startCharacter`/`endCharacter` 0-based, and the selected `text`; start = end is a cursor), or null."""
    backend = editor.editor_for(_ws())
    state = backend.state()
    doc = backend.active() if state.active is not None else None
    selection = None
    if doc is not None:
        sel = doc.selection
        selection = SelectionInfo(
            startLine=sel.start.line + 1,
            startCharacter=sel.start.character,
            endLine=sel.end.line + 1,
            endCharacter=sel.end.character,
            text=_selected(doc.text, sel),
        )
    return EditorInfo(
        activeFile=str(state.active) if state.active else "",
        openFiles=[str(p) for p in state.open],
        selection=selection,
    )


@tool(
    "editor",
    title="Replace selection",
    destructive=True,
    structured=False,
    example={"text": "console.log('New Text');"},
    errors=(
        "no active editor",
        "the file changed on disk and the selection is gone",
        "protected path",
        "stale expectedHash",
    ),
)
def replace_selected_text(
    text: Annotated[str, Field(description="The new text to put in place of the selection.")],
    expectedHash: ExpectedHash = None,
) -> str:
    """Replace the text selected in the active file with `text`; when nothing is selected, insert `text` at
    the cursor. The cursor then sits just after the new text. The file is written at once (atomically,
    keeping its encoding and line endings). Select first with `open_file_in_editor` (`startLine`/`endLine`
    or `selectText`). Returns "ok"; fails clearly when no file is open."""
    editor.editor_for(_ws()).replace_selection(text, expected_hash=expectedHash)
    return "ok"


@tool(
    "editor",
    title="Replace active file",
    destructive=True,
    idempotent=True,
    structured=False,
    example={"text": "// New file content\nconsole.log('Replaced Content');\n"},
    errors=("no active editor", "protected path", "stale expectedHash"),
)
def replace_current_file_text(
    text: Annotated[str, Field(description="The new content of the whole file.")],
    expectedHash: ExpectedHash = None,
) -> str:
    """Replace the entire content of the active file with `text`, keeping its encoding and line endings
    (a CRLF file stays CRLF). Breakpoints and the selection follow the lines that stay. Returns "ok";
    fails clearly when no file is open."""
    editor.editor_for(_ws()).replace_text(text, expected_hash=expectedHash)
    return "ok"


@tool(
    "editor",
    title="Open file",
    read_only=True,
    idempotent=True,
    structured=False,
    example={"pathInProject": "src/index.js"},
    errors=(
        "not found",
        "binary file",
        "outside the workspace",
        "position outside the file",
        "selectText not found once",
    ),
)
def open_file_in_editor(
    pathInProject: PathInProject,
    startLine: Annotated[
        int | None, Field(description="Put the cursor (or the start of the selection) on this line, 1-based.")
    ] = None,
    startCharacter: Annotated[int, Field(description="Character of the start in startLine, 0-based.")] = 0,
    endLine: Annotated[
        int | None,
        Field(description="Select up to this line, 1-based, inclusive. Omit for a cursor at startLine."),
    ] = None,
    endCharacter: Annotated[
        int | None,
        Field(
            description="Character of the end in endLine, 0-based (exclusive). Omitted with endLine: the end "
            "of endLine, so startLine..endLine selects whole lines. Given without endLine: on startLine."
        ),
    ] = None,
    selectText: Annotated[
        str | None,
        Field(description="Select this exact text instead of giving positions; it must occur exactly once."),
    ] = None,
) -> str:
    """Open a file in the editor and make it the active file, optionally setting the selection or cursor
    for `replace_selected_text`. Lines are 1-based, characters 0-based; or give `selectText` to select the
    only occurrence of some text. Without a position the file keeps the selection it had (the start of the
    file the first time). Returns "file is opened"."""
    ws = _ws()
    resolved = sandbox.resolve(ws, pathInProject)
    selection = None
    if selectText is not None and (startLine is not None or endLine is not None):
        raise ToolFailure("invalid parameters: give either selectText or startLine/endLine, not both")
    if startLine is not None:
        if endLine is None:
            end = Position(startLine - 1, endCharacter if endCharacter is not None else startCharacter)
        else:
            if endLine < startLine:
                raise ToolFailure(f"invalid parameters: endLine {endLine} is before startLine {startLine}")
            end = Position(endLine - 1, endCharacter if endCharacter is not None else END_OF_LINE)
        selection = Selection(Position(startLine - 1, startCharacter), end)
        if selection.end < selection.start:
            raise ToolFailure("invalid parameters: the end of the selection is before its start")
    elif endLine is not None or endCharacter is not None:
        raise ToolFailure("invalid parameters: endLine/endCharacter need startLine")
    editor.editor_for(ws).open(resolved.path, selection, selectText)
    return "file is opened"


@tool(
    "editor",
    title="Close file",
    read_only=True,
    structured=False,
    example={"pathInProject": "src/index.js"},
)
def close_file_in_editor(
    pathInProject: Annotated[
        str | None,
        Field(description="The file to close, relative to the root; omit to close the active file."),
    ] = None,
) -> str:
    """Close a file in the editor (the active file when `pathInProject` is omitted); the file opened before
    it becomes active. Nothing is written. Returns "file is closed" or "file was not open"."""
    ws = _ws()
    path = sandbox.resolve(ws, pathInProject).path if pathInProject else None
    return "file is closed" if editor.editor_for(ws).close(path) else "file was not open"


def _selected(text: str, sel: Selection) -> str:
    lines = text.split("\n")
    start = sum(len(line) + 1 for line in lines[: sel.start.line]) + sel.start.character
    end = sum(len(line) + 1 for line in lines[: sel.end.line]) + sel.end.character
    return text[start:end]

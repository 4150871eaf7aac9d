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

from typing import Annotated, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from ..call import current
from ..engines import editor, sandbox
from ..engines.editor import END_OF_LINE, Position, Selection
from ..registry import ToolFailure, tool
from ..workspace import Workspace
from .params import PathInProject

ExpectedHash = Annotated[
    str | None,
    Field(description="The `hash` a read returned: refused if the file changed since."),
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
    unsavedFiles: NotRequired[list[str]]
    visibleFiles: NotRequired[list[str]]
    languageIds: NotRequired[dict[str, str]]


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
    """Text of the editor's active file: in VS Code (companion extension) its buffer, unsaved changes
    included; else read from disk now. "" when no file is open."""
    doc = editor.editor_for(_ws()).active()
    return doc.text if doc is not None else ""


@tool("editor", title="Active file path", read_only=True, structured=False, example={})
def get_open_in_editor_file_path() -> str:
    """Absolute path of the editor's active file; "" when no file is open."""
    state = editor.editor_for(_ws()).state()
    return str(state.active) if state.active is not None else ""


@tool("editor", title="Selected text", read_only=True, structured=False, example={})
def get_selected_in_editor_text() -> str:
    """Text selected in the editor's active file; "" when nothing is selected or no file is open."""
    doc = editor.editor_for(_ws()).active()
    if doc is None or doc.selection.is_empty:
        return ""
    return _selected(doc.text, doc.selection)


@tool("editor", title="Editor state", read_only=True, example={})
def get_editor_state() -> EditorInfo:
    """The editor's active file, open files and selection (lines 1-based, characters 0-based; start = end is a
    cursor); in VS Code also the files with unsaved changes, the visible ones and their language ids."""
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
    info = EditorInfo(
        activeFile=str(state.active) if state.active else "",
        openFiles=[str(p) for p in state.open],
        selection=selection,
    )
    if state.unsaved:
        info["unsavedFiles"] = [str(p) for p in state.unsaved]
    if state.visible:
        info["visibleFiles"] = [str(p) for p in state.visible]
    if state.languages:
        info["languageIds"] = {str(p): lang for p, lang in state.languages.items()}
    return info


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
    text: str,
    expectedHash: ExpectedHash = None,
) -> str:
    """Replace the active file's selection with `text` (insert at the cursor when nothing is selected) and
    write the file. Select with `open_file_in_editor`."""
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
    text: str,
    expectedHash: ExpectedHash = None,
) -> str:
    """Replace the whole text of the editor's active file, keeping its encoding and line endings."""
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
    startLine: Annotated[int | None, Field(description="1-based.")] = None,
    startCharacter: Annotated[int, Field(description="0-based.")] = 0,
    endLine: Annotated[
        int | None,
        Field(description="1-based, inclusive; omit for a cursor."),
    ] = None,
    endCharacter: Annotated[
        int | None,
        Field(description="0-based, exclusive (default: the end of endLine)."),
    ] = None,
    selectText: Annotated[
        str | None,
        Field(description="Select this text (it must occur once)."),
    ] = None,
) -> str:
    """Make a file the editor's active file, optionally selecting lines (1-based) and characters (0-based), or
    the one occurrence of `selectText`, for `replace_selected_text`."""
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
        Field(description="Default: the active file."),
    ] = None,
) -> str:
    """Close a file in the editor (default: the active one); nothing is written."""
    ws = _ws()
    path = sandbox.resolve(ws, pathInProject).path if pathInProject else None
    return "file is closed" if editor.editor_for(ws).close(path) else "file was not open"


def _selected(text: str, sel: Selection) -> str:
    lines = text.split("\n")
    start = sum(len(line) + 1 for line in lines[: sel.start.line]) + sel.start.character
    end = sum(len(line) + 1 for line in lines[: sel.end.line]) + sel.end.character
    return text[start:end]

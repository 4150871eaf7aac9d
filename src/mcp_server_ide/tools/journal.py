"""Change journal tools: review, undo and checkpoints over every change this server made to a file.

Every write by any tool, through any door, is in the journal (``engines/journal/``) with the bytes
before and after. These tools read it and write files back through the same atomic, journaled path,
so an undo can itself be undone.
"""

from __future__ import annotations

from typing import Annotated, Literal, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from ..call import current
from ..engines import journal as engine
from ..engines.journal import ABSENT, Journal
from ..registry import ToolFailure, tool

CheckpointName = Annotated[
    str,
    Field(
        description="E.g. 'before-refactor'; an existing one is replaced.",
        min_length=1,
        max_length=100,
    ),
]
CheckpointRef = Annotated[
    str | None,
    Field(description="Default: the newest, else 'start'."),
]
Paths = Annotated[
    list[str] | None,
    Field(description="Only these files (default: all)."),
]
Force = Annotated[
    bool,
    Field(description="Overwrite files changed outside the server."),
]


class ChangeInfo(TypedDict):
    id: int
    time: str
    tool: str
    door: str
    path: str
    kind: Literal["edit", "undo", "restore"]
    action: Literal["created", "modified", "deleted"]
    beforeHash: str
    afterHash: str
    undone: bool
    arguments: dict[str, object]
    undoneBy: NotRequired[int]
    undoes: NotRequired[int]
    checkpoint: NotRequired[str]
    diff: NotRequired[str]
    diffTruncated: NotRequired[bool]


class ChangesPage(TypedDict):
    changes: list[ChangeInfo]
    total: int
    nextBeforeId: int | None


class UndoneChange(TypedDict):
    id: int
    path: str
    action: Literal["created", "modified", "deleted"]
    undoneBy: int | None


class UndoResult(TypedDict):
    undone: list[UndoneChange]
    files: list[str]


class CheckpointInfo(TypedDict):
    name: str
    time: str
    lastChangeId: int
    files: int
    changesSince: int
    description: NotRequired[str]


RestoreAction = Literal["rewritten", "deleted", "recreated", "unchanged"]
DiffStatus = Literal["added", "modified", "deleted"]


class RestoredFile(TypedDict):
    path: str
    action: RestoreAction
    changeId: int | None


class RestoreResult(TypedDict):
    checkpoint: str
    restored: list[RestoredFile]


class FileDiff(TypedDict):
    path: str
    status: DiffStatus
    diff: str
    truncated: bool
    additions: int
    deletions: int
    changedOutside: bool
    changeIds: list[int]


class CheckpointDiff(TypedDict):
    checkpoint: CheckpointInfo
    files: list[FileDiff]
    unchanged: int


class KeepResult(TypedDict):
    checkpoint: str
    kept: list[str]


def _journal() -> Journal:
    return current().workspace.service(Journal)


def _change_info(j: Journal, e: engine.Entry, undone_by: dict[int, int], with_diff: bool) -> ChangeInfo:
    info = ChangeInfo(
        id=e.id,
        time=engine.iso_time(e.time),
        tool=e.tool,
        door=e.door,
        path=e.path,
        kind=e.kind,
        action=e.action,
        beforeHash=e.before,
        afterHash=e.after,
        undone=e.id in undone_by,
        arguments=e.arguments,
    )
    if e.id in undone_by:
        info["undoneBy"] = undone_by[e.id]
    if e.undoes is not None:
        info["undoes"] = e.undoes
    if e.checkpoint is not None:
        info["checkpoint"] = e.checkpoint
    if with_diff:
        try:
            text, truncated = j.diff(e.path, e.before, e.after, limit=12_000)
        except ToolFailure as exc:
            text, truncated = f"(no diff: {exc})\n", False
        info["diff"] = text
        info["diffTruncated"] = truncated
    return info


@tool(
    "journal",
    title="List recent changes",
    read_only=True,
    example={"limit": 5, "includeDiff": True},
    errors=("path outside the workspace",),
)
def list_recent_changes(
    limit: Annotated[int, Field(ge=1, le=200)] = 20,
    beforeId: Annotated[
        int | None,
        Field(description="The previous page's nextBeforeId."),
    ] = None,
    path: Annotated[str | None, Field(description="Only changes to this file.")] = None,
    includeDiff: bool = True,
) -> ChangesPage:
    """The file changes this server made (any tool, any door), newest first, with diffs. Undo with
    `undo_changes`."""
    j = _journal()
    entries = j.entries()
    if path is not None:
        wanted = j.user_path(path)
        entries = [e for e in entries if e.path == wanted]
    if beforeId is not None:
        entries = [e for e in entries if e.id < beforeId]
    page = list(reversed(entries[-limit:])) if entries else []
    undone_by = j.undone_by()
    more = len(entries) > limit
    return ChangesPage(
        changes=[_change_info(j, e, undone_by, includeDiff) for e in page],
        total=len(entries),
        nextBeforeId=page[-1].id if more and page else None,
    )


@tool(
    "journal",
    title="Undo changes",
    destructive=True,
    example={"last": 1},
    errors=(
        "the file changed outside the server since (conflict; nothing is undone unless force)",
        "the change was already undone",
        "no such change id",
        "protected path or read-only server",
    ),
)
def undo_changes(
    changeId: int | None = None,
    last: Annotated[
        int | None,
        Field(
            description="Undo the last N (default 1).",
            ge=1,
            le=1000,
        ),
    ] = None,
    force: Force = False,
) -> UndoResult:
    """Undo one change or the last N, restoring exact bytes; refused when a file changed since, unless
    `force`. The undo is journaled too."""
    if changeId is not None and last is not None:
        raise ToolFailure("invalid parameters: give either changeId or last, not both")
    j = _journal()
    done = j.undo([changeId] if changeId is not None else None, last, force)
    files: list[str] = []
    for e, _ in done:
        if e.path not in files:
            files.append(e.path)
    return UndoResult(
        undone=[
            UndoneChange(id=e.id, path=e.path, action=e.action, undoneBy=new.id if new else None)
            for e, new in done
        ],
        files=files,
    )


def _checkpoint_info(j: Journal, cp: engine.Checkpoint) -> CheckpointInfo:
    entries = j.entries()
    info = CheckpointInfo(
        name=cp.name,
        time=engine.iso_time(cp.time) if cp.time else "",
        lastChangeId=cp.last_entry,
        files=len({*cp.files, *(e.path for e in entries if e.id > cp.last_entry)}),
        changesSince=sum(1 for e in entries if e.id > cp.last_entry),
    )
    if cp.description:
        info["description"] = cp.description
    return info


@tool(
    "journal",
    title="Create checkpoint",
    example={"name": "before-refactor", "description": "state before renaming the helpers"},
    errors=("invalid name",),
)
def create_checkpoint(
    name: CheckpointName,
    description: str = "",
) -> CheckpointInfo:
    """Name the current state of the journaled files, to diff against (`diff_since_checkpoint`) or go back to
    (`restore_checkpoint`)."""
    if name.strip() != name or any(ch in name for ch in "\n\r\t"):
        raise ToolFailure(
            "invalid name: a checkpoint name has no leading/trailing spaces, tabs or line breaks"
        )
    j = _journal()
    return _checkpoint_info(j, j.create_checkpoint(name, description))


@tool("journal", title="List checkpoints", read_only=True, example={})
def list_checkpoints() -> list[CheckpointInfo]:
    """The checkpoints, oldest first, with the number of changes since each ('start' is implicit)."""
    j = _journal()
    return [_checkpoint_info(j, cp) for cp in j.checkpoints()]


@tool(
    "journal",
    title="Restore checkpoint",
    destructive=True,
    example={"name": "before-refactor"},
    errors=(
        "no such checkpoint",
        "a file changed outside the server since (conflict; nothing is restored unless force)",
        "a path the journal never recorded",
        "protected path or read-only server",
    ),
)
def restore_checkpoint(
    name: CheckpointRef = None, paths: Paths = None, force: Force = False
) -> RestoreResult:
    """Put journaled files (or `paths`) back byte for byte as they were at a checkpoint; refused when one
    changed outside the server, unless `force`."""
    j = _journal()
    cp = j.checkpoint(name)
    done = j.restore(cp, paths, force)
    restored: list[RestoredFile] = []
    for state, new in done:
        action: RestoreAction
        if new is None:
            action = "unchanged"
        elif state.target == ABSENT:
            action = "deleted"
        elif state.current == ABSENT:
            action = "recreated"
        else:
            action = "rewritten"
        restored.append(RestoredFile(path=state.path, action=action, changeId=new.id if new else None))
    return RestoreResult(checkpoint=cp.name, restored=restored)


@tool(
    "journal",
    title="Diff since checkpoint",
    read_only=True,
    example={"name": "before-refactor"},
    errors=("no such checkpoint",),
)
def diff_since_checkpoint(name: CheckpointRef = None, paths: Paths = None) -> CheckpointDiff:
    """What changed in the journaled files since a checkpoint: a unified diff per file."""
    j = _journal()
    cp = j.checkpoint(name)
    states = j.states(cp, paths)
    files: list[FileDiff] = []
    for s in states:
        if not s.changed:
            continue
        text, truncated = j.diff_state(s)
        adds = sum(1 for line in text.splitlines() if line.startswith("+") and not line.startswith("+++"))
        dels = sum(1 for line in text.splitlines() if line.startswith("-") and not line.startswith("---"))
        status: DiffStatus = (
            "added" if s.target == ABSENT else "deleted" if s.current == ABSENT else "modified"
        )
        files.append(
            FileDiff(
                path=s.path,
                status=status,
                diff=text,
                truncated=truncated,
                additions=adds,
                deletions=dels,
                changedOutside=s.outside,
                changeIds=list(s.entries),
            )
        )
    return CheckpointDiff(
        checkpoint=_checkpoint_info(j, cp), files=files, unchanged=sum(1 for s in states if not s.changed)
    )


@tool(
    "journal",
    title="Keep changes",
    idempotent=True,
    example={"name": "before-refactor", "paths": ["src/app.py"]},
    errors=("no such checkpoint",),
)
def keep_changes(name: CheckpointRef = None, paths: Paths = None) -> KeepResult:
    """Accept files' current content into a checkpoint: they leave its diff, and a restore keeps them."""
    j = _journal()
    cp, kept = j.keep(name, paths)
    return KeepResult(checkpoint=cp.name, kept=kept)

"""Renaming a symbol everywhere in the workspace: the language server's rename, rope for Python.

The server's ``textDocument/rename`` is used when it can rename; a rename is refused while the
server has only a partial view of the project (a preview is still allowed). Python falls back to
rope when the server refuses, fails or changes nothing. :func:`check_name` is the rule for every
new name a refactoring introduces.
"""

from __future__ import annotations

import functools
import re

from lsprotocol import types as lsp

from ...workspace import Workspace
from .. import multiedit, sandbox
from ..failures import ToolFailure
from ..lsp import LanguageServer, Unavailable, uri_of
from . import shorthand
from .query import doc_text, prepare, read_for, references_at, server_for, snap, unavailable

IDENTIFIER = re.compile(r"^[^\W\d]\w*$|^\$[\w$]*$", re.UNICODE)

PYTHON = (".py", ".pyi")


def check_name(name: str | None, what: str) -> str:
    """``name`` when it is a valid identifier, else a failure naming the rule."""
    if not name or not IDENTIFIER.match(name):
        raise ToolFailure(
            f"invalid options.newName {name!r}: {what} needs a valid identifier (letters, digits, _; not starting "
            "with a digit)",
            kind="invalid",
        )
    return name


def plan_rename(
    ws: Workspace, resolved: sandbox.Resolved, line: int, character: int, new_name: str, preview: bool
) -> tuple[list[multiedit.FilePlan], str, str | None]:
    """The file plans of renaming the symbol at (line, character), a message, and why it may be partial."""
    server = server_for(ws, resolved)
    reason: str | None = None
    plans: list[multiedit.FilePlan] | None = None
    old_name = ""
    if server is not None and server.supports("rename_provider"):
        reason = prepare(ws, resolved, server)
        text = doc_text(server, resolved)
        row, start, end = snap(text, resolved.path, line, character)
        old_name = text.split("\n")[row][start:end]
        if reason and not preview:
            raise ToolFailure(
                f"unavailable: not renaming from a partial view of the project ({reason}); try again in a moment, "
                "or pass preview: true to see what it would change so far",
                kind="unavailable",
            )
        doc = lsp.TextDocumentIdentifier(uri=uri_of(resolved.path))
        edit: lsp.WorkspaceEdit | None
        try:
            edit = server.request(
                "textDocument/rename",
                lsp.RenameParams(
                    text_document=doc, position=lsp.Position(line=row, character=start), new_name=new_name
                ),
                timeout=120,
            )
        except Unavailable as exc:
            if resolved.path.suffix not in PYTHON:
                raise unavailable(exc) from None
            edit = None
        except Exception as exc:  # the server refused (not a renameable symbol...)
            if resolved.path.suffix not in PYTHON:
                raise ToolFailure(
                    f"cannot rename {old_name!r}: {getattr(exc, 'message', exc)}", kind="invalid"
                ) from None
            edit = None
        if edit is not None:
            try:
                edit, missing = _through_shorthands(ws, server, edit, new_name)
            except Unavailable as exc:
                raise unavailable(exc) from None
            if missing and not preview:
                raise ToolFailure(
                    f"unavailable: not renaming from a partial view of the project ({missing}); "
                    "pass preview: true to see what it would change",
                    kind="unavailable",
                )
            reason = reason or missing
            plans = multiedit.plan_workspace_edit(ws, edit)
    if plans is None or (not plans and resolved.path.suffix in PYTHON):
        if resolved.path.suffix not in PYTHON:
            raise ToolFailure(
                f"unavailable: no language server can rename in {resolved.path.suffix or 'this'} files here",
                kind="unavailable",
            )
        from .. import pyrefactor

        text = pyrefactor.read_text(ws, resolved.path)
        row, start, end = snap(text, resolved.path, line, character)
        old_name = text.split("\n")[row][start:end]
        offset = multiedit.offset_of(text, row, start)
        plans = multiedit.plan_contents(ws, pyrefactor.rename(ws, resolved.path, offset, new_name))
        reason = None
    return plans, f"renamed {old_name!r} to {new_name!r}", reason


def _through_shorthands(
    ws: Workspace, server: LanguageServer, edit: lsp.WorkspaceEdit, new_name: str
) -> tuple[lsp.WorkspaceEdit, str | None]:
    """``edit`` merged with the rename at an importer's use of every object-literal shorthand it
    renames, so the files importing a name exported as ``{ helper }`` are renamed with it (see
    :mod:`.shorthand`), and why importers may be missing."""

    def spots() -> list[tuple[str, lsp.Range]]:  # what ``edit`` holds by then
        return shorthand.edit_spots(edit)

    missing: str | None = None
    for old, uses, why in shorthand.importer_uses(
        ws.root,
        spots,
        functools.partial(read_for, ws, server),
        functools.partial(references_at, server),
    ):  # the edit is not applied yet: ``old`` is the old name
        missing = missing or why
        for other, at in uses:
            try:
                more = server.request(
                    "textDocument/rename",
                    lsp.RenameParams(
                        text_document=lsp.TextDocumentIdentifier(uri=other),
                        position=at,
                        new_name=new_name,
                    ),
                    timeout=120,
                )
            except Unavailable:
                raise
            except Exception as exc:  # the server refused at an importer: it would be left behind
                missing = missing or f"the server would not rename {old!r} where it is imported: {exc}"
                continue
            merged = shorthand.merge_edits(edit, more) if more is not None else edit
            if merged is None:
                missing = missing or f"the renames of {old!r} at its importers conflict with each other"
            else:
                edit = merged
    return edit, missing

"""Code analysis tools (seed 000, "Code Analysis"): symbols, references, refactoring; plus definition,
problems and formatting. The work is done in :mod:`..engines.code`."""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from ..call import current, seed_shapes, shaped
from ..engines import sandbox
from ..registry import tool
from .params import PathInProject

Line = Annotated[int, Field(description="0-based.", ge=0)]
Character = Annotated[
    int,
    Field(
        description="0-based, UTF-16 units; snaps to the nearest identifier.",
        ge=0,
    ),
]


# One symbol: compact (``line``, ``character``, ``endLine?``, ``startLine?``) or, with ``ranges`` and
# on the REST door, the seed's shape (``range``, ``selectionRange``, ``text``, ``detail``).
class SymbolInfo(TypedDict):
    name: str
    kind: str
    line: NotRequired[int]
    character: NotRequired[int]
    endLine: NotRequired[int]
    startLine: NotRequired[int]
    range: NotRequired[dict[str, int]]
    """With `ranges`: {startLine, startCharacter, endLine, endCharacter}."""
    selectionRange: NotRequired[dict[str, int]]
    """With `ranges`: the name's range."""
    text: NotRequired[str]
    detail: NotRequired[str]
    children: NotRequired[list[SymbolInfo]]


class SymbolsResult(TypedDict):
    symbols: list[SymbolInfo]
    enrichedBy: NotRequired[str]


class Location(TypedDict):
    line: int
    character: int
    isDeclaration: NotRequired[bool]
    endLine: NotRequired[int]
    endCharacter: NotRequired[int]


# One file's references (compact: ``path`` and its ``locations``) or, on the REST door, one reference
# in the seed's shape (``path, line, character, endLine, endCharacter``).
class Reference(TypedDict):
    path: str
    locations: NotRequired[list[Location]]
    line: NotRequired[int]
    character: NotRequired[int]
    endLine: NotRequired[int]
    endCharacter: NotRequired[int]
    isDeclaration: NotRequired[bool]


class ReferencesResult(TypedDict):
    references: list[Reference]
    symbol: NotRequired[str]
    outsideWorkspace: NotRequired[int]
    partial: NotRequired[bool]
    reason: NotRequired[str]


class RefactorResult(TypedDict):
    success: NotRequired[bool]
    """On the REST door only, as `applied: true` (an error is the failure)."""
    message: str
    changedFiles: NotRequired[list[str]]
    applied: NotRequired[bool]
    diff: NotRequired[str]
    partial: NotRequired[bool]
    reason: NotRequired[str]


class Definition(TypedDict):
    path: str
    line: int
    character: int
    endLine: NotRequired[int]
    """On MCP only where the end is not that of the name (``character`` + its length, same line)."""
    endCharacter: NotRequired[int]
    lineText: NotRequired[str]
    outsideWorkspace: NotRequired[bool]


class DefinitionResult(TypedDict):
    symbol: str
    definitions: list[Definition]
    partial: NotRequired[bool]
    reason: NotRequired[str]


class Problem(TypedDict):
    source: str
    severity: Literal["error", "warning", "information", "hint"]
    code: str
    message: str
    line: int
    character: int
    endLine: int
    endCharacter: int
    fixable: NotRequired[bool]


class ProblemsResult(TypedDict):
    path: str
    problems: list[Problem]
    errors: int
    warnings: int
    sources: list[str]
    partial: NotRequired[bool]
    reason: NotRequired[str]


class FileProblems(TypedDict):
    path: str
    problems: list[Problem]


class ProjectProblemsResult(TypedDict):
    files: list[FileProblems]
    counts: dict[str, int]
    bySource: dict[str, int]
    total: int
    ran: NotRequired[list[str]]
    skipped: NotRequired[dict[str, str]]
    cached: NotRequired[list[str]]
    truncated: NotRequired[bool]
    nextOffset: NotRequired[int]
    partial: NotRequired[bool]
    reason: NotRequired[str]
    jobId: NotRequired[str]


class FormatResult(TypedDict):
    path: str
    changed: bool
    applied: bool
    diff: NotRequired[str]


@tool(
    "code",
    title="Symbols in file",
    read_only=True,
    example={"pathInProject": "src/utils/helper.js"},
    errors=("not found", "no grammar for the file type", "outside the workspace"),
)
def get_symbols_in_file(
    pathInProject: PathInProject,
    ranges: Annotated[
        bool, Field(description="Give each symbol's full LSP `range`, `selectionRange` and `text`.")
    ] = False,
) -> SymbolsResult:
    """Outline of a file: classes, functions, methods, fields, nested, with kinds and signatures (tree-sitter,
    refined by a running language server). Each symbol: `{name, kind, line, character, endLine?, startLine?,
    detail?, children?}`, 0-based at its name (as find_references takes it)."""
    ws = current().workspace
    from ..engines import code  # lazy: language tooling loads on first use

    full = ranges or seed_shapes()
    return code.symbols(ws, sandbox.resolve(ws, pathInProject), ranges=full)  # type: ignore[return-value]


@tool(
    "code",
    title="Find references",
    read_only=True,
    example={"pathInProject": "src/utils/helper.js", "line": 0, "character": 12},
    errors=("not found", "no identifier on the line", "language server unavailable"),
)
def find_references(pathInProject: PathInProject, line: Line, character: Character) -> ReferencesResult:
    """Every reference to the symbol at a 0-based position, workspace-wide (language server), by file:
    `{path, locations: [{line, character, isDeclaration?}]}`; `partial` + `reason` when some may be missed."""
    ws = current().workspace
    from ..engines import code  # lazy: language tooling loads on first use

    found = code.references(ws, sandbox.resolve(ws, pathInProject), line, character)
    return shaped(found, code.grouped_references)  # type: ignore[return-value]


@tool(
    "code",
    title="Refactor code",
    destructive=True,
    example={
        "pathInProject": "src/utils/helper.js",
        "line": 0,
        "character": 12,
        "refactorType": "rename",
        "options": {"newName": "helperFunction"},
    },
    errors=(
        "unknown refactorType",
        "invalid newName",
        "nothing to extract at that range",
        "would change files outside the workspace or under a protected path",
        "a file changed meanwhile (nothing written)",
    ),
)
def refactor_code_at_location(
    pathInProject: PathInProject,
    line: Annotated[int, Field(description="0-based.", ge=0)],
    character: Annotated[int, Field(description="0-based, UTF-16 units.", ge=0)],
    refactorType: Annotated[str, Field(description="rename, extract_function or extract_variable.")],
    options: Annotated[
        dict[str, Any] | None,
        Field(
            description="newName (required for rename); endLine, endCharacter: 0-based end of the code to extract."
        ),
    ] = None,
    preview: Annotated[
        bool,
        Field(description="Return the diff; write nothing."),
    ] = False,
) -> RefactorResult:
    """At a 0-based position: `rename` a symbol everywhere (language server; rope for Python) or
    `extract_function`/`extract_variable` (up to `options.endLine`/`endCharacter`). `preview` gives the
    diff; writes are journaled."""
    ws = current().workspace
    opts = dict(options or {})
    preview = bool(preview or opts.pop("preview", False))
    resolved = sandbox.resolve(ws, pathInProject) if preview else sandbox.resolve_for_write(ws, pathInProject)
    from ..engines import code  # lazy: language tooling loads on first use

    return code.refactor(ws, resolved, line, character, refactorType, opts, preview)  # type: ignore[return-value]


@tool(
    "code",
    title="Go to definition",
    read_only=True,
    example={"pathInProject": "src/index.js", "line": 3, "character": 4},
    errors=("not found", "no identifier on the line", "no language server for the file type"),
)
def go_to_definition(pathInProject: PathInProject, line: Line, character: Character) -> DefinitionResult:
    """Where the symbol at a 0-based position is defined, from the language server: `{path, line, character,
    endLine?, endCharacter?, lineText}` (the end only where it is not the name's)."""
    ws = current().workspace
    from ..engines import code  # lazy: language tooling loads on first use

    found = code.definition(ws, sandbox.resolve(ws, pathInProject), line, character)
    return shaped(found, code.lean_definition)  # type: ignore[return-value]


@tool(
    "code",
    title="Problems in file",
    read_only=True,
    example={"pathInProject": "src/app.py"},
    errors=("not found", "language server unavailable"),
)
def get_file_problems(pathInProject: PathInProject) -> ProblemsResult:
    """Errors and warnings of one file, 0-based: ruff and basedpyright for Python, tsserver for TS/JS, other
    language servers, else tree-sitter syntax errors; in VS Code also its own (source `vscode/...`)."""
    ws = current().workspace
    from ..engines import code  # lazy: language tooling loads on first use

    return code.problems(ws, sandbox.resolve(ws, pathInProject))  # type: ignore[return-value]


@tool(
    "code",
    title="Problems in project",
    read_only=True,
    example={"paths": ["src/**"], "minSeverity": "warning"},
    errors=("invalid glob", "invalid sources"),
)
async def get_project_problems(
    paths: Annotated[
        list[str] | None, Field(description="Globs of files to list, e.g. ['src/**', '*.py']. Default: all.")
    ] = None,
    minSeverity: Annotated[
        Literal["error", "warning", "information", "hint"], Field(description="Leave out milder problems.")
    ] = "hint",
    sources: Annotated[
        list[Literal["basedpyright", "tsc", "ruff", "eslint"]] | None,
        Field(description="Run only these sources. Default: all that apply."),
    ] = None,
    maxResults: Annotated[int, Field(ge=1, le=1000, description="Files per page (1-1000).")] = 100,
    offset: Annotated[int, Field(ge=0, description="Skip this many files: the previous nextOffset.")] = 0,
) -> ProjectProblemsResult:
    """Every problem of the project: basedpyright and ruff (Python), tsc (TS/JS), eslint when trusted.
    `{files: [{path, problems}], counts, bySource, ran, skipped, total}`, paged by file; unchanged files
    `cached`; a run over ~50 s goes on as a job (`jobId`, `partial`): call again."""
    import anyio

    from ..engines import problems  # lazy: the checkers load on first use
    from ..engines.lsp.adapters.base import env_float
    from ..engines.search.globs import confined, matcher

    call = current()
    # A bad glob, or one leading outside the workspace, fails now, not after the run.
    paths = [confined(call.workspace, glob) for glob in paths or ()]
    matcher(tuple(paths))
    run = await anyio.to_thread.run_sync(problems.start, call.workspace, sources)
    deadline = time.monotonic() + env_float("MCP_IDE_PROBLEMS_WAIT", 50)
    try:
        while not run.done.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                job = problems.store(call.workspace).track(run)
                if job:
                    return ProjectProblemsResult(
                        files=[], counts={}, bySource={}, total=0, partial=True, jobId=job,
                        reason=f"still running as {job}: call again when get_job_output says it ended",
                    )  # fmt: skip
            await anyio.to_thread.run_sync(run.done.wait, max(0.05, min(1.0, left)))
            done, total, now = run.progress()
            await call.reporter.progress(
                done, total, f"{done} of {total} sources done" + (f"; running {now}" if now else "")
            )
    except anyio.get_cancelled_exc_class():
        if run.job is None:
            run.stop.set()
        raise
    return problems.answer(  # type: ignore[return-value]
        run,
        sources=sources,
        paths=paths or (),
        min_severity=minSeverity,
        offset=offset,
        max_results=maxResults,
        ws=call.workspace,
    )


@tool(
    "code",
    title="Format file",
    destructive=False,
    idempotent=True,
    example={"pathInProject": "src/app.py"},
    errors=(
        "not found",
        "syntax error (nothing written)",
        "no formatter for the file type",
        "protected path",
    ),
)
def format_file(
    pathInProject: PathInProject,
    preview: Annotated[bool, Field(description="Return the diff; write nothing.")] = False,
) -> FormatResult:
    """Format a file with the project's formatter (ruff for Python, tsserver for TS/JS, else the language
    server); `preview` only returns the diff."""
    ws = current().workspace
    resolved = sandbox.resolve(ws, pathInProject) if preview else sandbox.resolve_for_write(ws, pathInProject)
    from ..engines import (
        code,  # lazy: language tooling loads on first use
        multiedit,
    )

    plan = code.format_plan(ws, resolved)
    result = FormatResult(path=resolved.display_rel, changed=plan is not None, applied=False)
    if plan is None:
        return result
    if preview:
        result["diff"] = multiedit.preview([plan])
        return result
    multiedit.apply(ws, [plan])
    result["applied"] = True
    return result

"""Code analysis tools (seed 000, "Code Analysis"): symbols, references, refactoring; plus definition,
problems and formatting. The work is done in :mod:`..engines.code`."""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from ..call import current, seed_shapes, shaped
from ..engines import sandbox
from ..registry import tool

PathInProject = Annotated[
    str,
    Field(
        description="Path of the source file, relative to the workspace root (an absolute path inside it also works)."
    ),
]
Line = Annotated[int, Field(description="Line of the symbol, 0-based (the first line is 0).", ge=0)]
Character = Annotated[
    int,
    Field(
        description="Character on that line, 0-based (UTF-16 units, as VS Code counts). A position a little off "
        "the name (on the space before it, on the `(` after it) snaps to the nearest identifier on that line.",
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
    success: bool
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
    endLine: int
    endCharacter: int
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
        bool,
        Field(
            description="true: each symbol with its full LSP ranges, as `{name, kind, range{startLine,"
            "startCharacter,endLine,endCharacter}, selectionRange, text, detail, children?}`."
        ),
    ] = False,
) -> SymbolsResult:
    """Get all symbols defined in a file (classes, functions, methods, variables, fields...), nested as the
    code nests. Each symbol is `{name, kind, line, character, endLine?, startLine?, detail?, children?}`,
    0-based: `line`/`character` is where its name is (pass them as is to find_references or
    refactor_code_at_location), `endLine` its last line (left out when it is `line`), `startLine` only when
    it starts above its name (decorators). `kind` is a VS Code SymbolKind name (Class, Method, Function,
    Variable, Constant, Interface, Enum, Struct, Field, Property...), `detail` the signature (parameters and
    return type, base classes). Local variables inside functions are left out. Works for
    every language tree-sitter knows (Python, TS/JS, Go, Rust, C/C++, Java, C#, Ruby, PHP, Kotlin, Swift,
    Markdown headings, JSON/YAML/TOML keys...) without a language server; when the file's language server is
    already running, its kinds and details refine the answer (`enrichedBy` names it)."""
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
    """Find every reference to the symbol at a position, across the whole workspace, using the language's
    server (basedpyright for Python, tsserver for TypeScript/JavaScript, configured servers for others).
    Returns `{symbol, references: [{path, locations: [{line, character, isDeclaration?, endLine?,
    endCharacter?}]}]}`, one entry per file, 0-based positions; the end is given only where it is not the
    symbol's name on that line. The declaration comes first, marked `isDeclaration: true`. The first call starts the
    server and waits until it has loaded the project. If the answer may miss files (the server was still
    loading, no tsconfig.json, or no server for the language so text matches were used) it says
    `partial: true` with the `reason` — never an incomplete list presented as complete. References in files
    outside the workspace (libraries) are only counted, as `outsideWorkspace`."""
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
    line: Annotated[int, Field(description="Line where the refactoring applies, 0-based.", ge=0)],
    character: Annotated[int, Field(description="Character on that line, 0-based (UTF-16 units).", ge=0)],
    refactorType: Annotated[str, Field(description="One of: rename, extract_function, extract_variable.")],
    options: Annotated[
        dict[str, Any] | None,
        Field(
            description="newName (required for rename; the name of the new function/variable for extracts); "
            "endLine, endCharacter (0-based, exclusive: the end of the code to extract, starting at line/character); "
            "preview (same as the top-level preview)."
        ),
    ] = None,
    preview: Annotated[
        bool,
        Field(description="true: return the unified diff of every file it would change and write nothing."),
    ] = False,
) -> RefactorResult:
    """Refactor code at a position: `rename` the symbol there everywhere in the workspace (through the language
    server, so only real references change, not look-alike text; rope is the Python fallback), or
    `extract_function` / `extract_variable` on the code from (line, character) to (options.endLine,
    options.endCharacter) — rope for Python, tsserver's refactorings for TypeScript/JavaScript. Without an end,
    extract_function takes the statement(s) on `line` and extract_variable the whole expression around the
    position. `options.newName` names the new function/variable. With `preview: true` nothing is written and
    the result has `diff` (a unified diff of every file); otherwise every changed file is written atomically
    (journaled, so it can be undone) and the result is `{success, message, changedFiles}`. A rename is refused
    while the server has only a partial view of the project."""
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
    """Find where the symbol at a position is defined, through the language server. Returns
    `{symbol, definitions: [{path, line, character, endLine, endCharacter, lineText}]}` (0-based positions;
    `lineText` is the definition's line). Definitions in libraries outside the workspace give only the file
    name and `outsideWorkspace: true`."""
    ws = current().workspace
    from ..engines import code  # lazy: language tooling loads on first use

    return code.definition(ws, sandbox.resolve(ws, pathInProject), line, character)  # type: ignore[return-value]


@tool(
    "code",
    title="Problems in file",
    read_only=True,
    example={"pathInProject": "src/app.py"},
    errors=("not found", "language server unavailable"),
)
def get_file_problems(pathInProject: PathInProject) -> ProblemsResult:
    """The problems (errors and warnings) of one file, for checking right after an edit: ruff and basedpyright
    for Python, tsserver for TypeScript/JavaScript, the configured server for other languages, and syntax errors
    from tree-sitter for files no server handles. Returns `{path, problems: [{source, severity, code, message,
    line, character, endLine, endCharacter}], errors, warnings, sources}`; positions are 0-based (add 1 for the
    1-based line numbers of the file tools). `partial: true` with a `reason` when a server did not answer in
    time."""
    ws = current().workspace
    from ..engines import code  # lazy: language tooling loads on first use

    return code.problems(ws, sandbox.resolve(ws, pathInProject))  # type: ignore[return-value]


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
    preview: Annotated[bool, Field(description="true: return the diff and write nothing.")] = False,
) -> FormatResult:
    """Format a file with the project's formatter: ruff format for Python (honouring the project's ruff
    settings), the TypeScript server for TS/JS, the configured language server for others. Writes the file
    atomically (journaled) unless `preview`; returns `{path, changed, applied, diff?}`."""
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

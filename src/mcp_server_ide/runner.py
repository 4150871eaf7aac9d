"""Turns the tool table into callable tools, once, for every door.

Each :class:`~.registry.ToolSpec` becomes one SDK ``Tool`` (the SDK derives the input and output
schemas from the function's signature and validates arguments against them). The MCP door
serves these ``Tool`` objects as they are; the REST door and the CLI call :meth:`ToolRunner.run`,
which uses the same validation. Both run the function inside :func:`~.call.calling`, so tools
find their workspace and reporter the same way whatever door they came through.
"""

from __future__ import annotations

import functools
import inspect
import logging
import time
import typing
from collections.abc import Callable, Iterator, MutableMapping
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, InputRequiredResult, TextContent, ToolAnnotations
from pydantic import ValidationError
from pydantic_core import to_jsonable_python

from . import registry, resultform, toolcache
from .call import Call, Reporter, calling
from .engines.peer import InputNeeded
from .outschema import light_output_schema
from .registry import PAGED, PagedList, ToolFailure, ToolSpec

if TYPE_CHECKING:
    from .server import McpContext
    from .workspace import Workspace

log = logging.getLogger(__name__)

CONTEXT_KWARG = "_mcp_context"

CallFactory = Callable[["McpContext", str, dict[str, Any]], Call]
"""Makes the :class:`~.call.Call` of an MCP request: (its context, the tool, the arguments)."""


def annotations_for(spec: ToolSpec) -> ToolAnnotations:
    """The hints that differ from the MCP spec's defaults (readOnlyHint false, destructiveHint true,
    idempotentHint false, openWorldHint true), and no more. No title: the tool's own is the one
    clients show (VS Code shows ``annotations.title || title || name``); destructive and idempotent
    hints only on a tool that writes (the spec gives them meaning only when readOnlyHint is false)."""
    if spec.read_only:
        return ToolAnnotations(read_only_hint=True, open_world_hint=False if not spec.open_world else None)
    return ToolAnnotations(
        destructive_hint=False if not spec.destructive else None,
        idempotent_hint=True if spec.idempotent else None,
        open_world_hint=False if not spec.open_world else None,
    )


def read_only_refusal(spec: ToolSpec) -> ToolFailure:
    return ToolFailure(
        f"refused: {spec.name} changes the workspace and the server runs with --read-only "
        "(rule: read-only mode keeps only tools marked readOnlyHint); restart without --read-only",
        kind="refused",
    )


def scope_refusal(spec: ToolSpec, grants: frozenset[str]) -> ToolFailure:
    held = ", ".join(sorted(grants)) or "none"
    return ToolFailure(
        f"refused: {spec.name} needs a token with the '{spec.scope}' scope; this one has {held} (rule: "
        "read-only tools need read, changes need write, commands, jobs and terminals need run); "
        f"use a token created with --scope {spec.scope}",
        kind="refused",
    )


ToolPatch = Callable[[ToolSpec, Tool], None]


class LazyTools(MutableMapping[str, Tool]):
    """The SDK ``Tool`` of each tool, built the first time it is needed.

    Building one (pydantic models for its arguments and result) costs ~1.7 ms; a first call after
    start-up needs one tool, not all 69, so the server answers sooner (cold start). ``tools/list``
    and the reference page build the rest, unless the previous start kept the same listing
    (:mod:`.toolcache`). ``patches`` (icons, MCP App links...) are applied to each tool as it is
    built, so features never need the whole table up front; each comes with the name the listing
    cache keys it by (None: the listing is never cached).
    """

    def __init__(
        self,
        specs: dict[str, ToolSpec],
        build: Callable[[ToolSpec], Tool],
        *,
        read_only: bool = False,
        structured: bool = False,
        cache_listing: bool = True,
    ) -> None:
        self._specs = specs
        self._build = build
        self._built: dict[str, Tool] = {}
        self._extra: dict[str, Tool] = {}
        self.patches: list[tuple[ToolPatch, str | None]] = []
        self._read_only = read_only
        self._structured = structured
        self._cache_listing = cache_listing
        self._key: str | None = None
        self._listed: dict[str, toolcache.Listed] | None = None
        self._looked_up = False

    def values(self) -> list[Tool | toolcache.Listed]:  # pyright: ignore[reportIncompatibleMethodOverride]
        """What ``tools/list`` reads: built tools, else their cached listing, else built now.

        Not a mapping's view: the SDK's ``ToolManager.list_tools`` only iterates ``values()``, and a
        cached :class:`~.toolcache.Listed` (which has the attributes it reads) stands in for a tool
        not built yet.

        The cache is looked up at the first listing, when every ``install`` hook has run and every
        patch is known, so its key covers them all. The first full listing of a start without a
        cache is kept for the next start.
        """
        if not self._looked_up:
            self._looked_up = True
            if self._cache_listing:
                self._key = toolcache.cache_key(
                    self._specs.values(),
                    read_only=self._read_only,
                    structured=self._structured,
                    patches=[k for _, k in self.patches],
                )
            self._listed = toolcache.load(self._key) if self._key else None
        listed = self._listed or {}
        out: list[Tool | toolcache.Listed] = [
            self._built.get(n) or self._extra.get(n) or listed.get(n) or self[n] for n in self
        ]
        if self._key and self._listed is None and len(self._built) == len(self._specs):
            toolcache.save(self._key, [self._built[n] for n in self._specs])
        return out

    def add_patch(self, patch: ToolPatch, cache_key: str | None) -> None:
        self.patches.append((patch, cache_key))
        for name, tool in list(self._built.items()):
            patch(self._specs[name], tool)
        if self._looked_up:  # a patch after the first listing: the listing kept is not this one
            self._key, self._listed = None, None

    def __getitem__(self, name: str) -> Tool:
        tool = self._built.get(name) or self._extra.get(name)
        if tool is not None:
            return tool
        spec = self._specs[name]  # KeyError for an unknown tool, as a dict would
        tool = self._build(spec)
        for patch, _ in self.patches:
            patch(spec, tool)
        self._built[name] = tool
        return tool

    def __setitem__(self, name: str, tool: Tool) -> None:
        self._extra[name] = tool  # a tool added straight to the SDK (not through the registry)

    def __delitem__(self, name: str) -> None:
        if name in self._extra:
            del self._extra[name]
            return
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        yield from self._specs
        yield from (n for n in self._extra if n not in self._specs)

    def __len__(self) -> int:
        return len(self._specs) + sum(1 for n in self._extra if n not in self._specs)

    def __contains__(self, name: object) -> bool:
        return name in self._specs or name in self._extra


class ToolRunner:
    """The enabled tools, each with its SDK ``Tool`` (schemas, validation, result conversion).

    ``structured``: publish output schemas and send ``structuredContent`` (``--structured-content``);
    by default every result is one compact JSON text block (:mod:`.resultform` says why).
    """

    def __init__(
        self,
        specs: list[ToolSpec],
        make_call: CallFactory,
        *,
        read_only: bool = False,
        structured: bool = False,
        cache_listing: bool = True,
    ) -> None:
        self.specs = {s.name: s for s in specs}
        self.read_only = read_only
        self.structured = structured
        self._make_call = make_call
        self.observers: list[Callable[[str, str, float], None]] = []
        """Called after every tool call with (tool, outcome: ``ok``/``error``/``refused``..., seconds)."""
        self._shapes: dict[str, Callable[[object], object]] = {}
        self.sdk = LazyTools(
            self.specs,
            self._sdk_tool,
            read_only=read_only,
            structured=structured,
            cache_listing=cache_listing,
        )

    def patch_tools(self, patch: ToolPatch, *, cache_key: str | None = None) -> None:
        """Adjust every SDK tool (icons, ``_meta``...) as it is built, and those already built.

        ``cache_key`` names the patch and everything its effect reads beyond this package's code and
        the tool's spec, for the listing cache (:mod:`.toolcache`); without one (a plugin's patch) the
        listing is built at every start.
        """
        self.sdk.add_patch(patch, cache_key)

    def input_schema(self, name: str) -> dict[str, Any]:
        return self.sdk[name].parameters

    def output_schema(self, name: str) -> dict[str, Any] | None:
        return self.sdk[name].output_schema

    async def run(self, name: str, arguments: dict[str, Any], call: Call) -> object:
        """Validate and run a tool for a door without an MCP session; returns JSON-ready data
        (a :class:`~.registry.PagedList` for a paged tool)."""
        spec = self.specs.get(name)
        if spec is None:
            raise ToolFailure(
                f"unknown tool {name!r} (GET /mcp/list_tools lists the tools this server has)",
                kind="not_found",
            )
        sdk = self.sdk[name]
        try:
            validated = sdk.fn_metadata.validate_arguments(arguments)
        except ValidationError as exc:
            raise ToolFailure(argument_error(name, exc, sdk.parameters)) from None
        call.tool, call.arguments = name, arguments
        result = await self._invoke(spec, validated, call)
        if isinstance(result, PagedList):
            # The REST door turns page_fields() into extra envelope keys beside "status".
            return result.with_items(to_jsonable_python(list(result), by_alias=True))
        return to_jsonable_python(result, by_alias=True)

    def _sdk_tool(self, spec: ToolSpec) -> Tool:
        base = Tool.from_function(
            spec.fn,
            name=spec.name,
            title=spec.title,
            description=spec.description,
            annotations=annotations_for(spec),
            meta=spec.meta,
            structured_output=spec.structured if self.structured else False,
        )
        base = _ide_tool(_forbid_unknown_arguments(base))

        paged_item = _paged_item_type(spec)
        metadata = base.fn_metadata
        if paged_item is not None and self.structured:
            metadata = _paged_metadata(base, spec.name, paged_item)
        with_schema = metadata.output_schema is not None  # only with --structured-content
        wrapped = metadata.wrap_output

        def shape(result: object) -> object:
            """The tool's return value as the SDK's result conversion should see it (see resultform)."""
            if isinstance(result, CallToolResult | InputRequiredResult):
                return result
            if with_schema:
                if paged_item is not None:
                    return resultform.structured_result(
                        resultform.page_structured(resultform.as_page(result))
                    )
                data = resultform.jsonable(result)
                return resultform.structured_result({"result": data} if wrapped else data)
            if paged_item is not None:
                page = resultform.page_value(resultform.as_page(result))
                return resultform.text_result(resultform.compact_json(page))
            if result is None or isinstance(result, str) or resultform.is_content(result):
                return result  # text as it is; content blocks (images, resources...) as the SDK makes them
            return resultform.compact_json(result)

        async def mcp_entry(**kwargs: Any) -> object:
            ctx: McpContext = kwargs.pop(CONTEXT_KWARG)
            try:
                call = self._make_call(ctx, spec.name, dict(kwargs))
                result = await self._invoke(spec, kwargs, call)
                return shape(result)
            except InputNeeded as need:  # 2026-07-28: ask the client, then it calls again
                return need.result()
            except ToolFailure as failure:  # the SDK shows a ToolError's text, and hides any other's
                raise registry.sdk_error(failure) from failure

        if metadata.output_schema is not None:
            light = light_output_schema(metadata.output_schema)
            if light != metadata.output_schema:  # published light; results still validated in full
                metadata = type(metadata)(
                    arg_model=metadata.arg_model,
                    output_model=metadata.output_model,
                    output_schema=light,
                    wrap_output=metadata.wrap_output,
                )
        update = {"fn": mcp_entry, "is_async": True, "context_kwarg": CONTEXT_KWARG, "fn_metadata": metadata}
        self._shapes[spec.name] = shape
        return base.model_copy(update=update)

    def direct_call(self, name: str, arguments: dict[str, Any], call: Call) -> CallToolResult | None:
        """Run an inline read-only tool at once and give the ``CallToolResult`` the SDK's ``tools/call``
        would give (same validation, same result conversion, same error text); the direct stdio lane
        (:mod:`.doors.directlane`) uses it. None when the SDK must answer instead: not such a tool, or
        arguments it refuses (its refusal text is the one clients know)."""
        spec = self.specs.get(name)
        if spec is None or not direct_eligible(spec):
            return None
        sdk = self.sdk[name]
        try:
            validated = sdk.fn_metadata.validate_arguments(arguments)
        except (ValidationError, ValueError):
            return None
        if not runs_inline(spec, validated, call):
            return None  # this call is not a bounded one (a walk, a large file): the SDK runs it on a thread
        try:
            result = self._shapes[name](self._run_inline(spec, validated, call))
            converted = sdk.fn_metadata.convert_result(result)
        except MCPError:
            raise  # a JSON-RPC error, as the SDK answers it
        except (ToolFailure, ToolError, ResourceError) as exc:  # as the SDK's Tool.run words them
            log.info("Tool %r failed: %r", name, f"Error executing tool {name}: {exc}")
            return _error_result(f"Error executing tool {name}: {exc}")
        except Exception:
            log.exception("Tool %r raised an unexpected exception", name)
            return _error_result(f"Error executing tool {name}")
        return converted if isinstance(converted, CallToolResult) else None

    def _run_inline(self, spec: ToolSpec, kwargs: dict[str, Any], call: Call) -> object:
        """Run an inline tool on the caller's thread (the direct lane's way of calling)."""
        if self.read_only and not spec.read_only:
            raise read_only_refusal(spec)
        with calling(call):
            return _valid_unicode(spec.fn(**kwargs))

    async def _invoke(self, spec: ToolSpec, kwargs: dict[str, Any], call: Call) -> object:
        if call.workspace.policy.hosted:
            return await self._invoke_hosted(spec, kwargs, call)
        return await self._invoke_observed(spec, kwargs, call)

    async def _invoke_hosted(self, spec: ToolSpec, kwargs: dict[str, Any], call: Call) -> object:
        """A hosted project's call: its answer names the root ``/workspace`` (:mod:`.hostpaths`)."""
        from .hostpaths import masked, masked_text

        root = str(call.workspace.root)
        try:
            result = await self._invoke_observed(spec, kwargs, call)
        except ToolFailure as failure:
            shown = masked_text(str(failure), root)
            if shown == str(failure):
                raise
            raise ToolFailure(shown, kind=failure.kind) from None
        if isinstance(result, PagedList):
            return result.with_items(masked(list(result), root))  # pyright: ignore[reportArgumentType]
        return masked(result, root)

    async def _invoke_observed(self, spec: ToolSpec, kwargs: dict[str, Any], call: Call) -> object:
        if not self.observers:
            return await self._invoke_now(spec, kwargs, call)
        started, outcome = time.perf_counter(), "error"
        try:
            result = await self._invoke_now(spec, kwargs, call)
            outcome = "ok"
            return result
        except ToolFailure as failure:
            outcome = failure.kind
            raise
        finally:
            for observe in self.observers:
                observe(spec.name, outcome, time.perf_counter() - started)

    async def _invoke_now(self, spec: ToolSpec, kwargs: dict[str, Any], call: Call) -> object:
        if call.grants is not None and spec.scope not in call.grants:
            raise scope_refusal(spec, call.grants)
        if not inspect.iscoroutinefunction(spec.fn) and runs_inline(spec, kwargs, call):
            # Bounded local I/O: a thread hop would cost more than the work.
            return self._run_inline(spec, kwargs, call)
        if self.read_only and not spec.read_only:
            raise read_only_refusal(spec)
        with calling(call):
            if inspect.iscoroutinefunction(spec.fn):
                try:
                    return _valid_unicode(await spec.fn(**kwargs))
                except anyio.get_cancelled_exc_class():
                    call.cancelled.set()
                    raise
            # anyio copies the context into the worker thread, so `current()` works there too.
            # On cancellation the caller gets its answer at once; `call.cancelled` tells the
            # thread (and the process engine) to stop the work itself.
            try:
                result = await anyio.to_thread.run_sync(
                    functools.partial(spec.fn, **kwargs), abandon_on_cancel=True
                )
                return _valid_unicode(result)
            except anyio.get_cancelled_exc_class():
                call.cancelled.set()
                raise


def direct_eligible(spec: ToolSpec) -> bool:
    """Whether the direct lane may answer calls to this tool: inline (bounded local work, no thread,
    no progress, nothing to cancel; for some calls at least), read-only, and not hidden until a
    workspace feature shows up."""
    return (
        bool(spec.inline)
        and spec.read_only
        and not spec.requires
        and not inspect.iscoroutinefunction(spec.fn)
    )


def runs_inline(spec: ToolSpec, arguments: dict[str, Any], call: Call) -> bool:
    """Whether this call of the tool runs inline (``spec.inline``, or its verdict on the arguments, given
    inside the call so that it can look at the workspace, e.g. stat the file a read names)."""
    inline = spec.inline
    if not callable(inline):
        return inline
    with calling(call):
        return bool(inline(arguments))


def _error_result(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def _forbid_unknown_arguments(base: Tool) -> Tool:
    """Refuse arguments the tool does not take instead of dropping them (SECURITY.md §5): a misspelt
    ``expectedHash`` or ``replaceAll`` must fail loudly, not silently run without its guard."""
    loose = base.fn_metadata.arg_model
    strict = type(
        loose.__name__,
        (loose,),
        {"__module__": loose.__module__, "model_config": {**loose.model_config, "extra": "forbid"}},
    )
    return base.model_copy(update={"fn_metadata": base.fn_metadata.model_copy(update={"arg_model": strict})})


class _IdeTool(Tool):
    """The SDK's ``Tool``, with argument errors worded as every door words them (:func:`argument_error`)
    instead of pydantic's own text (its error count, input value and documentation URL)."""

    async def run(self, arguments: dict[str, Any], context: Any, convert_result: bool = False) -> Any:
        try:
            return await super().run(arguments, context, convert_result)
        except ToolError as exc:
            # The SDK raises a plain ToolError from the argument model's ValidationError for bad
            # arguments; a failure of the tool body or of its result is another type or cause.
            if type(exc) is ToolError and isinstance(exc.__cause__, ValidationError):
                text = argument_error(self.name, exc.__cause__, self.parameters)
                raise ToolError(f"Error executing tool {self.name}: {text}") from exc.__cause__
            raise


def _ide_tool(base: Tool) -> Tool:
    return _IdeTool.model_construct(
        base.model_fields_set, **{name: getattr(base, name) for name in Tool.model_fields}
    )


def _valid_unicode(value: object) -> object:
    """Make every string of a result valid Unicode, in place.

    File names that are not valid UTF-8 reach Python as lone surrogates (``os`` decodes bytes with
    ``surrogateescape``); JSON cannot carry them and the whole answer would fail. They are shown with
    U+FFFD instead, as ripgrep shows them.
    """
    if isinstance(value, str):
        if value.isascii():
            return value
        try:
            # Any surrogate code point fails UTF-16 as it fails UTF-8, and the UTF-16 encoder is
            # ~5x faster on the 2-byte strings most non-ASCII text is (a 47 KB file: 10 µs, not 55).
            value.encode("utf-16-le")
        except UnicodeEncodeError:
            try:
                return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            except UnicodeEncodeError:
                return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
        return value
    if isinstance(value, list):
        for i, item in enumerate(value):
            if not (isinstance(item, str) and item.isascii()):
                fixed = _valid_unicode(item)
                if fixed is not item:
                    value[i] = fixed
    elif isinstance(value, dict):
        for key, item in value.items():
            if not (isinstance(item, str) and item.isascii()):
                fixed = _valid_unicode(item)
                if fixed is not item:
                    value[key] = fixed
    return value


def _paged_item_type(spec: ToolSpec) -> type | None:
    """The item type of a tool annotated ``-> PagedList[Item]``, else None."""
    try:
        hints = typing.get_type_hints(spec.fn, include_extras=True)
    except Exception:
        return None
    ret = hints.get("return")
    if typing.get_origin(ret) is typing.Annotated and PAGED in getattr(ret, "__metadata__", ()):
        return typing.get_args(typing.get_args(ret)[0])[0]
    return None


def _paged_metadata(base: Tool, name: str, item: type) -> FuncMetadata:
    """The SDK metadata of a paged tool, with total/truncated/nextOffset in its output schema."""
    from pydantic import Field, create_model

    model = create_model(
        f"{name}Output",
        # The item type is a value found at run time: no static type can name it.
        result=(list[item], Field(description="The items of this page.")),  # pyright: ignore[reportInvalidTypeForm]
        total=(int, Field(description="How many items there are in all (over every page).")),
        truncated=(bool, Field(description="True when more items exist beyond this page, or it is partial.")),
        nextOffset=(int | None, Field(default=None, description="The offset of the next page, if any.")),
        note=(str | None, Field(default=None, description="Why the list stopped early, when it did.")),
    )
    return type(base.fn_metadata)(arg_model=base.fn_metadata.arg_model, output_model=model, wrap_output=True)


def argument_error(name: str, exc: ValidationError, schema: dict[str, Any]) -> str:
    """Arguments the schema refuses, in words that name the rule and the fix (every door's text)."""
    props: dict[str, Any] = schema.get("properties", {})
    parts, list_params = [], False
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        if err["type"] == "missing":
            kind = _kind(props.get(where, {}))
            parts.append(f"'{where}' is required" + (f" ({kind})" if kind else ""))
            list_params = True
        elif err["type"] in ("extra_forbidden", "unexpected_keyword_argument"):
            parts.append(f"'{where}' is not a parameter of {name}")
            list_params = True
        else:
            got = repr(err.get("input"))
            got = got if len(got) <= 40 else got[:37] + "..."
            parts.append(f"'{where}': {err['msg'][:1].lower()}{err['msg'][1:]}, got {got}")
    text = "invalid parameters: " + "; ".join(parts)
    if list_params:
        required = set(schema.get("required", ()))
        names = [f"{p} (required)" if p in required else p for p in props]
        text += f"; {name} takes " + (", ".join(names) if names else "no parameters")
    return text


def _kind(prop: dict[str, Any]) -> str:
    """A parameter's JSON type in a word or two (``string``, ``integer or null``...)."""
    if "enum" in prop:
        return "one of " + ", ".join(map(repr, prop["enum"]))
    if isinstance(prop.get("type"), str):
        return prop["type"]
    kinds = [k.get("type") for k in prop.get("anyOf", ()) if isinstance(k, dict) and k.get("type") != "null"]
    return " or ".join(k for k in kinds if isinstance(k, str))


HOSTED_ONLY = "mcp_server_ide.hosted."
"""Tools defined here (the owner tools) serve only a server that loads them as a plugin (hosted mode)."""


def enabled_specs(selection: list[str] | None = None, plugins: list[str] | None = None) -> list[ToolSpec]:
    """The built-in tools plus those of this server's ``--plugin`` modules, less a ``--tools`` selection
    (names, categories or sets of :mod:`.toolsets`, ``-name`` removes; an entry naming nothing raises
    :class:`~.toolsets.UnknownToolEntry`). A plugin another server in the same process loaded stays
    out of this one."""
    from . import toolsets

    own = tuple(plugins or ())
    specs = [
        s
        for s in registry.all_tools()
        if (s.fn.__module__.startswith("mcp_server_ide.") and not s.fn.__module__.startswith(HOSTED_ONLY))
        or any(s.fn.__module__ == p or s.fn.__module__.startswith(p + ".") for p in own)
    ]
    if not selection:
        return specs
    selection = toolsets.expand(
        selection, (s.name for s in specs), {*registry.CATEGORIES, *(s.category for s in specs)}
    )
    include = [s for s in selection if not s.startswith("-")]
    exclude = {s[1:] for s in selection if s.startswith("-")}
    if include:
        wanted = set(include)
        specs = [s for s in specs if s.name in wanted or s.category in wanted]
    return [s for s in specs if s.name not in exclude and s.category not in exclude]


def make_local_call(ws: Workspace, door: str, reporter: Reporter | None = None) -> Call:
    from .call import SilentReporter

    return Call(workspace=ws, door=door, reporter=reporter or SilentReporter())

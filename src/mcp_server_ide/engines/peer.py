"""Asking the client of the running call: elicitation, sampling, roots, on both protocol eras.

- 2025-11-25 (handshake): the server sends ``elicitation/create`` / ``sampling/createMessage`` /
  ``roots/list`` in the middle of the call and waits for the answer.
- 2026-07-28 (stateless): servers may not send requests. The call ends with an
  ``InputRequiredResult`` carrying the question; the client asks the person (or its model),
  then sends the same ``tools/call`` again with ``inputResponses`` and the echoed
  ``requestState``. The tool runs again from the start and this time finds the answer. This is
  the same wire form the SDK's ``Resolve(...)`` parameters produce; it is driven from here
  because a tool only knows *during* its run whether it must ask (the file was not read, the
  workspace is untrusted...). ``requestState`` is sealed by the SDK (AES-GCM, bound to the
  request), so earlier answers carried in it cannot be forged by the client.

Tools and engines call :func:`elicit`, :func:`sample`, :func:`list_roots` (async) or their
``*_sync`` forms from worker threads. ``None`` / :class:`PeerUnavailable` mean the client
cannot be asked; callers decide what that means (``confirm`` applies the workspace policy).
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import json
import logging
import weakref
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio.from_thread
from mcp_types import (
    CreateMessageRequest,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
    ListRootsRequest,
    ListRootsResult,
    ModelPreferences,
    SamplingMessage,
    TextContent,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

from ..call import current_or_none
from .failures import ToolFailure

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)


class PeerUnavailable(ToolFailure):
    """The client of this call does not offer the capability (sampling, elicitation, roots)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="unavailable")


class InputNeeded(Exception):
    """Raised inside a 2026-era call that must ask the client first; the runner turns it into
    the call's ``InputRequiredResult``. Never caught by tools."""

    def __init__(self, key: str, request: Any, state: str) -> None:
        super().__init__(f"input required: {key}")
        self.key = key
        self.request = request
        self.state = state

    def result(self) -> InputRequiredResult:
        return InputRequiredResult(input_requests={self.key: self.request}, request_state=self.state)


@dataclass
class _Rounds:
    """What this call has learned from earlier rounds (decoded from ``requestState``)."""

    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    """key -> {"q": question digest, "a": the answer's wire JSON}"""
    asked: dict[str, str] = field(default_factory=dict)


def mcp_context() -> Any:
    """The SDK ``Context`` of the running MCP call, or None (REST/CLI doors, no call)."""
    call = current_or_none()
    if call is None:
        return None
    return getattr(call.reporter, "ctx", None)


def _caps(ctx: Any) -> Any:
    try:
        return ctx.client_capabilities
    except Exception:
        return None


def can_elicit(ctx: Any) -> bool:
    caps = _caps(ctx)
    el = getattr(caps, "elicitation", None) if caps is not None else None
    return el is not None and (el.form is not None or el.url is None)


def can_sample(ctx: Any) -> bool:
    caps = _caps(ctx)
    return caps is not None and getattr(caps, "sampling", None) is not None


def can_list_roots(ctx: Any) -> bool:
    caps = _caps(ctx)
    return caps is not None and getattr(caps, "roots", None) is not None


def _modern(ctx: Any) -> bool:
    """True on the 2026-07-28 era (the SDK ``Context``'s negotiated ``protocol_version``)."""
    return getattr(ctx, "protocol_version", None) in MODERN_PROTOCOL_VERSIONS


def _digest(request: Any) -> str:
    params = (
        request.params.model_dump(mode="json", by_alias=True, exclude_none=True) if request.params else None
    )
    raw = json.dumps(params, sort_keys=True, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(hashlib.sha256(raw).digest()[:12]).decode().rstrip("=")


_ROUNDS: weakref.WeakKeyDictionary[object, _Rounds] = weakref.WeakKeyDictionary()
"""Each call's rounds of questions, by what the call is known by (its reporter, else the context)."""


def _rounds(ctx: Any) -> _Rounds:
    call = current_or_none()
    holder = call.reporter if call is not None else ctx
    rounds = _ROUNDS.get(holder)
    if rounds is None:
        rounds = _Rounds()
        raw = getattr(ctx, "request_state", None)
        if raw:
            try:
                data = json.loads(raw)
                if data.get("v") == 1:
                    rounds.answers = dict(data.get("answers") or {})
                    rounds.asked = dict(data.get("asked") or {})
            except (ValueError, AttributeError):
                log.debug("ignoring an unreadable requestState")
        with contextlib.suppress(TypeError):  # a holder that takes no weak reference asks afresh
            _ROUNDS[holder] = rounds
    return rounds


async def _ask(ctx: Any, kind: str, request: Any, result_type: type[M], key: str | None = None) -> M:
    """Ask on the 2026 era: an earlier round's answer, else raise :class:`InputNeeded`."""
    q = _digest(request)
    key = key or f"{kind}-{q}"
    rounds = _rounds(ctx)
    recorded = rounds.answers.get(key)
    if recorded is not None and recorded.get("q") == q:
        return result_type.model_validate(recorded["a"])
    responses = getattr(ctx, "input_responses", None) or {}
    answer = responses.get(key)
    if answer is not None and rounds.asked.get(key) == q:
        wire = answer.model_dump(mode="json", by_alias=True, exclude_none=True)
        parsed = result_type.model_validate(wire)
        rounds.answers[key] = {"q": q, "a": wire}
        return parsed
    asked = {**rounds.asked, key: q}
    state = json.dumps({"v": 1, "answers": rounds.answers, "asked": asked}, separators=(",", ":"))
    raise InputNeeded(key, request, state)


async def elicit(
    message: str, schema: type[M] | dict[str, Any], *, key: str | None = None
) -> ElicitResult | None:
    """Ask the person a question with a form. None when this client cannot be asked.

    ``schema`` is a pydantic model (flat, primitive fields) or a ready JSON schema.
    On the 2026 era this may raise :class:`InputNeeded` (let it propagate).
    """
    ctx = mcp_context()
    if ctx is None or not can_elicit(ctx):
        return None
    if isinstance(schema, dict):
        json_schema = schema
    else:
        from mcp.server.elicitation import render_elicitation_schema

        json_schema = render_elicitation_schema(schema)
    request = ElicitRequest(params=ElicitRequestFormParams(message=message, requested_schema=json_schema))
    if _modern(ctx):
        return await _ask(ctx, "elicit", request, ElicitResult, key)
    try:
        return await ctx.session.send_request(request, ElicitResult, metadata=_related(ctx))
    except Exception:
        log.debug("elicitation failed", exc_info=True)
        return None


async def sample(
    prompt: str | list[SamplingMessage],
    *,
    max_tokens: int,
    system_prompt: str | None = None,
    temperature: float | None = None,
    model_hints: list[str] | None = None,
    key: str | None = None,
) -> CreateMessageResult:
    """Ask the client's language model (``sampling/createMessage``).

    Raises :class:`PeerUnavailable` when the client offers no sampling.
    """
    ctx = mcp_context()
    if ctx is not None and not can_sample(ctx) and _modern(ctx):
        raise missing_capability("sampling")
    if ctx is None or not can_sample(ctx):
        raise PeerUnavailable(
            "unavailable: this client does not offer sampling (rule: drafting text needs the client's model "
            "through MCP sampling; use a client with sampling, e.g. VS Code, or write the text yourself)"
        )
    messages = (
        [SamplingMessage(role="user", content=TextContent(type="text", text=prompt))]
        if isinstance(prompt, str)
        else prompt
    )
    prefs = None
    if model_hints:
        from mcp_types import ModelHint

        prefs = ModelPreferences(hints=[ModelHint(name=h) for h in model_hints])
    params = CreateMessageRequestParams(
        messages=messages,
        max_tokens=max_tokens,
        system_prompt=system_prompt,
        temperature=temperature,
        model_preferences=prefs,
    )
    request = CreateMessageRequest(params=params)
    if _modern(ctx):
        return await _ask(ctx, "sample", request, CreateMessageResult, key)
    from mcp.shared.exceptions import NoBackChannelError

    try:
        return await ctx.session.send_request(request, CreateMessageResult, metadata=_related(ctx))
    except NoBackChannelError:
        raise PeerUnavailable(
            "unavailable: this connection cannot carry a sampling request (stateless HTTP on the 2025 protocol); "
            "connect with a session or with the 2026-07-28 protocol"
        ) from None


async def list_roots(*, key: str | None = None) -> ListRootsResult | None:
    """The client's roots, or None when it has none to offer."""
    ctx = mcp_context()
    if ctx is None or not can_list_roots(ctx):
        return None
    request = ListRootsRequest()
    if _modern(ctx):
        return await _ask(ctx, "roots", request, ListRootsResult, key)
    return await ctx.session.send_request(request, ListRootsResult, metadata=_related(ctx))


def missing_capability(name: str) -> Exception:
    """The 2026-07-28 answer to a call that needs a capability the request did not declare (-32021)."""
    from mcp.shared.exceptions import MCPError
    from mcp_types import (
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        ClientCapabilities,
        ElicitationCapability,
        MissingRequiredClientCapabilityErrorData,
        RootsCapability,
        SamplingCapability,
    )

    required = {
        "sampling": ClientCapabilities(sampling=SamplingCapability()),
        "elicitation": ClientCapabilities(elicitation=ElicitationCapability()),
        "roots": ClientCapabilities(roots=RootsCapability()),
    }[name]
    data = MissingRequiredClientCapabilityErrorData(required_capabilities=required)
    return MCPError(
        code=MISSING_REQUIRED_CLIENT_CAPABILITY,
        message=f"this call needs the client's {name} capability, which the request did not declare",
        data=data.model_dump(by_alias=True, mode="json", exclude_none=True),
    )


def _related(ctx: Any) -> Any:
    from mcp.shared.message import ServerMessageMetadata

    try:
        return ServerMessageMetadata(related_request_id=ctx.request_id)
    except Exception:
        return None


def elicit_sync(message: str, schema: type[M] | dict[str, Any]) -> ElicitResult | None:
    """:func:`elicit` from a sync tool (a worker thread)."""
    if mcp_context() is None:
        return None
    return anyio.from_thread.run(elicit, message, schema)


def sample_sync(prompt: str | list[SamplingMessage], **kwargs: Any) -> CreateMessageResult:
    """:func:`sample` from a sync tool (a worker thread)."""
    return anyio.from_thread.run(functools.partial(sample, prompt, **kwargs))


def text_of(result: CreateMessageResult) -> str:
    content = result.content
    items = content if isinstance(content, list) else [content]
    return "".join(getattr(c, "text", "") for c in items)

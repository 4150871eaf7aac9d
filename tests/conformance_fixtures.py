"""The MCP conformance suite's fixture names, as a ``--plugin`` module (tests only).

``@modelcontextprotocol/conformance`` calls tools, resources and prompts by fixed names
(``test_simple_text``, ``test://static-text``, ``test_simple_prompt``…). Loading this module with
``mcp-server-ide --plugin tests.conformance_fixtures`` puts them into the real server through the
same plugin API users get, so the suite tests our server rather than a stand-in.
"""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.prompts.base import UserMessage
from mcp_types import AudioContent, EmbeddedResource, ImageContent, TextContent, TextResourceContents
from pydantic import Field

from mcp_server_ide import plugin

# A 1x1 red PNG and a tiny silent WAV.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
WAV = base64.b64decode("UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=")


def _image() -> ImageContent:
    return ImageContent(type="image", data=base64.b64encode(PNG).decode(), mime_type="image/png")


# ----------------------------------------------------------------------------- tools


@plugin.tool(read_only=True, structured=False)
def test_simple_text() -> str:
    """Returns a fixed text (conformance fixture)."""
    return "This is a simple text response for testing."


@plugin.tool(read_only=True, structured=False)
def test_image_content() -> list[ImageContent]:
    """Returns a 1x1 PNG (conformance fixture)."""
    return [_image()]


@plugin.tool(read_only=True, structured=False)
def test_audio_content() -> list[AudioContent]:
    """Returns a tiny WAV (conformance fixture)."""
    return [AudioContent(type="audio", data=base64.b64encode(WAV).decode(), mime_type="audio/wav")]


@plugin.tool(read_only=True, structured=False)
def test_embedded_resource() -> list[EmbeddedResource]:
    """Returns an embedded text resource (conformance fixture)."""
    return [
        EmbeddedResource(
            type="resource",
            resource=TextResourceContents(
                uri="test://embedded-resource",
                mime_type="text/plain",
                text="This is an embedded resource content.",
            ),
        )
    ]


@plugin.tool(read_only=True, structured=False)
def test_multiple_content_types() -> list[TextContent | ImageContent | EmbeddedResource]:
    """Returns text, an image and a resource (conformance fixture)."""
    return [
        TextContent(type="text", text="Multiple content types test:"),
        _image(),
        EmbeddedResource(
            type="resource",
            resource=TextResourceContents(
                uri="test://mixed-content-resource",
                mime_type="application/json",
                text=json.dumps({"test": "data", "value": 123}),
            ),
        ),
    ]


@plugin.tool(read_only=True, structured=False)
async def test_tool_with_logging() -> str:
    """Sends three info log messages while it runs (conformance fixture)."""
    await plugin.log("info", "Tool execution started")
    await asyncio.sleep(0.05)
    await plugin.log("info", "Tool processing data")
    await asyncio.sleep(0.05)
    await plugin.log("info", "Tool execution completed")
    return "Tool with logging executed successfully"


@plugin.tool(read_only=True, structured=False)
async def test_tool_with_progress() -> str:
    """Reports progress 0, 50, 100 of 100 (conformance fixture)."""
    for done in (0, 50, 100):
        await plugin.progress(done, 100, f"{done}%")
        if done < 100:
            await asyncio.sleep(0.05)
    return "Tool with progress executed successfully"


@plugin.tool(read_only=True, structured=False)
def test_error_handling() -> str:
    """Always fails (conformance fixture)."""
    raise plugin.ToolFailure("This tool intentionally returns an error for testing")


@plugin.tool(read_only=True, structured=False)
async def test_sampling(prompt: str) -> str:
    """Asks the client's model (conformance fixture)."""
    result = await plugin.sample(prompt, max_tokens=100)
    return f"LLM response: {plugin.text_of(result)}"


@plugin.tool(read_only=True, structured=False)
async def test_elicitation(message: str) -> str:
    """Asks the person for a username and an email (conformance fixture)."""
    schema = {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    }
    result = await plugin.elicit(message, schema)
    if result is None:
        raise plugin.ToolFailure("this client does not support elicitation")
    return f"User response: action={result.action}, content={json.dumps(result.content)}"


@plugin.tool(read_only=True, structured=False)
async def test_elicitation_sep1034_defaults() -> str:
    """Elicitation with a default for every primitive type (conformance fixture)."""
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": True},
        },
        "required": [],
    }
    result = await plugin.elicit("Please review and update the form fields with defaults", schema)
    if result is None:
        raise plugin.ToolFailure("this client does not support elicitation")
    return f"Elicitation completed: action={result.action}, content={json.dumps(result.content)}"


@plugin.tool(read_only=True, structured=False)
async def test_elicitation_sep1330_enums() -> str:
    """Elicitation with the five enum forms (conformance fixture)."""
    schema = {
        "type": "object",
        "properties": {
            "untitledSingle": {
                "type": "string",
                "description": "Untitled single-select",
                "enum": ["option1", "option2", "option3"],
            },
            "titledSingle": {
                "type": "string",
                "description": "Titled single-select",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"},
                ],
            },
            "legacyEnum": {
                "type": "string",
                "description": "Legacy titled enum",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "description": "Untitled multi-select",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
            },
            "titledMulti": {
                "type": "array",
                "description": "Titled multi-select",
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"},
                    ]
                },
            },
        },
        "required": [],
    }
    result = await plugin.elicit("Please select options from the enum fields", schema)
    if result is None:
        raise plugin.ToolFailure("this client does not support elicitation")
    return f"Elicitation completed: action={result.action}, content={json.dumps(result.content)}"


@plugin.tool(read_only=True, structured=False)
async def test_reconnection() -> str:
    """Closes the SSE stream mid-call so the client resumes it (conformance fixture, SEP-1699)."""
    ctx = plugin.mcp_context()
    await asyncio.sleep(0.1)
    if ctx is not None:
        await ctx.close_sse_stream()
    await asyncio.sleep(0.3)
    return "Reconnection test completed"


# ----------------------------------------------------------------------------- 2026-07-28 input-required fixtures
# (0.2.0 alpha). The server's own engine (mcp_server_ide.engines.peer) turns each question into an
# InputRequiredResult on that era; the keys are the ones the suite expects.


@plugin.tool(read_only=True, structured=False)
async def test_input_required_result_elicitation() -> str:
    """Asks the person's name (input-required fixture)."""
    schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    result = await plugin.elicit("What is your name?", schema, key="user_name")
    if result is None:
        raise plugin.ToolFailure("this client does not support elicitation")
    return f"Hello, {(result.content or {}).get('name', 'stranger')}!"


@plugin.tool(read_only=True, structured=False)
async def test_input_required_result_sampling() -> str:
    """Asks the client's model a question (input-required fixture)."""
    result = await plugin.sample("What is the capital of France?", max_tokens=50, key="capital_question")
    return f"LLM response: {plugin.text_of(result)}"


@plugin.tool(read_only=True, structured=False)
async def test_input_required_result_list_roots() -> str:
    """Asks the client's roots (input-required fixture)."""
    result = await plugin.list_roots(key="client_roots")
    if result is None:
        raise plugin.ToolFailure("this client does not offer roots")
    return "Client roots: " + ", ".join(str(r.uri) for r in result.roots)


@plugin.tool(read_only=True, structured=False)
async def test_input_required_result_request_state() -> str:
    """Asks a confirmation; the answer comes back with the sealed requestState (input-required fixture)."""
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    result = await plugin.elicit("Please confirm", schema, key="confirm")
    if result is None:
        raise plugin.ToolFailure("this client does not support elicitation")
    return f"state-ok: action={result.action}"


@plugin.tool(read_only=True, structured=False)
async def test_input_required_result_tampered_state() -> str:
    """Like request_state; a tampered requestState is refused by the SDK's sealing boundary."""
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    result = await plugin.elicit("Please confirm", schema, key="confirm")
    return f"confirmed: {result.action if result else 'unknown'}"


@plugin.tool(read_only=True, structured=False)
async def test_input_required_result_multi_round() -> str:
    """Two questions in two rounds (input-required fixture)."""
    name = await plugin.elicit(
        "Step 1: What is your name?",
        {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        key="step1",
    )
    color = await plugin.elicit(
        "Step 2: What is your favorite color?",
        {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]},
        key="step2",
    )
    return f"name={(name.content or {}).get('name') if name else None}, color={(color.content or {}).get('color') if color else None}"


def _input_required(ctx: Any, requests: dict[str, Any]) -> Any:
    from mcp_types import InputRequiredResult

    return InputRequiredResult(input_requests=requests, request_state="fixture")


def _elicit_request(message: str, prop: str) -> Any:
    from mcp_types import ElicitRequest, ElicitRequestFormParams

    return ElicitRequest(
        params=ElicitRequestFormParams(
            message=message,
            requested_schema={"type": "object", "properties": {prop: {"type": "string"}}, "required": [prop]},
        )
    )


@plugin.tool(read_only=True, structured=False)
async def test_input_required_result_multiple_inputs() -> Any:
    """Three questions of three kinds in one round (hand-built InputRequiredResult)."""
    from mcp_types import CreateMessageRequest, CreateMessageRequestParams, ListRootsRequest, SamplingMessage

    ctx = plugin.mcp_context()
    answers = getattr(ctx, "input_responses", None) or {}
    if {"user_name", "capital_question", "client_roots"} <= set(answers):
        return "all inputs received"
    return _input_required(
        ctx,
        {
            "user_name": _elicit_request("What is your name?", "name"),
            "capital_question": CreateMessageRequest(
                params=CreateMessageRequestParams(
                    messages=[
                        SamplingMessage(
                            role="user", content=TextContent(type="text", text="Capital of France?")
                        )
                    ],
                    max_tokens=50,
                )
            ),
            "client_roots": ListRootsRequest(),
        },
    )


@plugin.tool(read_only=True, structured=False)
async def test_input_required_result_capabilities() -> Any:
    """Asks only what the request's declared capabilities allow (hand-built InputRequiredResult)."""
    from mcp_types import CreateMessageRequest, CreateMessageRequestParams, SamplingMessage

    ctx = plugin.mcp_context()
    if getattr(ctx, "input_responses", None):
        return "inputs received"
    caps = ctx.client_capabilities if ctx is not None else None
    requests: dict[str, Any] = {}
    if caps is not None and caps.sampling is not None:
        requests["capital_question"] = CreateMessageRequest(
            params=CreateMessageRequestParams(
                messages=[
                    SamplingMessage(role="user", content=TextContent(type="text", text="Capital of France?"))
                ],
                max_tokens=50,
            )
        )
    if caps is not None and caps.elicitation is not None:
        requests["user_name"] = _elicit_request("What is your name?", "name")
    if not requests:
        return "the client declared neither sampling nor elicitation"
    return _input_required(ctx, requests)


@plugin.tool(read_only=True, structured=False)
def test_custom_headers(
    region: Annotated[
        str,
        Field(
            description="Region, mirrored in the Mcp-Param-Region header",
            json_schema_extra={"x-mcp-header": "Region"},
        ),
    ],
) -> str:
    """Echoes a parameter that travels in a custom HTTP header too (SEP-2243 fixture)."""
    return f"region={region}"


@plugin.tool(read_only=True, structured=False)
async def test_missing_capability() -> str:
    """Needs sampling; without the capability the 2026 era answers -32021 (fixture)."""
    result = await plugin.sample("Say hi", max_tokens=10)
    return plugin.text_of(result)


# ----------------------------------------------------------------------------- resources


@plugin.resource(
    "test://static-text", name="static-text", description="A static text resource", mime_type="text/plain"
)
def static_text() -> str:
    return "This is the content of the static text resource."


@plugin.resource(
    "test://static-binary", name="static-binary", description="A static PNG", mime_type="image/png"
)
def static_binary() -> bytes:
    return PNG


@plugin.resource(
    "test://template/{id}/data",
    name="template-data",
    description="Data for an id",
    mime_type="application/json",
)
def template_data(id: str) -> str:
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


@plugin.resource(
    "test://watched-resource",
    name="watched-resource",
    description="A resource to subscribe to",
    mime_type="text/plain",
)
def watched() -> str:
    return "Watched resource content"


# ----------------------------------------------------------------------------- prompts


@plugin.prompt(description="A simple prompt without arguments")
def test_simple_prompt() -> list[UserMessage]:
    return [UserMessage("This is a simple prompt for testing.")]


@plugin.prompt(description="A prompt with two required arguments")
def test_prompt_with_arguments(arg1: str, arg2: str) -> list[UserMessage]:
    return [UserMessage(f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")]


@plugin.prompt(description="A prompt that embeds a resource")
def test_prompt_with_embedded_resource(resourceUri: str) -> list[UserMessage]:
    return [
        UserMessage(
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(
                    uri=resourceUri, mime_type="text/plain", text="Embedded resource content for testing."
                ),
            )
        ),
        UserMessage("Please process the embedded resource above."),
    ]


@plugin.prompt(description="A prompt with an image")
def test_prompt_with_image() -> list[UserMessage]:
    return [UserMessage(_image()), UserMessage("Please analyze the image above.")]


@plugin.prompt(description="A prompt that asks the person for context first (2026-07-28 input required)")
def test_input_required_result_prompt(ctx: Context) -> Any:
    answers = ctx.input_responses or {}
    answer = answers.get("user_context")
    if answer is None:
        return _input_required(
            ctx, {"user_context": _elicit_request("What context should the prompt use?", "context")}
        )
    context = (getattr(answer, "content", None) or {}).get("context", "")
    return [UserMessage(f"Use this context: {context}")]


@plugin.completion("prompt", "test_prompt_with_arguments", "arg1")
def complete_arg1(ws: Any, value: str, chosen: dict[str, str]) -> list[str]:
    return [v for v in ("paris", "park", "party", "test", "testValue1") if v.startswith(value)]


def install(server: Any, runner: Any, workspace_for: Any, options: Any) -> None:
    """The one fixture whose input schema must be written by hand (JSON Schema 2020-12 keywords)."""

    def json_schema_2020_12_tool(name: str = "", address: dict[str, Any] | None = None) -> str:
        return f"name={name}, address={json.dumps(address)}"

    added = server._tool_manager.add_tool(
        json_schema_2020_12_tool,
        description="Tool with JSON Schema 2020-12 features",
        structured_output=False,
    )
    added.parameters = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"},
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": False,
    }

    # Diagnostic hooks of the 2026 subscription scenarios: change the tool / prompt list and say so.
    async def test_trigger_tool_change(ctx: Context) -> str:
        name = "test_dynamic_tool"
        if server._tool_manager.get_tool(name) is None:
            server.add_tool(
                lambda: "dynamic", name=name, description="Appears after test_trigger_tool_change"
            )
        else:
            server.remove_tool(name)
        await ctx.notify_tools_changed()
        return "tool list changed"

    async def test_trigger_prompt_change(ctx: Context) -> str:
        name = "test_dynamic_prompt"
        if server._prompt_manager.get_prompt(name) is None:
            server.prompt(name=name, description="Appears after test_trigger_prompt_change")(
                lambda: "dynamic"
            )
        else:
            server.remove_prompt(name)
        await ctx.notify_prompts_changed()
        return "prompt list changed"

    server.add_tool(test_trigger_tool_change, description="Mutates the tool list (conformance hook)")
    server.add_tool(test_trigger_prompt_change, description="Mutates the prompt list (conformance hook)")

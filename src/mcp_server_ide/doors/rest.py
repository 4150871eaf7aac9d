"""The seed's REST interface (seed 000), beside standard MCP at ``/mcp``.

- ``GET|POST /mcp/initialize`` and ``/mcp/status``: JSON-RPC-shaped server and environment info.
- ``GET /mcp/list_tools``: the bare array of ``{name, description, inputSchema}``.
- ``POST /mcp/{tool}``: arguments as the body itself or as a JSON-RPC body's
  ``params.arguments``; answers ``{"status": result, "error": null}`` or
  ``{"status": null, "error": message}`` with a fitting HTTP status.
No tool runs from a GET, and only ``application/json`` bodies are taken (a form post from a
web page fails). Bodies are parsed strictly: duplicate keys and absurd nesting are refused.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Mapping
from typing import Any

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .. import __version__
from ..call import Call, grants_of
from ..registry import HTTP_STATUS, PagedList, ToolFailure
from ..runner import ToolRunner
from ..workspace import Workspace
from .guard import BodyTooLarge

log = logging.getLogger(__name__)

SEED_PROTOCOL_VERSION = "2024-11-05"


def envelope(
    status: object = None,
    error: str | None = None,
    code: int = 200,
    extra: Mapping[str, object] | None = None,
) -> JSONResponse:
    """The seed's answer; ``extra`` adds keys beside ``status`` (a page's ``total``, ``truncated``...)."""
    body: dict[str, object] = {"status": status, "error": error}
    body.update(extra or {})
    return JSONResponse(body, status_code=code)


def _environment(ws: Workspace, with_open_files: bool) -> dict[str, object]:
    active, open_files = "", []
    try:
        from ..engines.editor import editor_status  # the editor model, when this build has one

        status = editor_status(ws)
        active, open_files = status.get("activeFile", ""), list(status.get("openFiles", []))
    except ImportError:
        pass
    root = str(ws.root)
    if ws.policy.hosted:  # no host path leaves a hosted project
        from ..hostpaths import SHOWN_ROOT, masked_text

        active, open_files = masked_text(active, root), [masked_text(str(f), root) for f in open_files]
        root = SHOWN_ROOT
    env: dict[str, object] = {
        "workspaceRoot": root,
        "activeFile": active,
        "currentDirectory": os.path.dirname(active) if active else root,
    }
    if with_open_files:
        env["openFiles"] = open_files
    return env


def routes(runner: ToolRunner, workspace_for: Callable[[Request], Workspace]) -> list[Route]:
    def workspace(request: Request) -> Workspace:
        return workspace_for(request)

    async def environment(ws: Workspace, with_open_files: bool) -> dict[str, object]:
        # On a worker thread: with VS Code connected it asks the editor (up to the bridge's deadline).
        import anyio

        return await anyio.to_thread.run_sync(_environment, ws, with_open_files)

    async def initialize(request: Request) -> Response:
        ws = workspace(request)
        env = await environment(ws, False)
        return JSONResponse(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "result": {
                    "protocolVersion": SEED_PROTOCOL_VERSION,
                    "capabilities": {"tools": {"listChanged": True}, "resources": {}},
                    "serverInfo": {"name": "mcp-server-ide", "version": __version__},
                    "environment": env,
                },
            }
        )

    async def status(request: Request) -> Response:
        ws = workspace(request)
        env = await environment(ws, True)
        return JSONResponse(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "result": {"status": "running", "environment": env},
            }
        )

    async def list_tools(request: Request) -> Response:
        return JSONResponse(
            [
                {
                    "name": spec.name,
                    "description": spec.description,
                    "inputSchema": runner.input_schema(spec.name),
                }
                for spec in runner.specs.values()
            ]
        )

    async def call_tool(request: Request) -> Response:
        name = request.path_params["name"]
        if request.method != "POST":
            return envelope(
                error=f"method not allowed: tools run only from POST /mcp/{name} with a JSON body (rule: no tool runs from a GET)",
                code=405,
            )
        if name not in runner.specs:
            return envelope(
                error=f"unknown tool {name!r} (GET /mcp/list_tools lists the tools this server has)", code=404
            )
        media = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media != "application/json":
            return envelope(
                error="unsupported media type: send the arguments as a JSON body with 'Content-Type: application/json'",
                code=415,
            )
        try:
            raw = await request.body()
        except BodyTooLarge:
            return envelope(error="refused: the body is too large (rule: bodies are capped)", code=413)
        except ClientDisconnect:
            return Response(status_code=400)  # the caller left mid-body; nobody reads this
        try:
            body = _parse_json(raw)
        except ValueError as exc:
            return envelope(error=f"invalid JSON body: {exc}", code=400)
        try:
            arguments = _arguments(body)
        except ToolFailure as exc:
            return envelope(error=str(exc), code=400)
        call = Call(
            workspace=workspace(request),
            door="rest",
            tool=name,
            arguments=arguments,
            grants=grants_of(request),
        )
        try:
            result = await runner.run(name, arguments, call)
        except ToolFailure as exc:
            return envelope(error=str(exc), code=HTTP_STATUS.get(exc.kind, 400))
        except Exception:
            log.exception("tool %s failed unexpectedly on the REST door", name)
            return envelope(error=f"internal error in {name} (details are in the server log)", code=500)
        if isinstance(result, PagedList):  # the page facts go beside the items
            return envelope(status=list(result), extra=result.page_fields())
        return envelope(status=result)

    methods = ["GET", "POST"]
    return [
        Route("/mcp/initialize", initialize, methods=methods),
        Route("/mcp/status", status, methods=methods),
        Route("/mcp/list_tools", list_tools, methods=["GET", "POST"]),
        Route("/mcp/{name:str}", call_tool, methods=["GET", "POST", "PUT", "DELETE", "PATCH"]),
    ]


def _arguments(body: object) -> dict[str, Any]:
    """The tool arguments from either body form of the seed."""
    if not isinstance(body, dict):
        raise ToolFailure(
            "invalid body: expected a JSON object of arguments, or a JSON-RPC request with params.arguments"
        )
    if "jsonrpc" in body and isinstance(body.get("params"), dict):
        params = body["params"]
        arguments = params.get("arguments", {} if "name" in params else params)
    elif "jsonrpc" in body and "params" not in body:
        arguments = {}
    else:
        arguments = body
    if not isinstance(arguments, dict):
        raise ToolFailure("invalid body: params.arguments must be a JSON object")
    return arguments  # checked by the runner, in the words MCP uses (an unknown one is refused there)


def _parse_json(raw: bytes) -> object:
    if not raw.strip():
        return {}
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("the body is not UTF-8") from None
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates)
    except RecursionError:
        raise ValueError("nesting is too deep") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{exc.msg} at line {exc.lineno} column {exc.colno}") from None


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out

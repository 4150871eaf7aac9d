"""The reference's routes: ``GET /mcp/tools`` (JSON or HTML, by ``?format=`` or ``Accept``),
``GET /mcp/openapi.json`` (the REST door as OpenAPI 3.1; the token applies as on the REST door) and
``GET /mcp/static/<file>`` (the page's own CSS and JS, package data in ``doors/static``; no CDN).
No tool runs from a GET.
"""

from __future__ import annotations

import functools
import re
from importlib import resources
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from .model import Reference, reference_json
from .openapi import openapi_document
from .page import reference_html

if TYPE_CHECKING:
    from ...runner import ToolRunner
    from ..http import HttpSettings

STATIC_PACKAGE = "mcp_server_ide.doors"
"""The package whose ``static`` folder holds the page's assets."""
STATIC_TYPES = {
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
}
PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'none'; base-uri 'none'; frame-ancestors 'none'"
)


def _wants_json(request: Request) -> bool:
    fmt = request.query_params.get("format", "").lower()
    if fmt in ("json", "html"):
        return fmt == "json"
    accept = request.headers.get("accept", "").lower()
    json_q = _quality(accept, "application/json")
    html_q = _quality(accept, "text/html")
    return json_q > 0 and json_q >= html_q


def _quality(accept: str, media: str) -> float:
    for part in accept.split(","):
        fields = [f.strip() for f in part.split(";")]
        if fields[0] == media:
            for f in fields[1:]:
                if f.startswith("q="):
                    try:
                        return float(f[2:])
                    except ValueError:
                        return 0.0
            return 1.0
    return 0.0


def _static_file(name: str) -> bytes | None:
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name) or name.startswith("."):
        return None
    try:
        return resources.files(STATIC_PACKAGE).joinpath("static", name).read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def routes(runner: ToolRunner, settings: HttpSettings | None = None) -> list[Route]:
    """``GET /mcp/tools`` (JSON or HTML) and ``GET /mcp/static/<file>``, for the HTTP door to mount."""
    auth_required = bool(settings is not None and (settings.token or settings.bearer_auth))

    @functools.cache
    def as_json() -> Reference:  # built on the first request, then kept
        return reference_json(runner, auth_required=auth_required)

    @functools.cache
    def as_html() -> str:
        return reference_html(runner, auth_required=auth_required)

    async def tools_page(request: Request) -> Response:
        if _wants_json(request):
            return JSONResponse(as_json(), headers={"Vary": "Accept", "Cache-Control": "no-cache"})
        return HTMLResponse(
            as_html(),
            headers={
                "Vary": "Accept",
                "Cache-Control": "no-cache",
                "Content-Security-Policy": PAGE_CSP,
                "X-Content-Type-Options": "nosniff",
                "Referrer-Policy": "no-referrer",
            },
        )

    @functools.cache
    def as_openapi() -> dict[str, object]:
        return openapi_document(as_json())

    async def openapi(request: Request) -> Response:
        return JSONResponse(as_openapi(), headers={"Cache-Control": "no-cache"})

    async def static(request: Request) -> Response:
        name = request.path_params["file"]
        data = _static_file(name)
        suffix = "." + name.rsplit(".", 1)[-1] if "." in name else ""
        if data is None or suffix not in STATIC_TYPES:
            return JSONResponse(
                {"status": None, "error": f"not found: no static file {name!r}"}, status_code=404
            )
        return Response(
            data,
            media_type=STATIC_TYPES[suffix],
            headers={"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"},
        )

    return [
        Route("/mcp/tools", tools_page, methods=["GET"]),
        Route("/mcp/openapi.json", openapi, methods=["GET"]),
        Route("/mcp/static/{file:path}", static, methods=["GET"]),
    ]

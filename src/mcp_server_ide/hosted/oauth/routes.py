"""The OAuth endpoints outside ``/p/``: the protected resource metadata (always), and, for the
embedded authorization server, the SDK's ``create_auth_routes`` (``/.well-known/oauth-authorization-server``,
``/authorize``, ``/token``, ``/register``, ``/revoke``) and the sign-in page ``/login``.

RFC 9207: every redirect back to the client carries ``iss`` (the issuer exactly as the metadata
spells it). The sign-in page adds it itself; the SDK's ``/authorize`` handler, which redirects
some errors (``invalid_scope``, ``invalid_target``, a bad parameter) straight to the client, is
wrapped by :class:`IssOnRedirects`; the metadata is the SDK's own (``build_metadata``, the same
arguments) with ``authorization_response_iss_parameter_supported`` set."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

from mcp.server.auth.handlers.metadata import MetadataHandler, ProtectedResourceMetadataHandler
from mcp.server.auth.provider import construct_redirect_uri
from mcp.server.auth.routes import build_metadata, cors_middleware, create_auth_routes
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..store import SCOPES, Store
from .login import LoginPage
from .provider import HostedProvider
from .resource import WELL_KNOWN, Resources

EMBEDDED_PATHS = frozenset(
    {"/.well-known/oauth-authorization-server", "/authorize", "/token", "/register", "/revoke", "/login"}
)


def serves(path: str, embedded: bool) -> bool:
    """Whether this app answers ``path`` (anything else outside /p/ stays the router's 404)."""
    return path == WELL_KNOWN or path.startswith(WELL_KNOWN + "/p/") or (embedded and path in EMBEDDED_PATHS)


def build(resources: Resources, provider: HostedProvider | None, store: Store) -> Starlette:
    async def project_metadata(request: Request) -> Response:
        handler = ProtectedResourceMetadataHandler(resources.metadata(request.path_params["project"]))
        return await handler.handle(request)

    async def service_metadata(request: Request) -> Response:
        return await ProtectedResourceMetadataHandler(resources.metadata(None)).handle(request)

    routes: list[BaseRoute] = [
        Route(WELL_KNOWN, cors_middleware(service_metadata, ["GET", "OPTIONS"]), methods=["GET", "OPTIONS"]),
        Route(
            WELL_KNOWN + "/p/{project}/mcp",
            cors_middleware(project_metadata, ["GET", "OPTIONS"]),
            methods=["GET", "OPTIONS"],
        ),
    ]
    if provider is not None:
        routes += embedded_routes(provider, resources)
        routes.append(Route("/login", LoginPage(provider, store).handle, methods=["GET", "POST"]))
    return Starlette(routes=routes)


def embedded_routes(provider: HostedProvider, resources: Resources) -> list[BaseRoute]:
    """The SDK's authorization server routes, with RFC 9207's ``iss`` on ``/authorize``'s redirects
    to the client and ``authorization_response_iss_parameter_supported`` in the metadata."""
    issuer = AnyHttpUrl(resources.issuer)
    registration = ClientRegistrationOptions(
        enabled=True, valid_scopes=list(SCOPES), default_scopes=list(SCOPES)
    )
    revocation = RevocationOptions(enabled=True)
    metadata = build_metadata(issuer, None, registration, revocation)
    metadata.authorization_response_iss_parameter_supported = True
    routes: list[BaseRoute] = []
    for route in create_auth_routes(
        provider, issuer_url=issuer, client_registration_options=registration, revocation_options=revocation
    ):
        if route.path == "/.well-known/oauth-authorization-server":
            route = Route(
                route.path,
                cors_middleware(MetadataHandler(metadata).handle, ["GET", "OPTIONS"]),
                methods=["GET", "OPTIONS"],
            )
        elif route.path == "/authorize":
            route = Route(
                route.path,
                IssOnRedirects(route.app, provider.issuer, resources.base + "/login"),
                methods=["GET", "POST"],
            )
        routes.append(route)
    return routes


class IssOnRedirects:
    """Adds ``iss`` to every redirect of the wrapped ``/authorize`` app that goes back to the client
    (all but the one to this service's sign-in page, ``<login>?request=…``)."""

    def __init__(self, app: ASGIApp, issuer: str, login: str) -> None:
        self.app = app
        self.issuer = issuer
        self.login = login

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_iss(message: Message) -> None:
            if message["type"] == "http.response.start" and 300 <= message["status"] < 400:
                headers = MutableHeaders(scope=message)
                location = headers.get("location")
                if location is not None and not self._to_login(location):
                    headers["location"] = construct_redirect_uri(location, iss=self.issuer)
            await send(message)

        await self.app(scope, receive, send_with_iss)

    def _to_login(self, location: str) -> bool:
        parts = urlsplit(location)
        query = parse_qsl(parts.query)
        return location.startswith(self.login + "?") and [k for k, _ in query] == ["request"]

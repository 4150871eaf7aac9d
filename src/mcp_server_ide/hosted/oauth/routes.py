"""The OAuth endpoints outside ``/p/``: the protected resource metadata (always), and, for the
embedded authorization server, the SDK's ``create_auth_routes`` (``/.well-known/oauth-authorization-server``,
``/authorize``, ``/token``, ``/register``, ``/revoke``) and the sign-in page ``/login``."""

from __future__ import annotations

from mcp.server.auth.handlers.metadata import ProtectedResourceMetadataHandler
from mcp.server.auth.routes import cors_middleware, create_auth_routes
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

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
        routes += create_auth_routes(
            provider,
            issuer_url=AnyHttpUrl(resources.issuer),
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=list(SCOPES), default_scopes=list(SCOPES)
            ),
            revocation_options=RevocationOptions(enabled=True),
        )
        routes.append(Route("/login", LoginPage(provider, store).handle, methods=["GET", "POST"]))
    return Starlette(routes=routes)

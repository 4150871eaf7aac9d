"""What a token is for (RFC 8707) and how a client finds out where to get one (RFC 9728).

The resource identifier is **the project's MCP URL**, ``<public URL>/p/<project>/mcp``: the URL an
MCP client is configured with, hence the ``resource`` it asks for by default (the MCP authorization
spec), and a token for one project is refused at every other one, so a leaked token opens one
project. Every door of that project (Streamable HTTP, the REST doors, the reference and playground,
the export) accepts it. The service's base URL is a resource too (for a client that asks for no
resource, or an operator's IdP that issues one audience for the service): its tokens are good for
every project of the signed-in user, as API tokens are; ownership is checked on every request
either way, before any project work.

Each project's metadata is at ``/.well-known/oauth-protected-resource/p/<project>/mcp`` (the same
for any id, so it says nothing about which projects exist), the service's at
``/.well-known/oauth-protected-resource``; every 401 of a hosted door names the project's in
``WWW-Authenticate: Bearer … resource_metadata="…"``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mcp.server.auth.provider import AccessToken
from mcp.shared.auth import ProtectedResourceMetadata
from pydantic import AnyHttpUrl

from ..store import SCOPES

WELL_KNOWN = "/.well-known/oauth-protected-resource"
PROJECT_RESOURCE = re.compile(r"/p/([^/]{1,64})/mcp/?")
REALM = 'Bearer realm="mcp-server-ide"'


@dataclass(frozen=True)
class Resources:
    base: str
    """The service's public URL (no trailing slash): what clients reach it at."""
    issuer: str
    """The authorization server clients are sent to (this service, or the external IdP)."""
    audiences: frozenset[str] = field(default_factory=frozenset)
    """Further audiences accepted service-wide (an external IdP's API identifier: ``--audience``)."""

    def project_url(self, project_id: str) -> str:
        return f"{self.base}/p/{project_id}/mcp"

    def metadata_url(self, project_id: str | None) -> str:
        return self.base + WELL_KNOWN + (f"/p/{project_id}/mcp" if project_id else "")

    def known(self, resource: str | None) -> bool:
        """Whether a client may ask for a token for this resource (None: the service)."""
        if resource is None:
            return True
        text = resource.rstrip("/")
        if text == self.base:
            return True
        return (
            text.startswith(self.base + "/")
            and PROJECT_RESOURCE.fullmatch(text[len(self.base) :]) is not None
        )

    def accepts(self, access: AccessToken, project_id: str) -> bool:
        """Whether a token may be used at this project's doors (before ownership is checked).

        API tokens carry no audience (they are their user's, for every project: ``claims`` None);
        the OAuth verifiers always set ``claims["aud"]``, which must name this project's MCP URL or
        the service."""
        if access.claims is None:
            return True  # an API token (ApiTokenVerifier)
        audiences = access.claims.get("aud") or []
        wanted = {self.project_url(project_id), self.base, *self.audiences}
        given = [audiences] if isinstance(audiences, str) else audiences
        return any(isinstance(a, str) and a.rstrip("/") in wanted for a in given)

    def metadata(self, project_id: str | None) -> ProtectedResourceMetadata:
        return ProtectedResourceMetadata(
            resource=AnyHttpUrl(self.project_url(project_id) if project_id else self.base),
            authorization_servers=[AnyHttpUrl(self.issuer)],
            scopes_supported=list(SCOPES),
            resource_name="mcp-server-ide project" if project_id else "mcp-server-ide hosted service",
        )

    def challenge(
        self, project_id: str | None, error: str | None = None, description: str | None = None
    ) -> str:
        """A ``WWW-Authenticate`` value (RFC 6750 + RFC 9728's ``resource_metadata``)."""
        parts = [REALM]
        if error:
            parts.append(f'error="{error}"')
        if description:
            parts.append(f'error_description="{description}"')
        parts.append(f'resource_metadata="{self.metadata_url(project_id)}"')
        parts.append(f'scope="{" ".join(SCOPES)}"')
        return ", ".join(parts)

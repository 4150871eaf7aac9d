"""OAuth 2.1 for the hosted doors, through the ``mcp`` SDK's auth support.

- :mod:`.resource`: the resource identifiers (each project's MCP URL; the service), the protected
  resource metadata (RFC 9728) and the ``WWW-Authenticate`` challenges
- :mod:`.provider` + :mod:`.store` + :mod:`.login`: the embedded authorization server (the SDK's
  provider interface; codes and tokens hashed in the hosted store; the sign-in page)
- :mod:`.external`: delegation to an external identity provider (JWTs checked against its JWKS)
- :mod:`.introspect`: its opaque tokens asked of its introspection endpoint (RFC 7662), cached briefly
- :mod:`.verify`: which verifier a bearer token goes to (API token, embedded, external)
"""

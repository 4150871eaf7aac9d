"""The hosted router's own answers, as raw ASGI messages: fixed bytes, so that a refusal cannot
differ by anything but its reason (tenancy: every "no such project" is the same bytes)."""

from __future__ import annotations

import json

from starlette.types import Send

NO_SUCH_PROJECT = json.dumps(
    {"status": None, "error": "no such project: check the project id (list_projects lists yours)"}
).encode()
NOT_HOSTED_PATH = json.dumps(
    {"status": None, "error": "not found: the hosted doors live under /p/<project>/mcp"}
).encode()
UNAUTHORIZED = json.dumps(
    {
        "status": None,
        "error": "unauthorized: send 'Authorization: Bearer <token>' with a live API token (an operator "
        "makes one with `mcp-server-ide hosted token create USER`) or an OAuth access token (sign in: "
        "WWW-Authenticate names the resource metadata)",
    }
).encode()
OTHER_RESOURCE_TEXT = "this token is for another resource (RFC 8707 audience): sign in for this project"
OTHER_RESOURCE = json.dumps({"status": None, "error": "unauthorized: " + OTHER_RESOURCE_TEXT}).encode()


async def send_bytes(
    send: Send,
    status: int,
    body: bytes,
    headers: list[tuple[bytes, bytes]] | None = None,
    content_type: bytes = b"application/json",
) -> None:
    all_headers = [(b"content-type", content_type), (b"content-length", str(len(body)).encode())]
    all_headers += headers or []
    await send({"type": "http.response.start", "status": status, "headers": all_headers})
    await send({"type": "http.response.body", "body": body})


def challenge_headers(challenge: str) -> list[tuple[bytes, bytes]]:
    """``WWW-Authenticate`` (RFC 6750, with RFC 9728's ``resource_metadata``: :mod:`.oauth.resource`)."""
    return [(b"www-authenticate", challenge.encode())]

"""Reading a tool's answer the way a client would."""

from __future__ import annotations

import json
from typing import Any


def payload(result: Any) -> Any:
    """The tool's result data: its ``structuredContent`` when it has an output schema, else the JSON
    of its text block (tools with large payloads, such as ``get_file_text_by_path``, send the JSON
    text only so the content is not sent twice)."""
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


def flat_references(found: dict[str, Any]) -> list[dict[str, Any]]:
    """find_references' compact answer (references grouped by file) as one list of locations, each with
    its ``path``, in the answer's order."""
    return [{"path": group["path"], **at} for group in found["references"] for at in group["locations"]]

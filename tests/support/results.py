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

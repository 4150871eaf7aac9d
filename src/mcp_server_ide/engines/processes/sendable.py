"""What text can be handed to a process (argv, environment, a terminal's input) at all."""

from __future__ import annotations

from ..failures import ToolFailure


def check_sendable(text: str, what: str) -> None:
    """Refuse text no process can be given: a lone UTF-16 surrogate (``\\ud800``) has no bytes.
    (Surrogate escapes of undecodable bytes, U+DC80-U+DCFF, stand for those bytes and pass.)"""
    try:
        text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as exc:
        raise ToolFailure(
            f"invalid {what}: it holds a lone UTF-16 surrogate ({text[exc.start]!r} at {exc.start}), which "
            "no process can be given (send valid Unicode)"
        ) from None

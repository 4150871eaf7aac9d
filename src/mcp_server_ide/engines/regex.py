"""User-supplied regular expressions, run on RE2: time linear in the text, whatever the pattern.

Python's ``re`` backtracks: ``(a+)+$`` on 28 bytes takes seconds, doubling with each character,
and it runs on the event loop, so one hostile pattern froze the whole server. Every pattern a
caller gives (``untilPattern``, the include/exclude globs) is compiled here instead. RE2 has no
backreferences and no lookaround; a pattern that needs them is refused with the rule and the fix.
"""

from __future__ import annotations

from typing import Protocol, cast

import re2

from .failures import ToolFailure

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 would print every refused pattern on stderr


class Match(Protocol):
    def start(self) -> int: ...


class Regex(Protocol):
    """What callers use of a compiled pattern (``str`` or ``bytes``, as compiled)."""

    pattern: str | bytes

    def search(self, text: str | bytes) -> Match | None: ...

    def match(self, text: str | bytes) -> Match | None: ...


def compile_linear(pattern: str | bytes, *, what: str) -> Regex:
    """``pattern`` compiled on RE2; ``what`` names the parameter in the refusal (e.g. 'untilPattern')."""
    try:
        return cast("Regex", re2.compile(pattern, _OPTIONS))
    except re2.error as exc:
        reason = (
            exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else exc
        )
        unsupported = "perl operator" in str(reason) or "escape sequence" in str(reason)
        fix = (
            "backreferences like \\1 and lookaround like (?=x) or (?<!x) are not available: rewrite the "
            "pattern without them, e.g. 'error|failed' or '^ready'"
            if unsupported
            else "give a valid regular expression, e.g. 'listening on|error'"
        )
        raise ToolFailure(
            f"invalid {what}: {reason} (rule: patterns run on RE2, in linear time; {fix})"
        ) from None

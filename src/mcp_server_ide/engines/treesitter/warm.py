"""Loading the grammar package and a few languages' outline plans before the first outline.

The first ``get_symbols_in_file`` of a session otherwise pays for importing
``tree_sitter_language_pack`` (~0.2 s), loading the grammar and building its query plan (~25 ms a
language); :func:`warm` does that work ahead, on whatever thread calls it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

log = logging.getLogger(__name__)


def warm(languages: Iterable[str]) -> list[str]:
    """Load each language's grammar and outline plan (an empty outline runs the whole path);
    gives the languages warmed. A language the pack lacks is skipped."""
    from .languages import supported_languages
    from .outlines import outline

    warmed = []
    supported = supported_languages()
    for lang in languages:
        if lang not in supported:
            continue
        try:
            outline(b"", lang)
        except Exception:  # a warm-up never fails anything: the first real outline reports it
            log.debug("warming the %s grammar failed", lang, exc_info=True)
            continue
        warmed.append(lang)
    return warmed

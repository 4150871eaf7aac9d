"""Giving freed memory back to the system after a call that held a lot of it for a moment.

A recursive listing or a search of a 100,000-file tree holds tens of MB while it runs (ripgrep's
output, every name, the sets that filter them); once freed, the C allocator keeps most of it for
later instead of returning it, and the server's resident size stays at that peak for its whole life.
:func:`give_back` asks glibc to return it (``malloc_trim``: ~1-8 ms after such a call); elsewhere
(musl, macOS, Windows) it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging
from collections.abc import Callable

log = logging.getLogger(__name__)

BIG = 20_000
"""Entries (names, matches) past which a call's transient memory is worth giving back."""


@functools.cache
def _trim() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim: Callable[[int], int] = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    return trim


def give_back() -> None:
    """Return the C allocator's free memory to the system, where it can (glibc)."""
    trim = _trim()
    if trim is None:
        return
    try:
        trim(0)
    except Exception:  # never fails a call
        log.debug("malloc_trim failed", exc_info=True)

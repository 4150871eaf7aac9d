"""The mode of a new file: ``0o666`` less the process umask, the umask read without changing it."""

from __future__ import annotations

import contextlib
import functools
import os


def default_mode() -> int:
    """The mode of a new file: ``0o666`` less the process umask (as ``open`` would give it)."""
    return 0o666 & ~process_umask()


@functools.cache
def process_umask() -> int:
    """The process umask, read once without changing it (Linux's ``/proc/self/status`` ``Umask:``).

    Setting it to read it back is process-wide: a ``mkdir`` or child process of another thread in
    that window would get its mode. Where ``/proc`` does not say, it is probed once with the most
    private mask (``0o077``), so anything caught in that window is only more private than asked."""
    with contextlib.suppress(OSError, ValueError, IndexError), open("/proc/self/status", "rb") as status:
        for line in status:
            if line.startswith(b"Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o077)
    os.umask(mask)
    return mask

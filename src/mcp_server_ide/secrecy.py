"""The server's own secrets kept from the commands it runs (SECURITY.md §4): the HTTP token.

The token comes from ``--token-file PATH`` (preferred), ``MCP_IDE_TOKEN`` or ``--token``
(:func:`resolve_token`). Before the server runs anything, :func:`hide_secrets`:

- drops ``MCP_IDE_TOKEN`` from ``os.environ`` (children never get it: they get ``child_env``);
- blanks it in the process's original environment block and blanks a ``--token`` value in the
  original argument block (what ``/proc/<pid>/environ`` and ``/proc/<pid>/cmdline`` show), by
  writing ``/proc/self/mem`` at the addresses ``/proc/self/stat`` gives;
- marks the process not dumpable (``prctl(PR_SET_DUMPABLE, 0)``), so another process of the
  same user, the server's own commands included, cannot read its ``/proc/<pid>/environ``,
  ``mem`` or ``fd``, nor ptrace it. Root (``CAP_SYS_PTRACE``) still can: that is why the token is
  also blanked. Side effects: no core dumps, and ``py-spy``/``gdb`` of the server need root, or
  ``MCP_IDE_DUMPABLE=1`` in the server's environment to keep it dumpable (a debugging aid).

``/proc/<pid>/cmdline`` is world-readable whatever the dump flag, and a ``--token`` value is seen
there until the server blanks it at start: hence the warning and ``--token-file``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import sys
from pathlib import Path

log = logging.getLogger(__name__)

TOKEN_ENV = "MCP_IDE_TOKEN"
DUMPABLE_ENV = "MCP_IDE_DUMPABLE"
PR_SET_DUMPABLE = 4
CMDLINE_WARNING = (
    "mcp-server-ide: warning: --token on the command line can be read by every process of this machine "
    "(/proc/<pid>/cmdline, ps) until the server hides it; prefer --token-file PATH or MCP_IDE_TOKEN"
)


class TokenError(ValueError):
    """The token cannot be read; the message names the option and the fix."""


def resolve_token(cli_token: str | None, token_file: str | None) -> str | None:
    """The token: from ``--token-file`` (its text without the final newline), else ``--token``,
    else ``MCP_IDE_TOKEN``; None when none is given. Raises :class:`TokenError` on a bad file."""
    if token_file is not None:
        if cli_token is not None:
            raise TokenError("give one of --token and --token-file, not both")
        try:
            token = Path(token_file).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise TokenError(f"--token-file {token_file}: cannot read it ({exc})") from None
        if not token:
            raise TokenError(f"--token-file {token_file}: the file is empty (put the token in it)")
        return token
    if cli_token is not None:
        if not cli_token:
            raise TokenError("--token is empty")
        return cli_token
    return os.environ.get(TOKEN_ENV) or None


def hide_secrets(*, argv_token: bool) -> None:
    """Hide the token from every other process (see the module docstring); ``argv_token``: a
    ``--token`` value is on the command line. Steps that this system does not allow are skipped."""
    had_env = os.environ.pop(TOKEN_ENV, None) is not None
    if sys.platform != "linux":
        return
    if had_env or argv_token:
        try:
            _blank_original_blocks(env_names=(TOKEN_ENV,), argv_options=("--token",) if argv_token else ())
        except (OSError, ValueError) as exc:
            log.warning("could not blank the token in /proc/self/environ or cmdline: %s", exc)
    if os.environ.get(DUMPABLE_ENV) != "1":
        set_dumpable(False)


def set_dumpable(on: bool) -> bool:
    """``prctl(PR_SET_DUMPABLE, on)``; False when the call failed (not Linux, no libc)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        if libc.prctl(PR_SET_DUMPABLE, int(on), 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE) failed")
    except OSError as exc:
        log.warning("could not mark the server not dumpable: %s", exc)
        return False
    return True


def _blank_original_blocks(*, env_names: tuple[str, ...], argv_options: tuple[str, ...]) -> None:
    """Overwrite, in this process's memory, the ``NAME=value`` strings of ``env_names`` in the
    environment block (with NULs) and the values of ``argv_options`` in the argument block (with
    ``*``): the blocks that ``/proc/self/environ`` and ``/proc/self/cmdline`` read."""
    with open("/proc/self/stat", "rb") as fh:
        fields = fh.read().rsplit(b")", 1)[1].split()
    # Fields 48-51 of proc(5): arg_start, arg_end, env_start, env_end (fields[0] is field 3).
    arg_start, arg_end, env_start, env_end = (int(fields[i - 3]) for i in (48, 49, 50, 51))
    with open("/proc/self/mem", "r+b", buffering=0) as mem:
        mem.seek(env_start)
        block = bytearray(mem.read(env_end - env_start))
        if _blank_env(block, env_names):
            mem.seek(env_start)
            mem.write(bytes(block))
        mem.seek(arg_start)
        block = bytearray(mem.read(arg_end - arg_start))
        if _blank_args(block, argv_options):
            mem.seek(arg_start)
            mem.write(bytes(block))


def _entries(block: bytearray) -> list[tuple[int, int]]:
    """(start, end) of each NUL-terminated string of ``block``."""
    spans: list[tuple[int, int]] = []
    start = 0
    while start < len(block):
        end = block.find(b"\0", start)
        end = len(block) if end < 0 else end
        spans.append((start, end))
        start = end + 1
    return spans


def _blank_env(block: bytearray, names: tuple[str, ...]) -> bool:
    prefixes = tuple(f"{n}=".encode() for n in names)
    changed = False
    for start, end in _entries(block):
        if bytes(block[start:end]).startswith(prefixes):
            block[start:end] = b"\0" * (end - start)
            changed = True
    return changed


def _blank_args(block: bytearray, options: tuple[str, ...]) -> bool:
    changed = False
    spans = _entries(block)
    for i, (start, end) in enumerate(spans):
        arg = bytes(block[start:end])
        name = arg.split(b"=", 1)[0]
        for option in (o.encode() for o in options):
            if not (len(name) >= 5 and option.startswith(name)):  # argparse takes `--tok` for `--token`
                continue
            if arg == name and i + 1 < len(spans):
                vs, ve = spans[i + 1]
                block[vs:ve] = b"*" * (ve - vs)
                changed = True
            elif arg != name:
                vs = start + len(name) + 1
                block[vs:end] = b"*" * (end - vs)
                changed = True
    return changed

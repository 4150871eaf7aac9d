"""The stdio handshake answered before the SDK has loaded, with the SDK's own bytes.

Importing the ``mcp`` SDK takes ~0.6 s, most of a cold start; a client waits for the answer to
``initialize`` before anything else. That answer depends only on how the server is built, so the
SDK's own answer is kept (a JSON file in the state folder's ``cache``) and, on later starts, sent
from here while the SDK is still importing:

- a thread started before the SDK import reads the first line of stdin; when it is a *plain*
  ``initialize`` (below) and the kept answer matches this build and the negotiated protocol version,
  it writes ``{"jsonrpc":"2.0","id":ID,"result":KEPT}`` on stdout at once;
- every byte read is then handed to the SDK's transport (:mod:`.faststdio`) unchanged, the
  ``initialize`` line included, so the SDK sets up the connection exactly as it always does; its
  own answer to that ``initialize`` is compared with what was sent and dropped (a difference is
  logged and the kept answer replaced: the next start sends the SDK's);
- when nothing is kept yet for this build and version, the SDK answers as usual and its answer is
  kept (so the first start of a new build is the SDK's speed; every later one is fast).

The key of a kept answer is everything it derives from: this package's files (names, sizes,
mtimes), the installed SDK, ``mcp_types`` and pydantic, the Python, the server options and the
``MCP_IDE_*`` environment (but the switches in ``UNKEYED_ENV``). The workspace is not in it: the answer is the same in every folder
(``tests/test_handshake.py`` checks it). Protocol negotiation is the SDK's rule (the version asked
when the SDK knows it, else its latest handshake version), with the SDK's version lists kept beside
the answers.

*Plain* means what the SDK is sure to accept, checked without pydantic: exactly ``jsonrpc``,
``id`` (an integer, or a short string of letters, digits and ``._:-``), ``method`` and ``params``;
params of exactly ``protocolVersion`` (a string), ``capabilities`` (objects, ``listChanged``
booleans) and ``clientInfo`` (string ``name`` and ``version``; optional string ``title``,
``description``, ``websiteUrl``; no icons). Anything else (a ``_meta``, a first line that is not
``initialize``) waits for the SDK. Off with ``MCP_IDE_FAST_HANDSHAKE=0``, with a ``--plugin``, or
when stdin or stdout is not a pipe. This module imports only the standard library.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import logging
import os
import re
import stat
import sys
import threading
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

ENV_SWITCH = "MCP_IDE_FAST_HANDSHAKE"
PACKAGE_DIR = Path(__file__).resolve().parent.parent
DEPENDENCIES = ("mcp", "mcp_types", "pydantic", "pydantic_core")
"""Installed packages whose files shape the SDK's answer (their ``__init__`` and dist-info are keyed)."""
UNKEYED_ENV = frozenset(
    {
        "MCP_IDE_TOKEN",
        "MCP_IDE_FAST_HANDSHAKE",
        "MCP_IDE_DIRECT_LANE",
        "MCP_IDE_WARM",
        "MCP_IDE_LEAN_IMPORTS",  # sdkimport.py: what the process loads, not what it answers
        "MCP_IDE_BRIDGE_SOCKET",  # engines/editor/channel.py: the VS Code bridge, read (and removed) at first use
        "MCP_IDE_BRIDGE_TOKEN",
    }
)
"""Switches read by the doors and the warm-up, never by the server's build (and the tokens, secrets)."""
KEEP = 8
"""Kept answers of other builds left in the cache folder (older ones are removed)."""
FIRST_LINE_LIMIT = 64 * 1024
_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
_INFO_STRINGS = ("title", "description", "websiteUrl")
_CAPABILITY_FLAGS = frozenset({"listChanged"})


def enabled_by_environment() -> bool:
    return os.environ.get(ENV_SWITCH, "1").strip().lower() not in ("0", "false", "no", "off")


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def start(options: dict[str, Any]) -> Handshake | None:
    """Start reading the first line of stdin (and answering it when it can), or None when off.

    ``options`` are the server options the build reads (no ``--plugin``: a plugin may change anything)."""
    if options.get("plugin") or not enabled_by_environment():
        return None
    if not (_is_pipe(0) and _is_pipe(1)):
        return None
    handshake = Handshake(options)
    threading.Thread(target=handshake._run, name="mcp-ide-handshake", daemon=True).start()
    return handshake


def cache_key(options: dict[str, Any]) -> str:
    """A digest of everything the SDK's ``initialize`` answer derives from (see the module docstring)."""
    digest = hashlib.sha256()
    digest.update(f"{sys.version}|{sys.executable}|".encode())
    digest.update(json.dumps(options, sort_keys=True, default=str).encode())
    env = sorted((k, v) for k, v in os.environ.items() if k.startswith("MCP_IDE_") and k not in UNKEYED_ENV)
    digest.update(json.dumps(env).encode())
    for path in _package_files(PACKAGE_DIR):
        _stat_into(digest, path)
    for name in DEPENDENCIES:
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec is not None else None
        if origin is None:
            digest.update(f"{name}:missing;".encode())
            continue
        _stat_into(digest, Path(origin))
        site = Path(origin).parent.parent
        with contextlib.suppress(OSError):
            for entry in sorted(os.listdir(site)):
                if entry.startswith(f"{name}-") and entry.endswith(".dist-info"):
                    digest.update(entry.encode())
                    _stat_into(digest, site / entry / "RECORD")
    return digest.hexdigest()[:24]


def _package_files(root: Path) -> list[Path]:
    found: list[Path] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        found.extend(Path(folder, f) for f in sorted(files) if not f.endswith((".pyc", ".pyo")))
    return found


def _stat_into(digest: Any, path: Path) -> None:
    try:
        st = path.stat()
        digest.update(f"{path}:{st.st_mtime_ns}:{st.st_size};".encode())
    except OSError:
        digest.update(f"{path}:missing;".encode())


def cache_path(key: str) -> Path:
    from ..workspace import default_state_home

    return default_state_home() / "cache" / f"initialize-{key}.json"


def plain_initialize(line: bytes) -> tuple[int | str, str] | None:
    """``(id, protocolVersion)`` of an ``initialize`` request the SDK is sure to accept, else None."""
    try:
        message = json.loads(line.decode("utf-8"))  # strictly UTF-8, as the SDK reads (json alone guesses)
    except ValueError:  # UnicodeDecodeError included
        return None
    if not isinstance(message, dict) or message.keys() != {"jsonrpc", "id", "method", "params"}:
        return None
    if message["jsonrpc"] != "2.0" or message["method"] != "initialize":
        return None
    request_id = message["id"]
    if type(request_id) is int:
        if abs(request_id) >= 1 << 53:
            return None
    elif not (isinstance(request_id, str) and _ID.fullmatch(request_id)):
        return None
    params = message["params"]
    if not isinstance(params, dict) or params.keys() != {"protocolVersion", "capabilities", "clientInfo"}:
        return None
    version, capabilities, info = params["protocolVersion"], params["capabilities"], params["clientInfo"]
    if not isinstance(version, str) or not _plain_capabilities(capabilities):
        return None
    if not isinstance(info, dict) or "icons" in info:
        return None
    if not (isinstance(info.get("name"), str) and isinstance(info.get("version"), str)):
        return None
    if any(info.get(k) is not None and not isinstance(info[k], str) for k in _INFO_STRINGS):
        return None
    return request_id, version


def _plain_capabilities(value: object) -> bool:
    if not isinstance(value, dict):
        return False
    for key, item in value.items():
        if key in _CAPABILITY_FLAGS:
            if not isinstance(item, bool):
                return False
        elif not _plain_capabilities(item):
            return False
    return True


def _response(request_id: int | str, result: str) -> str:
    return f'{{"jsonrpc":"2.0","id":{json.dumps(request_id)},"result":{result}}}'


class Handshake:
    """The first line of one stdio session: read (and maybe answered) on a thread; reconciled with
    the SDK's answer when the SDK writes it (:meth:`outgoing`)."""

    def __init__(self, options: dict[str, Any]) -> None:
        self.options = options
        self.done = threading.Event()
        self.buffered = b""
        """Every byte read from stdin, to be handed to the SDK's transport."""
        self.key: str | None = None
        self.request: tuple[int | str, str] | None = None
        """``(id, protocolVersion)`` of a plain ``initialize`` first line."""
        self.sent: str | None = None
        """The answer written from the kept one (without its newline), if any."""
        self._kept: dict[str, Any] | None = None
        self._settled = False

    # The thread: read the first line, answer it when the kept answer fits.

    def _run(self) -> None:
        try:
            self.key = cache_key(self.options)  # while the client is still writing its first line
            self._kept = _load(cache_path(self.key))
            self._read_first_line()
            self._answer()
        except Exception:  # the handshake must never cost the session: the SDK answers instead
            log.exception("the fast handshake failed; the SDK answers initialize")
        finally:
            self.done.set()

    def _read_first_line(self) -> None:
        while True:
            chunk = os.read(0, 65536)
            if not chunk:
                return
            self.buffered += chunk  # kept as read: even a failure later hands every byte over
            if b"\n" in chunk or len(self.buffered) > FIRST_LINE_LIMIT:
                return

    def _answer(self) -> None:
        line = self.buffered.split(b"\n", 1)[0]
        if len(self.buffered) == len(line):  # no whole line (EOF or too long): the SDK's to judge
            return
        self.request = plain_initialize(line)
        if self.request is None:
            return
        kept = self._kept
        if kept is None:
            return
        request_id, asked = self.request
        negotiated = asked if asked in kept["handshake"] else kept["latest"]
        result = kept["results"].get(negotiated)
        if not isinstance(result, str):
            return
        answer = _response(request_id, result)
        _write_all(1, answer.encode("utf-8") + b"\n")
        self.sent = answer
        log.debug("handshake answered initialize (id %r, %s) before the SDK loaded", request_id, negotiated)

    # The event loop: the SDK's own answer to the replayed initialize.

    def outgoing(self, text: str) -> str | None:
        """``text`` (one message the SDK writes, without its newline) to write, or None to drop it:
        the SDK's answer to the ``initialize`` already answered is dropped, after it is compared."""
        if self._settled or self.request is None:
            return text
        request_id = self.request[0]
        prefix = f'{{"jsonrpc":"2.0","id":{json.dumps(request_id)},'
        if not text.startswith(prefix):
            return text
        self._settled = True
        if self.sent is None:
            self._keep(text)
            return text
        if text != self.sent:
            log.warning("the kept initialize answer differed from the SDK's; the next start sends the SDK's")
            if not self._keep(text) and self.key is not None:
                cache_path(self.key).unlink(missing_ok=True)
        return None

    def _keep(self, text: str) -> bool:
        """Keep the SDK's successful answer for this build and version (best effort); False when
        ``text`` is not one."""
        head = _response(self.request[0], "") if self.request else ""
        head = head[: -len("}")]
        if self.key is None or not text.startswith(head) or not text.endswith("}"):
            return False
        result = text[len(head) : -1]
        try:
            from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

            negotiated = json.loads(result)["protocolVersion"]
        except (ImportError, ValueError, KeyError, TypeError):
            return False
        kept = self._kept or {"results": {}}
        kept = {
            "handshake": list(HANDSHAKE_PROTOCOL_VERSIONS),
            "latest": LATEST_HANDSHAKE_VERSION,
            "results": {**kept.get("results", {}), negotiated: result},
        }
        _save(cache_path(self.key), kept)
        return True


def _load(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        log.debug("kept initialize answer unreadable; the SDK answers", exc_info=True)
        return None
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        return None
    if not isinstance(data.get("handshake"), list) or not isinstance(data.get("latest"), str):
        return None
    return data


def _save(path: Path, data: dict[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)
        others = sorted(
            (p for p in path.parent.glob("initialize-*.json") if p != path),
            key=lambda p: p.stat().st_mtime,
            reverse=True,
        )
        for old in others[KEEP:]:
            old.unlink(missing_ok=True)
    except OSError:
        log.debug("could not keep the initialize answer", exc_info=True)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]

"""Language servers over LSP, one package in the spirit of Serena's solidlsp.

- :mod:`.jsonrpc`: JSON-RPC framing and dispatch, typed with ``lsprotocol``.
- :mod:`.process`: spawning in a process group with a parent-death signal; group RSS; group kill.
- :mod:`.server`: one server's lifecycle and requests (``LanguageServer``).
- :mod:`.capabilities`: what we declare in ``initialize``.
- :mod:`.documents`: the server's open documents kept equal to the disk; file URIs.
- :mod:`.readiness`: whether the server has loaded the project (``$/progress``, status, log lines).
- :mod:`.diagnostics`: the diagnostics it published or was pulled for, and waiting for the current text's.
- :mod:`.pull`: pull diagnostics (``textDocument/diagnostic``): registrations, pulls on change and refresh.
- :mod:`.manager`: the workspace service (one server per language, idle and memory watchdog).
- :mod:`.adapters`: one adapter per language (basedpyright, typescript-language-server, configured).
- :mod:`.install`: the pinned npm install of the TypeScript server into the user's cache.
"""

from __future__ import annotations

from .adapters import Unavailable
from .documents import path_of, uri_of
from .manager import LanguageServers, servers
from .server import LanguageServer

__all__ = ["LanguageServer", "LanguageServers", "Unavailable", "path_of", "servers", "uri_of"]

"""One running language server for one workspace and language.

Lifecycle: started lazily by the first call that needs it; ``initialize`` / ``initialized``;
answers the server's own requests (``workspace/configuration``, ``window/workDoneProgress/create``,
``client/registerCapability``, ``workspace/applyEdit``); restarted on the next call after a crash
(a crash loop fails clearly instead); stopped when idle or over its memory cap by the manager's
watchdog; killed with its whole process group on close.

Readiness: the server reports its loading with ``$/progress`` (work-done tokens it creates) or,
for rust-analyzer, ``experimental/serverStatus``. :meth:`wait_ready` waits for those to finish
(no fixed sleep); when the wait runs out the caller gets the answer marked partial, never as
complete.

Documents: every file a query touches is opened (``didOpen``) with its disk text and version 1;
changes made by this server's tools arrive through :mod:`...changes` and become ``didChange``
with the next version (``didChangeWatchedFiles`` for files the server has not opened). Before a
query, open documents are compared with the disk (size and mtime), so edits made by other
programs are sent too.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from . import process
from .adapters.base import Adapter, Unavailable, env_float
from .jsonrpc import Connection, ConnectionLost, RequestTimeout, RpcError

log = logging.getLogger(__name__)

MAX_RESTARTS = 3
RESTART_WINDOW = 300.0


def uri_of(path: Path) -> str:
    return path.as_uri()


def path_of(uri: str) -> Path | None:
    from urllib.parse import unquote, urlparse

    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


@dataclass
class Document:
    uri: str
    version: int
    text: str
    stamp: tuple[int, int]
    synced_at: float = 0.0
    """When the server was last sent this text (diagnostics published after it are current)."""


def _stamp(path: Path) -> tuple[int, int]:
    try:
        st = path.stat()
    except OSError:
        return (-1, -1)
    return (st.st_size, st.st_mtime_ns)


def _read(path: Path) -> str:
    from ..textio import decode

    return decode(path.read_bytes(), name=path.name).text


class LanguageServer:
    def __init__(self, root: Path, adapter: Adapter) -> None:
        self.root = root
        self.adapter = adapter
        self.language = adapter.language
        self.proc: Any = None
        self.conn: Connection | None = None
        self.capabilities: lsp.ServerCapabilities | None = None
        self.state = "stopped"
        self.last_error = ""
        self.last_used = time.monotonic()
        self.started_at = 0.0
        self.restarts: deque[float] = deque(maxlen=MAX_RESTARTS + 1)
        self._lock = threading.RLock()
        self._cond = threading.Condition()  # progress and diagnostics: never held while waiting on the server
        self._progress: dict[str, str] = {}
        self._quiescent: bool | None = None
        self._log_ready = True
        self.documents: dict[str, Document] = {}
        self.diagnostics: dict[str, tuple[int | None, float, list[lsp.Diagnostic]]] = {}
        self.edit_sink: Callable[[lsp.WorkspaceEdit], bool] | None = None
        self.stderr_tail: deque[str] = deque(maxlen=80)
        self.generation = 0

    # ------------------------------------------------------------------ lifecycle

    @property
    def running(self) -> bool:
        return self.state == "running" and self.proc is not None and self.proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def ensure_started(self) -> None:
        with self._lock:
            self.last_used = time.monotonic()
            if self.running and self.conn is not None and not self.conn.closed.is_set():
                return
            if self.state == "closed":
                raise Unavailable(f"the {self.adapter.server_name} server of this workspace was shut down")
            if self.proc is not None:  # it died: count the crash and restart
                self._reap(self.last_error or "the language server exited")
                now = time.monotonic()
                self.restarts.append(now)
                recent = [t for t in self.restarts if now - t < RESTART_WINDOW]
                if len(recent) > MAX_RESTARTS:
                    raise Unavailable(
                        f"the {self.adapter.server_name} language server crashed {len(recent)} times in "
                        f"{int(RESTART_WINDOW)} s (last: {self.last_error or 'exited'}); not restarting it now"
                    )
            self._start()

    def _start(self) -> None:
        launch = self.adapter.launch(self.root)
        env = _server_env(launch.env)
        self.state = "starting"
        self._progress.clear()
        self._quiescent = None
        self._log_ready = self.adapter.ready_log is None
        self.documents.clear()
        self.diagnostics.clear()
        self.generation += 1
        try:
            self.proc = process.spawn(launch.argv, str(self.root), env)
        except OSError as exc:
            self.state = "stopped"
            self.proc = None
            raise Unavailable(f"could not start {self.adapter.server_name}: {exc.strerror}") from None
        self.started_at = time.monotonic()
        conn = Connection(self.proc.stdout, self.proc.stdin, name=f"lsp-{self.language}")
        self.conn = conn
        self._register_handlers(conn)
        conn.start()
        threading.Thread(target=self._drain_stderr, args=(self.proc,), daemon=True, name="lsp-stderr").start()
        try:
            result = conn.request(
                "initialize", self._initialize_params(), timeout=env_float("MCP_IDE_LSP_INIT_TIMEOUT", 120)
            )
            self.capabilities = result.capabilities
            conn.notify("initialized", lsp.InitializedParams())
            settings = self.adapter.settings(self.root, None)
            if settings:
                conn.notify(
                    "workspace/didChangeConfiguration", lsp.DidChangeConfigurationParams(settings=settings)
                )
        except (ConnectionLost, RequestTimeout, RpcError) as exc:
            reason = f"{self.adapter.server_name} failed to start: {exc}; {self._stderr_hint()}"
            self._reap(reason)
            self.state = "stopped"
            raise Unavailable(reason) from None
        self.state = "running"
        self.last_error = ""

    def _stderr_hint(self) -> str:
        tail = [line for line in self.stderr_tail if line.strip()][-3:]
        return ("its last output: " + " | ".join(tail)[-400:]) if tail else "it printed nothing"

    def _drain_stderr(self, proc: Any) -> None:
        try:
            for line in proc.stderr:
                self.stderr_tail.append(line.decode("utf-8", "replace").rstrip())
        except (OSError, ValueError):
            pass

    def _initialize_params(self) -> lsp.InitializeParams:
        caps = lsp.ClientCapabilities(
            workspace=lsp.WorkspaceClientCapabilities(
                apply_edit=True,
                workspace_edit=lsp.WorkspaceEditClientCapabilities(
                    document_changes=True,
                    resource_operations=[lsp.ResourceOperationKind.Create, lsp.ResourceOperationKind.Rename],
                ),
                configuration=True,
                workspace_folders=True,
                did_change_configuration=lsp.DidChangeConfigurationClientCapabilities(
                    dynamic_registration=True
                ),
                did_change_watched_files=lsp.DidChangeWatchedFilesClientCapabilities(
                    dynamic_registration=False
                ),
                execute_command=lsp.ExecuteCommandClientCapabilities(dynamic_registration=False),
                symbol=lsp.WorkspaceSymbolClientCapabilities(),
            ),
            text_document=lsp.TextDocumentClientCapabilities(
                synchronization=lsp.TextDocumentSyncClientCapabilities(did_save=True),
                document_symbol=lsp.DocumentSymbolClientCapabilities(
                    hierarchical_document_symbol_support=True
                ),
                definition=lsp.DefinitionClientCapabilities(link_support=True),
                references=lsp.ReferenceClientCapabilities(),
                rename=lsp.RenameClientCapabilities(prepare_support=True),
                publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(version_support=True),
                diagnostic=lsp.DiagnosticClientCapabilities(dynamic_registration=False),
                formatting=lsp.DocumentFormattingClientCapabilities(),
                code_action=lsp.CodeActionClientCapabilities(
                    code_action_literal_support=lsp.ClientCodeActionLiteralOptions(
                        code_action_kind=lsp.ClientCodeActionKindOptions(
                            value_set=[
                                lsp.CodeActionKind.Refactor,
                                lsp.CodeActionKind.RefactorExtract,
                                lsp.CodeActionKind.QuickFix,
                                lsp.CodeActionKind.Source,
                            ]
                        )
                    ),
                    resolve_support=lsp.ClientCodeActionResolveOptions(properties=["edit"]),
                    data_support=True,
                ),
            ),
            window=lsp.WindowClientCapabilities(work_done_progress=True),
            general=lsp.GeneralClientCapabilities(position_encodings=[lsp.PositionEncodingKind.Utf16]),
            experimental={"serverStatusNotification": True},
        )
        return lsp.InitializeParams(
            process_id=os.getpid(),
            root_uri=uri_of(self.root),
            root_path=str(self.root),
            capabilities=caps,
            client_info=lsp.ClientInfo(name="mcp-server-ide"),
            workspace_folders=[lsp.WorkspaceFolder(uri=uri_of(self.root), name=self.root.name)],
            initialization_options=self.adapter.initialization_options(self.root),
        )

    def _register_handlers(self, conn: Connection) -> None:
        conn.on_request("workspace/configuration", self._on_configuration)
        conn.on_request("window/workDoneProgress/create", self._on_progress_create)
        conn.on_request("client/registerCapability", lambda params: None)
        conn.on_request("client/unregisterCapability", lambda params: None)
        conn.on_request("workspace/applyEdit", self._on_apply_edit)
        conn.on_request(
            "workspace/workspaceFolders",
            lambda params: [lsp.WorkspaceFolder(uri=uri_of(self.root), name=self.root.name)],
        )
        conn.on_request("window/showMessageRequest", lambda params: None)
        conn.on_request("window/showDocument", lambda params: lsp.ShowDocumentResult(success=False))
        for method in (
            "workspace/diagnostic/refresh",
            "workspace/semanticTokens/refresh",
            "workspace/inlayHint/refresh",
            "workspace/codeLens/refresh",
            "workspace/inlineValue/refresh",
        ):
            conn.on_request(method, lambda params: None)
        for method in self.adapter.client_requests:
            conn.on_request(method, lambda params: None)
        conn.on_notification("$/progress", self._on_progress)
        conn.on_notification("textDocument/publishDiagnostics", self._on_diagnostics)
        conn.on_notification("experimental/serverStatus", self._on_server_status)
        conn.on_notification("window/logMessage", self._on_log)
        conn.on_notification("window/showMessage", lambda params: None)
        conn.on_notification("telemetry/event", lambda params: None)

    def _on_configuration(self, params: lsp.ConfigurationParams) -> list[Any]:
        answers = []
        for item in params.items:
            scope = path_of(item.scope_uri) if item.scope_uri else None
            if scope is not None and not scope.is_relative_to(self.root):
                scope = None  # only the server's own workspace is ever read for it
            answers.append(self.adapter.settings_for(self.root, item.section, scope))
        return answers

    def _on_progress_create(self, params: lsp.WorkDoneProgressCreateParams) -> None:
        return None

    def _on_progress(self, params: lsp.ProgressParams) -> None:
        token = str(params.token)
        value = params.value if isinstance(params.value, dict) else {}
        kind = value.get("kind")
        with self._cond:
            if kind == "begin":
                self._progress[token] = str(value.get("title") or value.get("message") or "loading")
            elif kind == "report" and token in self._progress and value.get("message"):
                self._progress[token] = f"{self._progress[token].split(':')[0]}: {value['message']}"
            elif kind == "end":
                self._progress.pop(token, None)
            self._cond.notify_all()

    def _on_log(self, params: lsp.LogMessageParams) -> None:
        patterns = self.adapter.ready_log
        message = getattr(params, "message", "") or ""
        if patterns is None:
            return
        busy, ready = patterns
        with self._cond:
            if re.search(ready, message):
                self._log_ready = True
            elif re.search(busy, message):
                self._log_ready = False
            self._cond.notify_all()

    def _on_server_status(self, params: Any) -> None:
        with self._cond:
            if isinstance(params, dict):
                self._quiescent = bool(params.get("quiescent"))
            self._cond.notify_all()

    def _on_diagnostics(self, params: lsp.PublishDiagnosticsParams) -> None:
        with self._cond:
            self.diagnostics[params.uri] = (params.version, time.monotonic(), list(params.diagnostics))
            self._cond.notify_all()

    def _on_apply_edit(self, params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
        sink = self.edit_sink
        if sink is None:
            return lsp.ApplyWorkspaceEditResult(
                applied=False, failure_reason="no refactoring is waiting for an edit"
            )
        ok = sink(params.edit)
        return lsp.ApplyWorkspaceEditResult(applied=ok)

    def loading(self) -> list[str]:
        """What the server says it is still doing (empty when idle)."""
        with self._cond:
            busy = list(self._progress.values())
            if self._quiescent is False:
                busy.append("indexing")
            if not self._log_ready:
                busy.append("finding the project's source files")
            return busy

    def wait_ready(self, timeout: float) -> str | None:
        """Wait until the server has loaded the project; None when ready, else why it is not yet."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                busy = self.loading()  # re-entering the condition's RLock
                if not busy:
                    return None
                left = deadline - time.monotonic()
                if left <= 0:
                    return (
                        f"{self.adapter.server_name} was still loading the project ({', '.join(busy)[:200]})"
                    )
                if self.conn is None or self.conn.closed.is_set():
                    return None
                self._cond.wait(min(left, 0.5))

    def _reap(self, reason: str) -> None:
        conn, proc = self.conn, self.proc
        self.conn, self.proc = None, None
        if conn is not None:
            conn.close(reason)
        if proc is not None:
            process.kill_group(proc, grace=0.5)
        with self._cond:
            self._progress.clear()
            self._cond.notify_all()

    def kill(self, reason: str) -> None:
        """Stop the server now (memory cap, crash); the next call starts a new one."""
        with self._lock:
            self.last_error = reason
            if self.state != "closed":
                self.state = "crashed"
            if self.proc is not None:
                process.kill_group(self.proc, grace=0.5)

    def stop(self, reason: str = "stopped") -> None:
        """Shut down politely (``shutdown`` + ``exit``), then kill the group."""
        with self._lock:
            conn = self.conn
            if conn is not None and not conn.closed.is_set():
                try:
                    conn.request("shutdown", None, timeout=2)
                    conn.notify("exit", None)
                except Exception:
                    pass
            self._reap(reason)
            if self.state != "closed":
                self.state = "stopped"
            self.restarts.clear()

    def close(self) -> None:
        self.stop("closed")
        self.state = "closed"

    def wait_diagnostics(self, doc: Document, timeout: float) -> list[lsp.Diagnostic] | None:
        """The diagnostics the server published for ``doc``'s current text; None if none came in time."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                entry = self.diagnostics.get(doc.uri)
                if entry is not None:
                    version, at, diags = entry
                    if (version is not None and version >= doc.version) or (
                        version is None and at >= doc.synced_at
                    ):
                        return diags
                left = deadline - time.monotonic()
                if left <= 0 or self.conn is None or self.conn.closed.is_set():
                    return None
                self._cond.wait(min(left, 0.5))

    def rss(self) -> int:
        pid = self.pid
        return process.group_rss(pid) if pid is not None and self.running else 0

    # ------------------------------------------------------------------ requests

    def request(self, method: str, params: Any, timeout: float = 60.0, *, typed: bool = True) -> Any:
        """A request to a started server; a crash becomes :class:`Unavailable` (the next call restarts)."""
        conn = self.conn
        if conn is None:
            raise Unavailable(f"{self.adapter.server_name} is not running")
        self.last_used = time.monotonic()
        try:
            return conn.request(method, params, timeout=timeout, typed=typed)
        except ConnectionLost as exc:
            self.last_error = str(exc)
            self.state = "crashed"
            raise Unavailable(
                f"{self.adapter.server_name} stopped while answering ({exc}); it restarts on the next call"
            ) from None
        except RequestTimeout as exc:
            raise Unavailable(f"{self.adapter.server_name} did not answer in time: {exc}") from None
        finally:
            self.last_used = time.monotonic()

    def notify(self, method: str, params: Any) -> None:
        conn = self.conn
        if conn is None:
            return
        try:
            conn.notify(method, params)
        except ConnectionLost:
            self.state = "crashed"

    def supports(self, capability: str) -> bool:
        caps = self.capabilities
        return caps is not None and bool(getattr(caps, capability, None))

    # ------------------------------------------------------------------ documents

    def sync_document(self, path: Path, text: str | None = None) -> Document:
        """Make the server's copy of ``path`` equal to the disk (or ``text``): didOpen or didChange."""
        uri = uri_of(path)
        with self._lock:
            doc = self.documents.get(uri)
            stamp = _stamp(path)
            if text is None:
                if doc is not None and doc.stamp == stamp:
                    return doc
                text = _read(path)
            if doc is None:
                doc = Document(uri=uri, version=1, text=text, stamp=stamp, synced_at=time.monotonic())
                self.documents[uri] = doc
                self.notify(
                    "textDocument/didOpen",
                    lsp.DidOpenTextDocumentParams(
                        text_document=lsp.TextDocumentItem(
                            uri=uri, language_id=self.adapter.language_id(path), version=1, text=text
                        )
                    ),
                )
                return doc
            doc.stamp = stamp
            if doc.text == text:
                return doc
            doc.version += 1
            doc.text = text
            doc.synced_at = time.monotonic()
            self.notify(
                "textDocument/didChange",
                lsp.DidChangeTextDocumentParams(
                    text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=doc.version),
                    content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
                ),
            )
            self.notify(
                "textDocument/didSave",
                lsp.DidSaveTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri)),
            )
            return doc

    def refresh_open_documents(self) -> None:
        """Send whatever changed on disk in the open documents (edits by other programs)."""
        with self._lock:
            for uri, doc in list(self.documents.items()):
                path = path_of(uri)
                if path is None:
                    continue
                if not path.exists():
                    self.close_document(path)
                elif _stamp(path) != doc.stamp:
                    self.sync_document(path)

    def close_document(self, path: Path) -> None:
        uri = uri_of(path)
        with self._lock:
            if self.documents.pop(uri, None) is not None:
                self.notify(
                    "textDocument/didClose",
                    lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri)),
                )

    def file_changed(self, path: Path, after: bytes | None, created: bool) -> None:
        """A file written by our tools: the server gets its new text at once (didOpen/didChange).

        Files the server had not opened are opened now rather than left to its own file watcher, whose
        events come late: the next answer must already see the write. Deleted files are closed and
        announced as a watched-file deletion.
        """
        if not self.running:
            return
        with self._lock:
            if after is None:
                self.close_document(path)
                self.notify(
                    "workspace/didChangeWatchedFiles",
                    lsp.DidChangeWatchedFilesParams(
                        changes=[lsp.FileEvent(uri=uri_of(path), type=lsp.FileChangeType.Deleted)]
                    ),
                )
                return
            from ..textio import decode

            try:
                text = decode(after, name=path.name).text
            except Exception:
                return
            if created:
                self.notify(
                    "workspace/didChangeWatchedFiles",
                    lsp.DidChangeWatchedFilesParams(
                        changes=[lsp.FileEvent(uri=uri_of(path), type=lsp.FileChangeType.Created)]
                    ),
                )
            self.sync_document(path, text)
            self.documents[uri_of(path)].stamp = _stamp(path)


_SCRUB = ("MCP_IDE_TOKEN", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY")


def _server_env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _SCRUB and not k.endswith(("_TOKEN", "_SECRET"))}
    env.pop("NODE_OPTIONS", None)
    env.update(extra)
    return env

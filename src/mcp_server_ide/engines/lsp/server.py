"""One running language server for one workspace and language: its lifecycle and its requests.

Lifecycle: started lazily by the first call that needs it; ``initialize`` (:mod:`.capabilities`) /
``initialized``; answers the server's own requests (``workspace/configuration``,
``window/workDoneProgress/create``, ``client/registerCapability`` (pull diagnostics, :mod:`.pull`),
``workspace/diagnostic/refresh``, ``workspace/applyEdit``);
restarted on the next call after a crash (a crash loop fails clearly instead); stopped when idle
or over its memory cap by the manager's watchdog; killed with its whole process group on close.

What it holds besides: the open documents (:mod:`.documents`), whether it has loaded the project
(:mod:`.readiness`) and its diagnostics, published or pulled (:mod:`.diagnostics`); the methods of the same
names here are the doors callers use.
"""

from __future__ import annotations

import logging
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from . import process
from .adapters.base import Adapter, Unavailable, env_float
from .capabilities import initialize_params, workspace_folders
from .diagnostics import Diagnostics
from .documents import Document, Documents, path_of
from .jsonrpc import Connection, ConnectionLost, RequestTimeout, RpcError
from .pull import Pulls
from .readiness import Readiness

if TYPE_CHECKING:
    from ...workspace import Workspace

log = logging.getLogger(__name__)

MAX_RESTARTS = 3
RESTART_WINDOW = 300.0


class LanguageServer:
    def __init__(self, root: Path, adapter: Adapter, ws: Workspace | None = None) -> None:
        self.root = root
        self.ws = ws
        """Whose server this is: a hosted workspace's runs in its sandbox (``process.spawn``)."""
        self.adapter = adapter
        self.language = adapter.language
        self.proc: subprocess.Popen[bytes] | None = None
        self.conn: Connection | None = None
        self.capabilities: lsp.ServerCapabilities | None = None
        self.state = "stopped"
        self.last_error = ""
        self.last_used = time.monotonic()
        self._users = 0  # requests and waits in flight: a server in use is never idle
        self._users_lock = threading.Lock()
        self.started_at = 0.0
        self.restarts: deque[float] = deque(maxlen=MAX_RESTARTS + 1)
        self._lock = threading.RLock()
        self.readiness = Readiness(adapter.server_name)
        self.documents = Documents(self.notify, adapter.language_id, self._lock)
        self.diagnostics = Diagnostics()
        self.pulls = Pulls(self.diagnostics, self.documents, self._lock)
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

    def idle_seconds(self, now: float) -> float:
        """How long nothing has asked anything of the server (0 while a request or a wait runs)."""
        with self._users_lock:
            return 0.0 if self._users else now - self.last_used

    @contextmanager
    def in_use(self) -> Iterator[None]:
        """Marks the server busy for the idle watchdog, however long the request or wait takes."""
        with self._users_lock:
            self._users += 1
            self.last_used = time.monotonic()
        try:
            yield
        finally:
            with self._users_lock:
                self._users -= 1
                self.last_used = time.monotonic()

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
        hosted = self.ws is not None and self.ws.policy.hosted
        # Hosted: the sandbox's clean environment plus the launch's own (process.spawn).
        env = dict(launch.env) if hosted else process.server_env(launch.env)
        self.state = "starting"
        self.readiness.reset(self.adapter.ready_log)
        self.documents.clear()
        self.diagnostics.clear()
        self.generation += 1
        try:
            self.proc = process.spawn(launch.argv, str(self.root), env, self.ws)
        except OSError as exc:
            self.state = "stopped"
            self.proc = None
            raise Unavailable(f"could not start {self.adapter.server_name}: {exc.strerror}") from None
        self.started_at = time.monotonic()
        assert self.proc.stdout is not None and self.proc.stdin is not None  # spawn opens both pipes
        conn = Connection(self.proc.stdout, self.proc.stdin, name=f"lsp-{self.language}")
        self.conn = conn
        self.pulls.reset(conn)
        self._register_handlers(conn)
        conn.start()
        threading.Thread(target=self._drain_stderr, args=(self.proc,), daemon=True, name="lsp-stderr").start()
        try:
            result = conn.request(
                "initialize",
                initialize_params(self.root, self.adapter, own_pid=not hosted),
                timeout=env_float("MCP_IDE_LSP_INIT_TIMEOUT", 120),
            )
            self.capabilities = result.capabilities
            self.pulls.take_static(result.capabilities)
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

    def _drain_stderr(self, proc: subprocess.Popen[bytes]) -> None:
        try:
            for line in proc.stderr or ():
                self.stderr_tail.append(line.decode("utf-8", "replace").rstrip())
        except (OSError, ValueError):
            pass

    def _reap(self, reason: str) -> None:
        conn, proc = self.conn, self.proc
        self.conn, self.proc = None, None
        if conn is not None:
            conn.close(reason)
        self.pulls.stop()
        if proc is not None:
            process.kill_group(proc, grace=0.5)
        self.readiness.clear_progress()

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

    def rss(self) -> int:
        pid = self.pid
        return process.group_rss(pid) if pid is not None and self.running else 0

    # ------------------------------------------------------------------ what the server asks of us

    def _register_handlers(self, conn: Connection) -> None:
        conn.on_request("workspace/configuration", self._on_configuration)
        conn.on_request("window/workDoneProgress/create", self._on_progress_create)
        conn.on_request("client/registerCapability", self.pulls.on_register)
        conn.on_request("client/unregisterCapability", self.pulls.on_unregister)
        conn.on_request("workspace/applyEdit", self._on_apply_edit)
        conn.on_request(
            "workspace/workspaceFolders",
            lambda params: workspace_folders(self.root),
        )
        conn.on_request("window/showMessageRequest", lambda params: None)
        conn.on_request("window/showDocument", lambda params: lsp.ShowDocumentResult(success=False))
        conn.on_request("workspace/diagnostic/refresh", self.pulls.refresh)
        for method in (
            "workspace/semanticTokens/refresh",
            "workspace/inlayHint/refresh",
            "workspace/codeLens/refresh",
            "workspace/inlineValue/refresh",
        ):
            conn.on_request(method, lambda params: None)
        for method in self.adapter.client_requests:
            conn.on_request(method, lambda params: None)
        conn.on_notification("$/progress", self.readiness.on_progress)
        conn.on_notification("textDocument/publishDiagnostics", self.diagnostics.on_publish)
        conn.on_notification("experimental/serverStatus", self.readiness.on_server_status)
        conn.on_notification("window/logMessage", self.readiness.on_log)
        conn.on_notification("window/showMessage", lambda params: None)
        conn.on_notification("telemetry/event", lambda params: None)

    def _on_configuration(self, params: lsp.ConfigurationParams) -> list[Any]:
        answers: list[Any] = []
        for item in params.items:
            scope = path_of(item.scope_uri) if item.scope_uri else None
            if scope is not None and not scope.is_relative_to(self.root):
                scope = None  # only the server's own workspace is ever read for it
            answers.append(self.adapter.settings_for(self.root, item.section, scope))
        return answers

    def _on_progress_create(self, params: lsp.WorkDoneProgressCreateParams) -> None:
        return None

    def _on_apply_edit(self, params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
        sink = self.edit_sink
        if sink is None:
            return lsp.ApplyWorkspaceEditResult(
                applied=False, failure_reason="no refactoring is waiting for an edit"
            )
        ok = sink(params.edit)
        return lsp.ApplyWorkspaceEditResult(applied=ok)

    # ------------------------------------------------------------------ readiness and diagnostics

    def _closed(self) -> bool:
        return self.conn is None or self.conn.closed.is_set()

    def loading(self) -> list[str]:
        """What the server says it is still doing (empty when idle)."""
        return self.readiness.loading()

    def wait_ready(self, timeout: float) -> str | None:
        """Wait until the server has loaded the project; None when ready, else why it is not yet."""
        with self.in_use():
            return self.readiness.wait(timeout, self._closed)

    def wait_diagnostics(self, doc: Document, timeout: float) -> list[lsp.Diagnostic] | None:
        """The complete diagnostics of ``doc``'s current text; None if none came in time.

        A server that offers pulls (:mod:`.pull`) is asked with ``textDocument/diagnostic``, whose answer
        comes after its analysis; one that only publishes is waited for (and asked by pull after all if it
        registers a pull provider meanwhile)."""
        deadline = time.monotonic() + timeout
        with self.in_use():
            if self.pulls.provider(doc.uri) is None:
                found = self.diagnostics.wait(
                    doc, timeout, self._closed, until=lambda: self.pulls.provider(doc.uri) is not None
                )
                if found is not None or self.pulls.provider(doc.uri) is None:
                    return found
            ticket = self.pulls.want(doc.uri)
            left = max(0.0, deadline - time.monotonic())
            return self.diagnostics.wait(doc, left, self._closed, pulled_since=ticket)

    # ------------------------------------------------------------------ what we ask of the server

    def request(self, method: str, params: object, timeout: float = 60.0, *, typed: bool = True) -> Any:
        """A request to a started server; a crash becomes :class:`Unavailable` (the next call restarts)."""
        conn = self.conn
        if conn is None:
            raise Unavailable(f"{self.adapter.server_name} is not running")
        try:
            with self.in_use():
                return conn.request(method, params, timeout=timeout, typed=typed)
        except ConnectionLost as exc:
            self.last_error = str(exc)
            self.state = "crashed"
            raise Unavailable(
                f"{self.adapter.server_name} stopped while answering ({exc}); it restarts on the next call"
            ) from None
        except RequestTimeout as exc:
            raise Unavailable(f"{self.adapter.server_name} did not answer in time: {exc}") from None

    def notify(self, method: str, params: object) -> None:
        conn = self.conn
        if conn is None:
            return
        try:
            conn.notify(method, params)
        except ConnectionLost:
            self.state = "crashed"
            return
        # A server that is pulled publishes nothing of its own: every new text of an open document is
        # pulled, so the live problems view follows edits as it does for a server that publishes.
        uri = _document_uri(method, params)
        if uri is None:
            return
        if method == "textDocument/didClose":
            self.pulls.forget(uri)
        elif self.pulls.provider(uri) is not None:
            self.pulls.want(uri)

    def supports(self, capability: str) -> bool:
        caps = self.capabilities
        return caps is not None and bool(getattr(caps, capability, None))

    # ------------------------------------------------------------------ documents

    def sync_document(self, path: Path, text: str | None = None) -> Document:
        """Make the server's copy of ``path`` equal to the disk (or ``text``): didOpen or didChange."""
        return self.documents.sync(path, text)

    def refresh_open_documents(self) -> None:
        """Send whatever changed on disk in the open documents (edits by other programs)."""
        self.documents.refresh()

    def close_document(self, path: Path) -> None:
        self.documents.close(path)

    def file_changed(self, path: Path, after: bytes | None, created: bool) -> None:
        """A file written by our tools: the server gets its new text at once (see :mod:`.documents`)."""
        if not self.running:
            return
        self.documents.file_changed(path, after, created)


def _document_uri(method: str, params: object) -> str | None:
    """The document a ``didOpen``/``didChange``/``didClose`` is about; None for other notifications."""
    if method not in ("textDocument/didOpen", "textDocument/didChange", "textDocument/didClose"):
        return None
    document = getattr(params, "text_document", None)
    return getattr(document, "uri", None)

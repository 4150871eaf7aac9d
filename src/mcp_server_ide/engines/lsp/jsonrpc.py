"""JSON-RPC 2.0 over a language server's stdio, typed with ``lsprotocol``.

Messages are framed with ``Content-Length`` headers. One reader thread per connection reads
the server's messages and dispatches them: responses complete the waiting request's future;
server -> client requests (``workspace/configuration``, ``workspace/applyEdit``...) and
notifications (``$/progress``, ``textDocument/publishDiagnostics``...) go to the handlers the
owner registered, and are typed with lsprotocol's own classes (``METHOD_TO_TYPES``): no
protocol shape is written by hand here.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import IO, Any

from lsprotocol import converters
from lsprotocol import types as lsp

log = logging.getLogger(__name__)

CONVERTER = converters.get_converter()


class RpcError(Exception):
    """The server answered a request with an error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} (code {code})")
        self.code = code
        self.message = message
        self.data = data


class ConnectionLost(Exception):
    """The server's process went away while we waited for it."""


class RequestTimeout(Exception):
    pass


def to_json(obj: Any) -> Any:
    return CONVERTER.unstructure(obj)


def params_type(method: str) -> type | None:
    entry = lsp.METHOD_TO_TYPES.get(method)
    return entry[2] if entry else None


def structure_result(method: str, raw: Any) -> Any:
    """A raw ``result`` of ``method`` as lsprotocol objects."""
    entry = lsp.METHOD_TO_TYPES.get(method)
    if entry is None or entry[1] is None:
        return raw
    response = CONVERTER.structure({"jsonrpc": "2.0", "id": 0, "result": raw}, entry[1])
    return response.result


RequestHandler = Callable[[Any], Any]
NotificationHandler = Callable[[Any], None]


class Connection:
    def __init__(self, reader: IO[bytes], writer: IO[bytes], name: str = "lsp") -> None:
        self._reader = reader
        self._writer = writer
        self._name = name
        self._write_lock = threading.Lock()
        self._pending: dict[int, tuple[str | None, Future[Any]]] = {}
        self._pending_lock = threading.Lock()
        self._next_id = 0
        self._request_handlers: dict[str, RequestHandler] = {}
        self._notification_handlers: dict[str, NotificationHandler] = {}
        self.closed = threading.Event()
        self.close_reason = ""
        self.traffic: deque[str] = deque(maxlen=50)
        self._thread = threading.Thread(target=self._read_loop, name=f"{name}-reader", daemon=True)

    def start(self) -> None:
        self._thread.start()

    # ------------------------------------------------------------------ registration

    def on_request(self, method: str, handler: RequestHandler) -> None:
        self._request_handlers[method] = handler

    def on_notification(self, method: str, handler: NotificationHandler) -> None:
        self._notification_handlers[method] = handler

    # ------------------------------------------------------------------ sending

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message, separators=(",", ":")).encode("utf-8")
        header = f"Content-Length: {len(body)}\r\n\r\n".encode("ascii")
        with self._write_lock:
            if self.closed.is_set():
                raise ConnectionLost(self.close_reason or "the language server has exited")
            try:
                self._writer.write(header + body)
                self._writer.flush()
            except (OSError, ValueError) as exc:
                self._lost(f"writing to the language server failed: {exc}")
                raise ConnectionLost(self.close_reason) from None

    def request_async(self, method: str, params: Any, *, typed: bool = True) -> Future[Any]:
        """Send a request; the future gets the typed result (or RpcError / ConnectionLost).

        ``typed=False`` gives the raw JSON result, for callers that structure ambiguous unions themselves.
        """
        fut: Future[Any] = Future()
        with self._pending_lock:
            self._next_id += 1
            msg_id = self._next_id
            self._pending[msg_id] = (method if typed else None, fut)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = to_json(params)
        try:
            self._send(message)
        except ConnectionLost:
            with self._pending_lock:
                self._pending.pop(msg_id, None)
            raise
        fut.request_id = msg_id  # type: ignore[attr-defined]
        return fut

    def request(self, method: str, params: Any, timeout: float = 30.0, *, typed: bool = True) -> Any:
        fut = self.request_async(method, params, typed=typed)
        try:
            return fut.result(timeout=timeout)
        except FutureTimeout:
            self.cancel(fut)
            raise RequestTimeout(f"{method} took over {timeout:g} s") from None

    def cancel(self, fut: Future[Any]) -> None:
        msg_id = getattr(fut, "request_id", None)
        if msg_id is None:
            return
        with self._pending_lock:
            self._pending.pop(msg_id, None)
        with contextlib.suppress(ConnectionLost):
            self.notify("$/cancelRequest", lsp.CancelParams(id=msg_id))

    def notify(self, method: str, params: Any) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = to_json(params)
        self._send(message)

    # ------------------------------------------------------------------ receiving

    def _read_message(self) -> dict[str, Any] | None:
        length = None
        while True:
            line = self._reader.readline()
            if not line:
                return None
            line = line.strip()
            if not line:
                if length is None:
                    continue
                break
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        body = b""
        while len(body) < length:
            chunk = self._reader.read(length - len(body))
            if not chunk:
                return None
            body += chunk
        return json.loads(body)

    def _read_loop(self) -> None:
        try:
            while True:
                message = self._read_message()
                if message is None:
                    self._lost("the language server closed its output (it exited)")
                    return
                try:
                    self._dispatch(message)
                except Exception:
                    log.exception("%s: handling a message failed", self._name)
        except Exception as exc:  # a malformed frame: the stream cannot be trusted any more
            self._lost(f"reading from the language server failed: {exc}")

    def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None:
            msg_id = message.get("id")
            with self._pending_lock:
                entry = self._pending.pop(msg_id, None) if isinstance(msg_id, int) else None
            if entry is None:
                return
            req_method, fut = entry
            if "error" in message and message["error"] is not None:
                err = message["error"]
                fut.set_exception(RpcError(err.get("code", 0), err.get("message", ""), err.get("data")))
                return
            try:
                raw = message.get("result")
                fut.set_result(structure_result(req_method, raw) if req_method else raw)
            except Exception as exc:
                fut.set_exception(exc)
            return
        self.traffic.append(method)
        if "id" in message:
            self._answer(message["id"], method, message.get("params"))
            return
        handler = self._notification_handlers.get(method)
        if handler is not None:
            handler(self._typed_params(method, message.get("params")))

    def _typed_params(self, method: str, raw: Any) -> Any:
        kind = params_type(method)
        if kind is None or raw is None:
            return raw
        try:
            return CONVERTER.structure(raw, kind)
        except Exception:
            return raw

    def _answer(self, msg_id: Any, method: str, raw_params: Any) -> None:
        handler = self._request_handlers.get(method)
        if handler is None:
            self._send_response(msg_id, error={"code": -32601, "message": f"method not supported: {method}"})
            return
        try:
            result = handler(self._typed_params(method, raw_params))
        except Exception as exc:
            log.exception("%s: client handler for %s failed", self._name, method)
            self._send_response(msg_id, error={"code": -32603, "message": str(exc)})
            return
        self._send_response(msg_id, result=to_json(result))

    def _send_response(self, msg_id: Any, result: Any = None, error: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id}
        if error is not None:
            message["error"] = error
        else:
            message["result"] = result
        with contextlib.suppress(ConnectionLost):
            self._send(message)

    def _lost(self, reason: str) -> None:
        if self.closed.is_set():
            return
        self.close_reason = reason
        self.closed.set()
        with self._pending_lock:
            pending = list(self._pending.values())
            self._pending.clear()
        for _, fut in pending:
            if not fut.done():
                fut.set_exception(ConnectionLost(reason))

    def close(self, reason: str = "closed") -> None:
        self._lost(reason)

"""What the hosted service tells its operators: one JSON log line per request (with its request
id) and Prometheus metrics (``prometheus_client``) at ``/metrics``.

Log lines carry the method, the path (no query string), the door, the status, the time taken, the
caller's user and project ids: never a token, a header's value or a body. Metrics: HTTP requests by
door and status, tool calls by tool and outcome (counts and latency histograms), project requests
in flight, open MCP sessions and open project workspaces.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from starlette.types import Scope

log = logging.getLogger("mcp_server_ide.hosted.access")


class JsonFormatter(logging.Formatter):
    """A log record as one JSON object (``ts``, ``level``, ``logger``, ``msg`` and the record's
    ``fields``); tracebacks are left out of access lines and kept for errors."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "ts": round(record.created, 3),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            line.update(fields)
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def use_json_logs(level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    log.setLevel(logging.INFO)  # access lines whatever the level of the rest


class Observer:
    def __init__(self, sessions: Callable[[], int], workspaces: Callable[[], int]) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "mcp_ide_http_requests",
            "HTTP requests by door and status",
            ["door", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "mcp_ide_http_request_seconds", "HTTP request time by door", ["door"], registry=self.registry
        )
        self.tool_calls = Counter(
            "mcp_ide_tool_calls",
            "Tool calls by tool and outcome",
            ["tool", "outcome"],
            registry=self.registry,
        )
        self.tool_latency = Histogram(
            "mcp_ide_tool_call_seconds", "Tool call time by tool", ["tool"], registry=self.registry
        )
        self.in_flight = Gauge(
            "mcp_ide_http_requests_in_flight", "Project requests being served now", registry=self.registry
        )
        Gauge("mcp_ide_sessions", "Open MCP sessions", registry=self.registry).set_function(sessions)
        Gauge("mcp_ide_open_projects", "Open project workspaces", registry=self.registry).set_function(
            workspaces
        )

    def request(self, scope: Scope, seen: dict[str, object], seconds: float) -> None:
        door = str(
            seen.get("door") or ("ops" if scope["path"] in ("/healthz", "/readyz", "/metrics") else "none")
        )
        status = str(seen.get("status", 0))
        self.requests.labels(door, status).inc()
        self.latency.labels(door).observe(seconds)
        if door == "ops" and status == "200":
            return  # probes every few seconds would drown the log
        fields = {
            "rid": scope.get("mcp_ide.request_id"),
            "method": scope.get("method"),
            "path": scope.get("path"),
            "door": door,
            "status": seen.get("status"),
            "ms": round(seconds * 1000, 1),
            "user": seen.get("user"),
            "project": seen.get("project"),
        }
        log.info("request", extra={"fields": {k: v for k, v in fields.items() if v is not None}})

    def tool(self, name: str, outcome: str, seconds: float) -> None:
        self.tool_calls.labels(name, outcome).inc()
        self.tool_latency.labels(name).observe(seconds)

    def exposition(self) -> tuple[bytes, str]:
        return generate_latest(self.registry), CONTENT_TYPE_LATEST

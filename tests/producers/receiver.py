"""A local OTLP/HTTP receiver: what the tracing libraries' own exporters send, kept as JSON lines.

Owns the HTTP side of an OTLP collector on 127.0.0.1: any POST whose path ends in /v1/traces or
/v1/logs (so Langfuse's /api/public/otel/v1/traces too) is decoded from protobuf, gzip or not,
and kept in arrival order as one Collector-style JSON line. It must not interpret the spans.
"""

from __future__ import annotations

import gzip
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from tests.producers.collector_json import export_line

SIGNALS = {
    "traces": (
        trace_service_pb2.ExportTraceServiceRequest,
        trace_service_pb2.ExportTraceServiceResponse,
    ),
    "logs": (
        logs_service_pb2.ExportLogsServiceRequest,
        logs_service_pb2.ExportLogsServiceResponse,
    ),
}


class OtlpReceiver:
    """Start with `with OtlpReceiver() as receiver:`; `receiver.url` is the base endpoint."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.paths: list[str] = []
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> OtlpReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=5)

    def keep(self, path: str, body: bytes) -> bytes:
        """Decode one export request; the serialized (empty) response to send back."""
        signal = path.rstrip("/").rsplit("/", 1)[-1]
        request_type, response_type = SIGNALS[signal]
        request = request_type.FromString(body)
        with self._lock:
            self.lines.append(export_line(request))
            self.paths.append(path)
        return response_type().SerializeToString()

    def write(self, path: Path) -> Path:
        with self._lock:
            path.write_text("".join(line + "\n" for line in self.lines), encoding="utf-8")
        return path

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                if self.headers.get("content-encoding", "").lower() == "gzip":
                    body = gzip.decompress(body)
                path = self.path.split("?")[0]
                try:
                    answer, status = receiver.keep(path, body), 200
                except (KeyError, ValueError, DecodeError) as exc:  # not OTLP: say so, keep nothing
                    answer, status = f"not an OTLP export: {exc}".encode(), 400
                self.send_response(status)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

"""A loopback OTLP/HTTP trace receiver: decodes the protobuf an exporter posts to `/v1/traces`
(opentelemetry-proto's `ExportTraceServiceRequest`) into plain spans a test reads."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


@dataclass(frozen=True, kw_only=True)
class ReceivedSpan:
    """One span as the collector received it."""

    name: str
    trace_id: str
    span_id: str
    parent_id: str
    kind: int
    attributes: dict[str, Any]
    events: tuple[tuple[str, dict[str, Any]], ...] = ()
    status: int = 0
    service: str = ""


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


def _attributes(items: Any) -> dict[str, Any]:
    return {item.key: _value(item.value) for item in items}


@dataclass
class OtlpReceiver:
    """`with OtlpReceiver() as receiver:`; `receiver.url` is the OTLP endpoint to set."""

    spans: list[ReceivedSpan] = field(default_factory=list)
    bodies: list[bytes] = field(default_factory=list)

    def __enter__(self) -> OtlpReceiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                receiver.take(self.path, body)
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def take(self, path: str, body: bytes) -> None:
        assert path == "/v1/traces", path
        self.bodies.append(body)
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        for resource_spans in request.resource_spans:
            service = _attributes(resource_spans.resource.attributes).get("service.name", "")
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    self.spans.append(
                        ReceivedSpan(
                            name=span.name,
                            trace_id=span.trace_id.hex(),
                            span_id=span.span_id.hex(),
                            parent_id=span.parent_span_id.hex(),
                            kind=span.kind,
                            attributes=_attributes(span.attributes),
                            events=tuple((e.name, _attributes(e.attributes)) for e in span.events),
                            status=span.status.code,
                            service=service,
                        )
                    )

    def named(self, prefix: str) -> list[ReceivedSpan]:
        return [span for span in self.spans if span.name.startswith(prefix)]

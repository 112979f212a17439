"""`ScriptedServer`: a loopback HTTP server that plays a script in the providers' real wire formats.

Tests and the offline demo talk to it with the same `OpenAIChat` (or `AnthropicChat`) a user points
at a real provider, so the HTTP path, the SSE bytes and the decoder are all exercised for real.
It runs in a daemon thread, so it serves equally from a test, a script or a live kernel.
"""

from __future__ import annotations

import itertools
import json
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

from ..errors import ScriptError
from .openai_wire import openai_completion, openai_sse_events
from .script import Reply, ScriptedFailure, ScriptedRequest, Step
from .scripted import Script

_ids = itertools.count(1)


class LoopbackHTTPServer(ThreadingHTTPServer):
    """A threaded HTTP server for loopback tests: daemon threads, and quiet when clients hang up."""

    daemon_threads = True
    request_queue_size = 128
    """Connections waiting to be accepted: many clients at once (a load test) must not be reset."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client hanging up (an interrupt, a closed pool) is normal here; anything else is not."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


_Service = TypeVar("_Service", bound="LoopbackService")


class LoopbackService:
    """A loopback HTTP service in a daemon thread: `start()`/`stop()`, `with`, and its base URL.

    A subclass names its request handler class in `handler`; each handler reaches the service
    it belongs to as `self.owner`.
    """

    handler: type[BaseHTTPRequestHandler]
    _httpd: LoopbackHTTPServer | None = None

    def start(self: _Service) -> _Service:
        handler = type(f"{type(self).__name__}Handler", (self.handler,), {"owner": self})
        self._httpd = LoopbackHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},  # a quick stop(), so tests are quick
            name=f"copilot_nb-{type(self).__name__}",
            daemon=True,
        ).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self: _Service) -> _Service:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError(f"{type(self).__name__} is not running; call start() or use `with`")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"


class _Handler(BaseHTTPRequestHandler):
    owner: ScriptedServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: a test's output should show the test, not the access log."""

    def parse_request(self) -> bool:
        """Every request, of any method and path, is counted in `received` once it is read."""
        parsed = super().parse_request()
        if parsed:
            self.owner.received.append(f"{self.command} {self.path}")
        return parsed

    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            name = self.owner.model_name
            self._send_json(200, {"object": "list", "data": [{"id": name, "object": "model"}]})
        else:
            self._send_json(
                404, {"error": {"message": f"no route {self.path}", "type": "not_found"}}
            )

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError as exc:
            self._send_json(400, {"error": {"message": f"invalid JSON body: {exc}"}})
            return
        request = ScriptedRequest(body=body, path=self.path, headers=dict(self.headers.items()))
        if self.path.rstrip("/") not in (
            "/v1/chat/completions",
            "/chat/completions",
            "/v1/messages",
            "/v1/responses",
            "/responses",
        ):
            self._send_json(
                404, {"error": {"message": f"no route {self.path}", "type": "not_found"}}
            )
            return
        try:
            turn = self.owner.script.next_turn(request)
        except ScriptError as exc:
            self._send_json(500, {"error": {"message": str(exc), "type": "script_error"}})
            return
        if isinstance(turn, ScriptedFailure):
            error = {"message": turn.message, "type": turn.type}
            self._send_json(turn.status, {"error": error}, headers=turn.headers)
            return
        reply_id = f"scripted-{next(_ids)}"
        model = str(body.get("model", self.owner.model_name))
        if self.path.endswith("/messages"):
            from .anthropic_wire import anthropic_sse_events

            events: Iterable[bytes] = anthropic_sse_events(turn, model=model, message_id=reply_id)
        elif self.path.rstrip("/").endswith("/responses"):
            from .responses_wire import responses_sse_events

            encrypted = "reasoning.encrypted_content" in (body.get("include") or ())
            events = responses_sse_events(
                turn, model=model, response_id=reply_id, encrypted_reasoning=encrypted
            )
        elif body.get("stream"):
            asked = bool((body.get("stream_options") or {}).get("include_usage"))
            include_usage = asked and self.owner.sends_usage
            events = openai_sse_events(
                turn, model=model, completion_id=reply_id, include_usage=include_usage
            )
        else:
            self._send_json(200, openai_completion(turn, model=model, completion_id=reply_id))
            return
        self._send_stream(events, delay=turn.delay, break_after=turn.break_after)

    def _send_json(
        self, status: int, payload: Any, *, headers: Mapping[str, str] | None = None
    ) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_stream(
        self, events: Iterable[bytes], *, delay: float, break_after: int | None
    ) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for index, data in enumerate(_paced(events, delay)):
                if break_after is not None and index >= break_after:
                    self.close_connection = True
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client hung up (an interrupt): nothing to do
            self.owner.hangups += 1


class ScriptedServer(LoopbackService):
    """Serves `POST /v1/chat/completions`, `POST /v1/messages`, `POST /v1/responses` and
    `GET /v1/models` on 127.0.0.1.

    Use as a context manager, or call `start()`/`stop()`. `url` is the OpenAI-style base URL
    (ending in `/v1`); `requests` holds every request body received, in order.
    """

    handler = _Handler

    def __init__(
        self,
        steps: Iterable[Step] = (),
        *,
        responder: Callable[[ScriptedRequest], Reply] | None = None,
        model_name: str = "scripted",
        sends_usage: bool = True,
    ) -> None:
        self.script = Script(steps, responder=responder)
        self.model_name = model_name
        self.sends_usage = sends_usage
        """False: a server that streams no usage whatever the request asks (some local ones)."""
        self.hangups = 0
        """Streams the client closed before they ended (an interrupt, a proxy's client gone)."""
        self.received: list[str] = []
        """`METHOD path` of every request that reached the server, of any kind, in order."""

    # --- what tests look at -----------------------------------------------------------------

    @property
    def url(self) -> str:
        """The OpenAI-style base URL to give `OpenAIChat(base_url=...)`."""
        return f"{self.base_url}/v1"

    @property
    def requests(self) -> list[ScriptedRequest]:
        return self.script.requests

    def assert_complete(self) -> None:
        self.script.assert_complete()

    def model(self, **options: Any) -> Any:
        """An `OpenAIChat` pointed at this server."""
        from ..models.openai.chat import OpenAIChat

        return OpenAIChat(self.model_name, base_url=self.url, api_key="scripted", **options)


def _paced(events: Iterable[bytes], delay: float) -> Iterator[bytes]:
    for index, data in enumerate(events):
        if delay and index:
            time.sleep(delay)
        yield data

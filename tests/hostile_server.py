"""`HostileServer`: a model server that misbehaves as a test tells it, route by route.

Each route (`"GET /v1/models"`, `"POST /v1/chat/completions"`) answers an `Answer`: a status and
bytes, sent as a hostile server sends them (a byte at a time, or repeated to a size no lookup
should read whole). A chat request that no route names is answered "ok" (in Chat Completions'
stream, or the Responses API's), so a turn can get past a misbehaving lookup; any other request
is a 404.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from copilot_nb.testing import reply
from copilot_nb.testing.openai_wire import openai_sse_events
from copilot_nb.testing.responses_wire import responses_sse_events
from copilot_nb.testing.server import LoopbackService

TERMINAL_ATTACK = "\x1b]52;c;cHduZWQ=\x07\x1b]0;owned\x07\x1b[2J\x1b[31m\x9b1m\u202eevil\x00\r"
"""What a hostile server puts in its words: an OSC 52 clipboard write, an OSC 0 window title, a
screen clear and a colour (CSI, also as the one-character C1 CSI), a right-to-left override, a
NUL and a carriage return that would overwrite the line."""


def json_bytes(value: Any) -> bytes:
    return json.dumps(value).encode()


@dataclass(frozen=True, kw_only=True)
class Answer:
    """What one route answers: `head`, then `body` `repeat` times, then `tail`, one byte every
    `every` seconds when `every` is set (a trickle)."""

    status: int = 200
    body: bytes = b""
    head: bytes = b""
    tail: bytes = b""
    repeat: int = 1
    every: float = 0.0
    content_type: str = "application/json"

    @property
    def size(self) -> int:
        return len(self.head) + len(self.body) * self.repeat + len(self.tail)


@dataclass
class HostileServer(LoopbackService):
    """Answers each route in `routes` as its `Answer` says; `sent` counts the body bytes each
    route wrote before the client stopped reading, `hangups` the answers cut short."""

    routes: dict[str, Answer] = field(default_factory=dict)
    model_name: str = "hostile"
    sent: dict[str, int] = field(default_factory=dict)
    hangups: int = 0

    @property
    def url(self) -> str:
        return f"{self.base_url}/v1"

    def model(self, **options: Any) -> Any:
        from copilot_nb.models.openai.chat import OpenAIChat

        return OpenAIChat(self.model_name, base_url=self.url, api_key="hostile", **options)


class _HostileHandler(BaseHTTPRequestHandler):
    owner: HostileServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: a test's output should show the test."""

    def do_GET(self) -> None:
        self._route()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._route()

    def _route(self) -> None:
        key = f"{self.command} {self.path}"
        answer = self.owner.routes.get(key)
        name = self.owner.model_name
        if answer is None and self.path.endswith("/chat/completions"):
            events = openai_sse_events(
                reply("ok"), model=name, completion_id="c1", include_usage=False
            )
            answer = Answer(body=b"".join(events), content_type="text/event-stream")
        elif answer is None and self.path.endswith("/responses"):
            events = responses_sse_events(
                reply("ok"), model=name, response_id="r1", encrypted_reasoning=False
            )
            answer = Answer(body=b"".join(events), content_type="text/event-stream")
        if answer is None:
            answer = Answer(status=404, body=json_bytes({"error": {"message": "no route"}}))
        self.send_response(answer.status)
        self.send_header("Content-Type", answer.content_type)
        self.send_header("Content-Length", str(answer.size))
        self.end_headers()
        self.owner.sent[key] = 0
        try:
            for piece in self._pieces(answer):
                self.wfile.write(piece)
                self.wfile.flush()
                self.owner.sent[key] += len(piece)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
            self.owner.hangups += 1

    def _pieces(self, answer: Answer) -> Any:
        parts = [answer.head, *([answer.body] * answer.repeat), answer.tail]
        if not answer.every:
            yield from (part for part in parts if part)
            return
        for part in parts:
            for index in range(len(part)):
                time.sleep(answer.every)
                yield part[index : index + 1]


HostileServer.handler = _HostileHandler


@pytest.fixture
def hostile() -> Iterator[Callable[..., HostileServer]]:
    """Start HostileServers that are stopped when the test ends: `hostile(**{route: answer})`."""
    servers: list[HostileServer] = []

    def start(**routes: Answer) -> HostileServer:
        server = HostileServer(routes=dict(routes)).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()

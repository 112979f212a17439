"""Benchmark inputs: big realistic streams, and a loopback server that serves them as providers do."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any

from copilot_nb.testing.anthropic_wire import anthropic_sse_events
from copilot_nb.testing.openai_wire import openai_sse_events
from copilot_nb.testing.responses_wire import responses_sse_events
from copilot_nb.testing.script import ScriptedTurn, call
from copilot_nb.testing.server import LoopbackHTTPServer

WRITE_SIZE = 16 * 1024
"""Bytes per socket write: what a busy provider's TCP stream delivers per read, roughly."""


def big_turn(deltas: int = 5000) -> ScriptedTurn:
    """~5,000 text deltas with multi-byte characters, plus 3 streamed tool calls."""
    text = "".join(f"Line {i}: naïve café — résumé ✓ " for i in range(deltas))
    chunk = max(1, len(text) // deltas)
    calls = tuple(
        call(
            "write_file",
            id=f"call_{n}",
            path=f"src/module_{n}.py",
            content="x = 1  # ünïcode\n" * 400,
        )
        for n in range(3)
    )
    return ScriptedTurn(text=text, tool_calls=calls, chunk_size=chunk)


def openai_body(turn: ScriptedTurn) -> bytes:
    return b"".join(openai_sse_events(turn, model="bench", completion_id="chatcmpl-bench"))


def anthropic_body(turn: ScriptedTurn) -> bytes:
    return b"".join(anthropic_sse_events(turn, model="bench", message_id="msg_bench"))


def responses_body(turn: ScriptedTurn) -> bytes:
    return b"".join(responses_sse_events(turn, model="bench", response_id="resp_bench"))


class BodyServer:
    """Serves fixed SSE bodies at the providers' paths, in WRITE_SIZE pieces."""

    def __init__(self, bodies: dict[str, bytes]) -> None:
        owner = self
        self.bodies = bodies

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = owner.bodies[self.path]
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                for start in range(0, len(body), WRITE_SIZE):
                    self.wfile.write(body[start : start + WRITE_SIZE])

        self.httpd = LoopbackHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        host, port = self.httpd.server_address[:2]
        self.url = f"http://{host!s}:{port}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def request_json() -> bytes:
    return json.dumps({"model": "bench", "messages": [{"role": "user", "content": "go"}]}).encode()

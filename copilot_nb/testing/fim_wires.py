"""`FillServer`: a loopback server speaking every fill-in-the-middle wire copilot_nb asks.

One server answers each route in the bytes its provider sends (see each wire's module for the
documentation it follows): `/v1/completions` and `/beta/completions` (OpenAI, vLLM, DeepSeek:
text-completion chunks, `data: [DONE]`), `/v1/fim/completions` (Mistral: Chat Completions
chunks), `/api/generate` (Ollama: newline-delimited JSON), `/infill` (llama.cpp: events until
`"stop": true`, no `[DONE]`), `/v1/engines/<engine>/completions` (Copilot's ghost text, its
chunks as recorded from the editors' endpoint), and `/v1/chat/completions` (a chat model, for
the fallback). The answer is `pieces`, sent after `delay` seconds; every request is recorded.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from ..models.sse import sse_event as _sse
from .server import LoopbackService

CREATED = 1735397418
STAMP = "2025-01-01T00:00:00.000000Z"


def completions_events(
    pieces: Sequence[str], model: str, *, copilot: bool = False
) -> Iterator[bytes]:
    """OpenAI-style text completion chunks; Copilot's carry its `p` padding field too."""
    for index, piece in enumerate(pieces):
        last = index == len(pieces) - 1
        choice: dict[str, Any] = {
            "text": piece,
            "index": 0,
            "logprobs": None,
            "finish_reason": "stop" if last else None,
        }
        if copilot:
            choice["p"] = "aaaaaaa"
        yield _sse(
            {
                "id": "cmpl-loopback",
                "object": "text_completion",
                "created": CREATED,
                "model": model,
                "choices": [choice],
            }
        )
    if not copilot:
        yield _sse(
            {
                "id": "cmpl-loopback",
                "object": "text_completion",
                "created": CREATED,
                "model": model,
                "choices": [],
                "usage": {
                    "prompt_tokens": 12,
                    "completion_tokens": len(pieces),
                    "total_tokens": 12 + len(pieces),
                },
            }
        )
    yield b"data: [DONE]\n\n"


def chat_events(pieces: Sequence[str], model: str) -> Iterator[bytes]:
    """Chat Completions chunks: Mistral's FIM stream and any chat model's."""
    for index, piece in enumerate(pieces):
        delta: dict[str, Any] = {"content": piece}
        if index == 0:
            delta = {"role": "assistant", "content": piece}
        yield _sse(
            {
                "id": "chatcmpl-loopback",
                "object": "chat.completion.chunk",
                "created": CREATED,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
            }
        )
    yield _sse(
        {
            "id": "chatcmpl-loopback",
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": model,
            "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": 12,
                "total_tokens": 12 + len(pieces),
                "completion_tokens": len(pieces),
            },
        }
    )
    yield b"data: [DONE]\n\n"


def ollama_lines(pieces: Sequence[str], model: str) -> Iterator[bytes]:
    """Ollama's `/api/generate` stream: one JSON object per line, the last with `done: true`."""
    for piece in pieces:
        line = {"model": model, "created_at": STAMP, "response": piece, "done": False}
        yield json.dumps(line, separators=(",", ":")).encode() + b"\n"
    yield (
        json.dumps(
            {
                "model": model,
                "created_at": STAMP,
                "response": "",
                "done": True,
                "done_reason": "stop",
                "context": [1, 2, 3],
                "total_duration": 50000000,
                "load_duration": 1000000,
                "prompt_eval_count": 12,
                "prompt_eval_duration": 2000000,
                "eval_count": len(pieces),
                "eval_duration": 40000000,
            },
            separators=(",", ":"),
        ).encode()
        + b"\n"
    )


def infill_events(pieces: Sequence[str], model: str) -> Iterator[bytes]:
    """llama.cpp's `/infill` stream: a `content` event per token, then `stop: true`."""
    for index, piece in enumerate(pieces):
        yield _sse(
            {
                "index": 0,
                "content": piece,
                "tokens": [1000 + index],
                "stop": False,
                "id_slot": -1,
                "tokens_predicted": index + 1,
                "tokens_evaluated": 12,
            }
        )
    yield _sse(
        {
            "index": 0,
            "content": "",
            "tokens": [],
            "id_slot": 0,
            "stop": True,
            "model": model,
            "tokens_predicted": len(pieces),
            "tokens_evaluated": 12,
            "has_new_line": False,
            "truncated": False,
            "stop_type": "eos",
            "stopping_word": "",
            "tokens_cached": 11,
            "timings": {
                "prompt_n": 1,
                "prompt_ms": 1.0,
                "predicted_n": len(pieces),
                "predicted_ms": 40.0,
            },
        }
    )


@dataclass(frozen=True, kw_only=True)
class FillCall:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class _Handler(BaseHTTPRequestHandler):
    owner: FillServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def do_POST(self) -> None:
        began = time.perf_counter()
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        owner = self.owner
        with owner.lock:
            owner.calls.append(
                FillCall(path=self.path, headers=dict(self.headers.items()), body=body)
            )
        path = self.path.rstrip("/")
        model = str(body.get("model") or "loopback")
        pieces = owner.pieces
        if owner.refuse_suffix and "suffix" in body:
            self._json(
                400,
                {
                    "object": "error",
                    "message": "suffix is not currently supported",
                    "type": "BadRequestError",
                    "param": None,
                    "code": 400,
                },
            )
            return
        if owner.refuse_insert and path == "/api/generate":
            self._json(
                400, {"error": f"registry.ollama.ai/library/{model}:latest does not support insert"}
            )
            return
        events: Iterable[bytes]
        kind = "text/event-stream"
        if path in ("/v1/completions", "/beta/completions"):
            events = completions_events(pieces, model)
        elif path.startswith("/v1/engines/") and path.endswith("/completions"):
            events = completions_events(pieces, path.split("/")[3], copilot=True)
        elif path in ("/v1/fim/completions", "/v1/chat/completions"):
            events = chat_events(pieces, model)
        elif path == "/api/generate":
            events, kind = ollama_lines(pieces, model), "application/x-ndjson"
        elif path == "/infill":
            events = infill_events(pieces, model)
        else:
            self._json(404, {"error": {"message": f"no route {self.path}"}})
            return
        if owner.delay:
            time.sleep(owner.delay)
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for data in events:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
            return
        with owner.lock:
            owner.served.append(time.perf_counter() - began)

    def _json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class FillServer(LoopbackService):
    """Answers every fill wire with `pieces` after `delay` seconds; `calls` records requests."""

    handler = _Handler

    def __init__(
        self,
        pieces: Sequence[str] = ("df", "['total']"),
        *,
        delay: float = 0.0,
        refuse_suffix: bool = False,
        refuse_insert: bool = False,
    ) -> None:
        self.pieces = list(pieces)
        self.delay = delay
        self.refuse_suffix = refuse_suffix
        self.refuse_insert = refuse_insert
        """Answer `/api/generate` as Ollama does for a model without a FIM template."""
        self.calls: list[FillCall] = []
        self.served: list[float] = []
        """Seconds each answered request took here, from its body read to its last byte."""
        self.lock = threading.Lock()

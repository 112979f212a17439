"""A scripted turn as the exact bytes Anthropic's Messages API streams, for loopback servers.

The shape follows recorded Anthropic streams: `message_start`, a `ping`, one content block per
part (thinking, text, tool_use) with `content_block_start`/`_delta`/`_stop`, then `message_delta`
with the stop reason and cumulative usage, and `message_stop`.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from .script import ScriptedTurn

_STOP_REASONS = {"tool_calls": "tool_use", "stop": "end_turn", "length": "max_tokens"}
"""OpenAI-style finish reasons (what ScriptedTurn resolves to) -> Anthropic stop reasons."""


def anthropic_sse_event(kind: str, data: dict[str, Any]) -> bytes:
    """One SSE event as Anthropic frames it: an `event:` line, a `data:` line, a blank line."""
    body = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"event: {kind}\ndata: {body}\n\n".encode()


def anthropic_error_body(kind: str, message: str) -> bytes:
    """The JSON body of an Anthropic error: an HTTP error response, or a mid-stream `error` event."""
    return json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()


def fake_signature(reasoning: str) -> str:
    """A stable stand-in for the opaque signature Anthropic attaches to a thinking block."""
    return base64.b64encode(hashlib.sha256(reasoning.encode()).digest() * 2).decode()


def anthropic_sse_events(turn: ScriptedTurn, *, model: str, message_id: str) -> list[bytes]:
    """Encode `turn` as the SSE events of a streamed Messages API response, one bytes per event."""
    size = max(1, turn.chunk_size)
    usage = turn.resolved_usage
    events = [
        anthropic_sse_event(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": usage.input_tokens, "output_tokens": 1},
                },
            },
        ),
        anthropic_sse_event("ping", {"type": "ping"}),
    ]
    index = 0

    def block(start: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
        nonlocal index
        events.append(
            anthropic_sse_event(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
        )
        for delta in deltas:
            events.append(
                anthropic_sse_event(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            )
        events.append(
            anthropic_sse_event(
                "content_block_stop", {"type": "content_block_stop", "index": index}
            )
        )
        index += 1

    if turn.reasoning:
        thinking: list[dict[str, Any]] = [
            {"type": "thinking_delta", "thinking": piece} for piece in _pieces(turn.reasoning, size)
        ]
        thinking.append({"type": "signature_delta", "signature": fake_signature(turn.reasoning)})
        block({"type": "thinking", "thinking": "", "signature": ""}, thinking)
    if turn.text:
        block(
            {"type": "text", "text": ""},
            [{"type": "text_delta", "text": piece} for piece in _pieces(turn.text, size)],
        )
    for call in turn.tool_calls:
        raw = call.raw_arguments
        pieces = ["", *_pieces(raw, size)]
        block(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": {}},
            [{"type": "input_json_delta", "partial_json": piece} for piece in pieces],
        )
    finish = turn.resolved_finish_reason
    events.append(
        anthropic_sse_event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": _STOP_REASONS.get(finish, finish), "stop_sequence": None},
                "usage": {"output_tokens": usage.output_tokens},
            },
        )
    )
    events.append(anthropic_sse_event("message_stop", {"type": "message_stop"}))
    return events


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]

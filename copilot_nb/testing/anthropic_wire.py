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

from .script import ScriptedTurn, pieces

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
    size = turn.chunk_size
    usage = turn.resolved_usage
    start: dict[str, Any] = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": usage.input_tokens, "output_tokens": 1, **usage.raw},
    }
    events = [
        anthropic_sse_event("message_start", {"type": "message_start", "message": start}),
        anthropic_sse_event("ping", {"type": "ping"}),
    ]
    blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    if turn.reasoning:
        thinking: list[dict[str, Any]] = [
            {"type": "thinking_delta", "thinking": piece} for piece in pieces(turn.reasoning, size)
        ]
        thinking.append({"type": "signature_delta", "signature": fake_signature(turn.reasoning)})
        blocks.append(({"type": "thinking", "thinking": "", "signature": ""}, thinking))
    if turn.text:
        text = [{"type": "text_delta", "text": piece} for piece in pieces(turn.text, size)]
        blocks.append(({"type": "text", "text": ""}, text))
    for call in turn.tool_calls:
        arguments = ["", *pieces(call.raw_arguments, size)]
        blocks.append(
            (
                {"type": "tool_use", "id": call.id, "name": call.name, "input": {}},
                [{"type": "input_json_delta", "partial_json": piece} for piece in arguments],
            )
        )
    for index, (block, deltas) in enumerate(blocks):
        events.extend(content_block_events(index, block, deltas))
    finish = turn.resolved_finish_reason
    end = {"stop_reason": _STOP_REASONS.get(finish, finish), "stop_sequence": None}
    events.append(
        anthropic_sse_event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": end,
                "usage": {"output_tokens": usage.output_tokens},
            },
        )
    )
    events.append(anthropic_sse_event("message_stop", {"type": "message_stop"}))
    return events


def content_block_events(
    index: int, block: dict[str, Any], deltas: list[dict[str, Any]]
) -> list[bytes]:
    """One content block: its start, its deltas, its stop."""
    start = {"type": "content_block_start", "index": index, "content_block": block}
    return [
        anthropic_sse_event("content_block_start", start),
        *(
            anthropic_sse_event(
                "content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}
            )
            for d in deltas
        ),
        anthropic_sse_event("content_block_stop", {"type": "content_block_stop", "index": index}),
    ]

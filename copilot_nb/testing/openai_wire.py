"""A scripted turn as the exact bytes an OpenAI Chat Completions stream carries."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from ..models.sse import sse_event
from .script import ScriptedTurn, pieces

sse = sse_event
"""One SSE event, framed as OpenAI frames it (`models/sse.py`)."""


def openai_sse_events(
    turn: ScriptedTurn, *, model: str, completion_id: str, include_usage: bool = True
) -> Iterator[bytes]:
    """The events of one streamed reply: role, reasoning, text, tool calls, finish, usage, [DONE]."""
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
        return sse(
            {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [
                    {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
                ],
            }
        )

    yield chunk({"role": "assistant", "content": ""})
    for piece in pieces(turn.reasoning, turn.chunk_size):
        yield chunk({"reasoning_content": piece})
    for piece in pieces(turn.text, turn.chunk_size):
        yield chunk({"content": piece})
    for index, call in enumerate(turn.tool_calls):
        head = {"index": index, "id": call.id, "type": "function"}
        yield chunk({"tool_calls": [{**head, "function": {"name": call.name, "arguments": ""}}]})
        for piece in pieces(call.raw_arguments, turn.chunk_size * 2):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, turn.resolved_finish_reason)
    if include_usage:
        yield sse(
            {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [],
                "usage": openai_usage(turn),
            }
        )
    yield sse("[DONE]")


def openai_usage(turn: ScriptedTurn) -> dict[str, Any]:
    """The usage block; the turn's `usage.raw` adds its details (`prompt_tokens_details`)."""
    usage = turn.resolved_usage
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
        **usage.raw,
    }


def openai_completion(turn: ScriptedTurn, *, model: str, completion_id: str) -> dict[str, Any]:
    """The same turn as a non-streamed `chat.completion` object."""
    message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
    if turn.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.raw_arguments},
            }
            for call in turn.tool_calls
        ]
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": turn.resolved_finish_reason}],
        "usage": openai_usage(turn),
    }

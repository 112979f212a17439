"""A scripted turn as the exact bytes an OpenAI Responses API stream carries.

Framing is OpenAI's: an `event:` line naming the type, then one `data:` line, with a
`sequence_number` on every event and no `[DONE]`. Reasoning becomes a reasoning item with a
summary (and `encrypted_content` when the request asked for it), text a message item, and each
tool call a `function_call` item whose arguments stream in pieces.
"""

from __future__ import annotations

import base64
import itertools
import json
import time
from collections.abc import Iterator
from typing import Any

from .script import ScriptedTurn, pieces


def responses_usage(turn: ScriptedTurn) -> dict[str, Any]:
    usage = turn.resolved_usage
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage.total_tokens,
        **usage.raw,  # a turn's own details (`input_tokens_details.cached_tokens`)
    }


def responses_sse_events(
    turn: ScriptedTurn, *, model: str, response_id: str, encrypted_reasoning: bool = False
) -> Iterator[bytes]:
    """The events of one streamed reply, from `response.created` to the terminal event."""
    sequence = itertools.count()
    created = int(time.time())

    def event(kind: str, **fields: Any) -> bytes:
        payload = {"type": kind, "sequence_number": next(sequence), **fields}
        data = json.dumps(payload, separators=(",", ":"))
        return f"event: {kind}\ndata: {data}\n\n".encode()

    def response(status: str, output: list[Any], **extra: Any) -> dict[str, Any]:
        return {
            "id": response_id,
            "object": "response",
            "created_at": created,
            "status": status,
            "error": None,
            "incomplete_details": None,
            "model": model,
            "output": output,
            "store": False,
            "usage": None,
            **extra,
        }

    yield event("response.created", response=response("in_progress", []))
    yield event("response.in_progress", response=response("in_progress", []))
    output: list[dict[str, Any]] = []
    if turn.reasoning:
        index, item_id = len(output), f"rs_{response_id}_{len(output)}"
        item: dict[str, Any] = {"id": item_id, "type": "reasoning", "summary": []}
        if encrypted_reasoning:
            item["encrypted_content"] = ""
        yield event("response.output_item.added", output_index=index, item=item)
        head = {"item_id": item_id, "output_index": index, "summary_index": 0}
        yield event(
            "response.reasoning_summary_part.added",
            **head,
            part={"type": "summary_text", "text": ""},
        )
        for piece in pieces(turn.reasoning, turn.chunk_size):
            yield event("response.reasoning_summary_text.delta", **head, delta=piece)
        yield event("response.reasoning_summary_text.done", **head, text=turn.reasoning)
        part = {"type": "summary_text", "text": turn.reasoning}
        yield event("response.reasoning_summary_part.done", **head, part=part)
        item = {**item, "summary": [part]}
        if encrypted_reasoning:
            item["encrypted_content"] = base64.b64encode(turn.reasoning.encode()).decode()
        output.append(item)
        yield event("response.output_item.done", output_index=index, item=item)
    if turn.text:
        index, item_id = len(output), f"msg_{response_id}_{len(output)}"
        item = {
            "id": item_id,
            "type": "message",
            "status": "in_progress",
            "content": [],
            "role": "assistant",
        }
        yield event("response.output_item.added", output_index=index, item=item)
        head = {"item_id": item_id, "output_index": index, "content_index": 0}
        empty: dict[str, Any] = {
            "type": "output_text",
            "annotations": [],
            "logprobs": [],
            "text": "",
        }
        yield event("response.content_part.added", **head, part=empty)
        for piece in pieces(turn.text, turn.chunk_size):
            yield event("response.output_text.delta", **head, delta=piece, logprobs=[])
        yield event("response.output_text.done", **head, text=turn.text, logprobs=[])
        part = {**empty, "text": turn.text}
        yield event("response.content_part.done", **head, part=part)
        item = {**item, "status": "completed", "content": [part]}
        output.append(item)
        yield event("response.output_item.done", output_index=index, item=item)
    for call in turn.tool_calls:
        index, item_id = len(output), f"fc_{response_id}_{len(output)}"
        item = {
            "id": item_id,
            "type": "function_call",
            "status": "in_progress",
            "arguments": "",
            "call_id": call.id,
            "name": call.name,
        }
        yield event("response.output_item.added", output_index=index, item=item)
        head = {"item_id": item_id, "output_index": index}
        for piece in pieces(call.raw_arguments, turn.chunk_size * 2):
            yield event("response.function_call_arguments.delta", **head, delta=piece)
        yield event("response.function_call_arguments.done", **head, arguments=call.raw_arguments)
        item = {**item, "status": "completed", "arguments": call.raw_arguments}
        output.append(item)
        yield event("response.output_item.done", output_index=index, item=item)
    usage = responses_usage(turn)
    if turn.resolved_finish_reason == "length":
        final = response(
            "incomplete",
            output,
            usage=usage,
            incomplete_details={"reason": "max_output_tokens"},
        )
        yield event("response.incomplete", response=final)
    else:
        yield event("response.completed", response=response("completed", output, usage=usage))

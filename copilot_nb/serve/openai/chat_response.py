"""Our replies in OpenAI's Chat Completions wire shape: pure, the server only writes the bytes.

`completion_body` is a whole `chat.completion`; `ChunkEncoder` turns a model stream into the
`chat.completion.chunk` events OpenAI sends, framed as OpenAI frames them, so every client that
reads OpenAI's stream (the official SDKs, LangChain, editors) reads ours.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from ...events import ToolCallDelta
from ...messages import AssistantMessage, ToolCall, Usage
from ...models.sse import sse_event
from .chat_request import ApiError
from .stream_encoder import StreamEncoder

if sys.version_info >= (3, 11):
    pass
else:  # pragma: no cover
    pass

FINISH_REASONS = {
    "stop": "stop",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "length": "length",
    "max_tokens": "length",
    "max_output_tokens": "length",
    "tool_calls": "tool_calls",
    "tool_use": "tool_calls",
    "content_filter": "content_filter",
    "refusal": "content_filter",
}
"""Each provider's reason (ours pass the provider's through) as one of OpenAI's, which the SDKs
accept and no others; anything else (an error, an incomplete reply) reads as "stop"."""


sse = sse_event
"""One SSE event, framed as OpenAI frames it (`models/sse.py`)."""


def finish_reason(message: AssistantMessage) -> str:
    """ "tool_calls" whenever there are calls (clients key on it to run them), else the reason."""
    if message.tool_calls:
        return "tool_calls"
    return FINISH_REASONS.get(message.finish_reason or "stop", "stop")


def usage_body(usage: Usage | None) -> dict[str, int]:
    usage = usage or Usage()
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
    }


def tool_call_body(call: ToolCall) -> dict[str, Any]:
    """A call as OpenAI sends it: arguments as the model's JSON text, "{}" for none."""
    arguments = call.raw_arguments
    if not arguments:
        arguments = (
            call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
        )
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": arguments},
    }


def completion_body(
    message: AssistantMessage, *, model: str, completion_id: str, created: int
) -> dict[str, Any]:
    """A non-streamed `chat.completion`; content is null when the reply is only tool calls."""
    reply: dict[str, Any] = {
        "role": "assistant",
        "content": message.text or (None if message.tool_calls or message.refusal else ""),
        "refusal": message.refusal or None,
    }
    if message.reasoning:
        reply["reasoning_content"] = message.reasoning  # the field DeepSeek, vLLM and others use
    if message.tool_calls:
        reply["tool_calls"] = [tool_call_body(call) for call in message.tool_calls]
    choice = {
        "index": 0,
        "message": reply,
        "logprobs": None,
        "finish_reason": finish_reason(message),
    }
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [choice],
        "usage": usage_body(message.usage),
    }


class ChunkEncoder(StreamEncoder):
    """A model stream as `chat.completion.chunk` events: `start()`, `event(e)` for each event,
    then `done()`; `error(e)` in place of the rest when the stream fails.

    Tool calls are numbered 0, 1, ... in the order they start, and each call's id and name are sent
    once (clients concatenate every string they receive for a call). A reply the model gave only
    in its final message (no deltas of that kind) is sent just before the finish, so the client
    always rebuilds the whole reply.
    """

    def __init__(
        self, *, model: str, completion_id: str, created: int, include_usage: bool = False
    ) -> None:
        self.model = model
        self.completion_id = completion_id
        self.created = created
        self.include_usage = include_usage
        self._calls: dict[int, int] = {}  # the model's call index -> the index sent
        self._sent: set[tuple[int, str]] = set()  # (call index sent, "id" or "name")
        self._streamed: set[str] = set()  # "text", "reasoning" once a delta of it went out

    def start(self) -> bytes:
        return self._chunk({"role": "assistant", "content": ""})

    def _text(self, text: str) -> bytes:
        return self._piece("text", "content", text)

    def _reasoning(self, text: str) -> bytes:
        return self._piece("reasoning", "reasoning_content", text)

    def done(self) -> bytes:
        return sse("[DONE]")

    def error(self, error: ApiError) -> bytes:
        """An error in the middle of a stream, sent as OpenAI sends one: a data event holding the
        error body, which the SDKs raise as an APIError."""
        return sse(error.body())

    def _piece(self, kind: str, field: str, text: str) -> bytes:
        if not text:
            return b""
        self._streamed.add(kind)
        return self._chunk({field: text})

    def _tool_delta(self, delta: ToolCallDelta) -> bytes:
        first = delta.index not in self._calls
        index = self._calls.setdefault(delta.index, len(self._calls))
        entry: dict[str, Any] = {"index": index}
        function: dict[str, Any] = {}
        if delta.id and (index, "id") not in self._sent:
            entry["id"] = delta.id
            self._sent.add((index, "id"))
        if first:
            entry["type"] = "function"
        if delta.name and (index, "name") not in self._sent:
            function["name"] = delta.name
            self._sent.add((index, "name"))
        if first or delta.arguments:
            function["arguments"] = delta.arguments
        if function:
            entry["function"] = function
        return self._chunk({"tool_calls": [entry]}) if len(entry) > 1 else b""

    def _finish(self, message: AssistantMessage) -> bytes:
        out = [self._unstreamed(message), self._chunk({}, finish_reason(message))]
        if self.include_usage:
            out.append(sse({**self._head(), "choices": [], "usage": usage_body(message.usage)}))
        return b"".join(out)

    def _unstreamed(self, message: AssistantMessage) -> bytes:
        """What the model put only in its final message, so the client still receives it."""
        out = []
        if message.reasoning and "reasoning" not in self._streamed:
            out.append(self._piece("reasoning", "reasoning_content", message.reasoning))
        if message.text and "text" not in self._streamed:
            out.append(self._piece("text", "content", message.text))
        if message.tool_calls and not self._calls:
            calls = [
                {"index": index, **tool_call_body(call)}
                for index, call in enumerate(message.tool_calls)
            ]
            self._calls = {index: index for index in range(len(calls))}
            out.append(self._chunk({"tool_calls": calls}))
        return b"".join(out)

    def _head(self) -> dict[str, Any]:
        return {
            "id": self.completion_id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
        }

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return sse({**self._head(), "choices": [choice]})

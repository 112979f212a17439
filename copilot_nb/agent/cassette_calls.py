"""The tool calls a cassette's recorded replies ask for, read through the decoders a replay uses.

Before a replay starts, the user is shown what it will do: each call the recorded model asks
for, read from the recorded responses (what will actually come back), never from a description
the file gives of itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import CopilotError
from ..messages import AssistantMessage
from ..models.anthropic.stream import MessagesStreamDecoder
from ..models.cassettes.cassette import Cassette
from ..models.cassettes.entries import Exchange
from ..models.openai.chat_stream import ChatCompletionsDecoder
from ..models.openai.responses_stream import ResponsesDecoder


@dataclass(frozen=True, kw_only=True)
class RecordedCall:
    """One tool call a replay will make: the cassette entry whose reply asks for it."""

    entry: int
    name: str
    arguments: Any


def recorded_calls(cassette: Cassette) -> list[RecordedCall]:
    """Every tool call in the cassette's model replies, in order."""
    calls: list[RecordedCall] = []
    for entry in cassette.entries:
        if not isinstance(entry, Exchange) or not entry.request.in_order:
            continue
        message = _decoded(entry)
        if message is None:
            continue
        calls += [
            RecordedCall(entry=entry.n, name=call.name, arguments=call.arguments)
            for call in message.tool_calls
        ]
    return calls


def _decoded(entry: Exchange) -> AssistantMessage | None:
    """The reply of one model exchange, or None when it holds none (an error, another shape)."""
    response = entry.response
    if response.error or response.status != 200:
        return None
    path = entry.request.path.split("?")[0]
    decoder: ChatCompletionsDecoder | ResponsesDecoder | MessagesStreamDecoder
    if path.endswith("/chat/completions"):
        decoder = ChatCompletionsDecoder()
    elif path.endswith("/responses"):
        decoder = ResponsesDecoder()
    elif path.endswith("/messages"):
        decoder = MessagesStreamDecoder()
    else:
        return None
    try:
        decoder.feed(response.body)
        return decoder.close()
    except (CopilotError, ValueError):
        return None

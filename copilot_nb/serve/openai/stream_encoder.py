"""What every streamed reply of the proxy shares: one model event to the bytes of its wire.

`chat_response.ChunkEncoder` (Chat Completions) and `responses_events.ResponseEncoder` (the
Responses API) differ in what a piece of text, a tool call's delta and the finish look like, not
in which events a client sees: a Notice (a retry's wait) is ours and is never sent.
"""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    from typing import assert_never
else:  # pragma: no cover
    from typing_extensions import assert_never

from ...events import ModelEvent, ModelResponse, Notice, ReasoningDelta, TextDelta, ToolCallDelta
from ...messages import AssistantMessage


class StreamEncoder:
    """Dispatches model events to the wire's own pieces; subclasses write those."""

    def event(self, event: ModelEvent) -> bytes:
        """The bytes for one model event; b"" for one the client does not see (a Notice)."""
        match event:
            case TextDelta():
                return self._text(event.text)
            case ReasoningDelta():
                return self._reasoning(event.text)
            case ToolCallDelta():
                return self._tool_delta(event)
            case Notice():
                return b""
            case ModelResponse():
                return self._finish(event.message)
            case _:
                assert_never(event)

    def _text(self, text: str) -> bytes:
        raise NotImplementedError

    def _reasoning(self, text: str) -> bytes:
        raise NotImplementedError

    def _tool_delta(self, delta: ToolCallDelta) -> bytes:
        raise NotImplementedError

    def _finish(self, message: AssistantMessage) -> bytes:
        raise NotImplementedError

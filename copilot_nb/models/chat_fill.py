"""Completions from a chat model, for providers without a fill-in-the-middle wire.

The chat model gets the cell with a `<CURSOR>` mark and is told to answer with only the text
that belongs there; the post-processing (`agent/ghost_text/postprocess.py`) still takes off a
fence, a repeated prefix or suffix, and whatever runs past the block, since chat models add them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from ..events import ModelEvent, ModelResponse, TextDelta
from ..messages import AssistantMessage, SystemMessage, UserMessage
from .base import Model
from .fim import FillRequest

CURSOR = "<CURSOR>"
INSTRUCTIONS = (
    "You complete code in a Jupyter notebook cell at the cursor, like an editor's ghost text. "
    f"The cell is shown with {CURSOR} where the cursor is. Answer with only the text to insert "
    f"at {CURSOR}: no explanation, no Markdown fence, nothing that is already before or after "
    "the cursor. Keep it short: finish the current statement or block. If nothing fits, answer "
    "with nothing."
)


def chat_prompt(request: FillRequest) -> list[SystemMessage | UserMessage]:
    """The two messages a chat model gets for one completion."""
    parts = [f"{text.rstrip()}\n" for _name, text in request.context if text.strip()]
    cell = f"{request.prefix}{CURSOR}{request.suffix}"
    parts.append(f"The cell ({request.language}):\n{cell}")
    return [SystemMessage(content=INSTRUCTIONS), UserMessage(content="\n".join(parts))]


class ChatFill:
    """Any chat `Model` as a `FillModel`: the completion prompt, streamed through its `stream()`."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.name = model.name
        self.provider = model.provider or "chat"
        self.endpoint = None
        """None: its requests are its chat model's, sent in the conversation's order, so a
        recording never keeps them (a completion is not part of a notebook's turns)."""

    async def fill(self, request: FillRequest) -> AsyncIterator[ModelEvent]:
        async for event in self.model.stream(chat_prompt(request)):
            if isinstance(event, TextDelta):
                yield event
            elif isinstance(event, ModelResponse):
                message = event.message
                yield ModelResponse(
                    message=AssistantMessage(
                        text=message.text,
                        finish_reason=message.finish_reason,
                        usage=message.usage,
                    )
                )

    async def aclose(self) -> None:
        await self.model.aclose()

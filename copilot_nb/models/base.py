"""The one protocol every model class speaks, and the helper that makes `complete()` from `stream()`.

A model's `stream()` yields deltas and ends with a `ModelResponse`; `complete()` only collects that
stream, so the streaming and non-streaming paths cannot drift apart.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, Protocol, Union, runtime_checkable

from ..errors import ModelError
from ..events import ModelEvent, ModelResponse
from ..messages import AssistantMessage, Message, ToolSpec

ToolChoice = Union[str, Mapping[str, Any], None]
"""`"auto"`, `"none"`, `"required"`, a tool name, or a provider-specific dict; None means not sent."""

MessagesIn = Sequence[Message | Mapping[str, Any]]
ToolsIn = Sequence[ToolSpec | Mapping[str, Any]]


@runtime_checkable
class Model(Protocol):
    """A chat model: streams a reply to a conversation, optionally calling tools."""

    name: str

    def stream(
        self,
        messages: MessagesIn,
        *,
        tools: ToolsIn | None = None,
        tool_choice: ToolChoice = None,
        **options: Any,
    ) -> AsyncIterator[ModelEvent]: ...

    async def complete(
        self,
        messages: MessagesIn,
        *,
        tools: ToolsIn | None = None,
        tool_choice: ToolChoice = None,
        **options: Any,
    ) -> AssistantMessage: ...

    async def aclose(self) -> None: ...


async def collect(events: AsyncIterator[ModelEvent]) -> AssistantMessage:
    """Drain a model stream and return its final message."""
    final: AssistantMessage | None = None
    async for event in events:
        if isinstance(event, ModelResponse):
            final = event.message
    if final is None:
        raise ModelError("the model stream ended without a final response")
    return final


class ChatModel:
    """Base class of our models: a subclass writes `stream()`; `complete()` is that stream, collected.

    One seam, so the streaming and non-streaming paths cannot drift apart.
    """

    name: str

    def stream(
        self,
        messages: MessagesIn,
        *,
        tools: ToolsIn | None = None,
        tool_choice: ToolChoice = None,
        **options: Any,
    ) -> AsyncIterator[ModelEvent]:
        raise NotImplementedError

    async def complete(
        self,
        messages: MessagesIn,
        *,
        tools: ToolsIn | None = None,
        tool_choice: ToolChoice = None,
        **options: Any,
    ) -> AssistantMessage:
        """The whole reply at once; it is the stream, collected."""
        return await collect(self.stream(messages, tools=tools, tool_choice=tool_choice, **options))

    async def aclose(self) -> None:
        """Release connections; a model without any has nothing to do."""

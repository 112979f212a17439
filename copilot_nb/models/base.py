"""The one protocol every model class speaks, and the base class that implements its signature once.

A model's `stream()` yields deltas and ends with a `ModelResponse`; `complete()` only collects that
stream, so the streaming and non-streaming paths cannot drift apart. `ChatModel` owns the public
signature of both: it packs a call into a `ModelRequest`, and a subclass writes `_stream(request)`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol, Union, runtime_checkable

from ..errors import ModelError
from ..events import ModelEvent, ModelResponse
from ..messages import AssistantMessage, Message, ToolCall, ToolSpec
from ..text import well_formed
from .capabilities import ImageLimits, carries_images, image_limits_for, images_to_send

if TYPE_CHECKING:  # the endpoint brings httpx, which a kernel loads only when a model is built
    from .endpoint import Endpoint

ToolChoice = Union[str, Mapping[str, Any], None]
"""`"auto"`, `"none"`, `"required"`, a tool name, or a provider-specific dict; None means not sent."""

MessagesIn = Sequence[Message | Mapping[str, Any]]
ToolsIn = Sequence[ToolSpec | Mapping[str, Any]]


@runtime_checkable
class Model(Protocol):
    """A chat model: streams a reply to a conversation, optionally calling tools."""

    name: str

    @property
    def provider(self) -> str:
        """The provider it speaks for, as model strings name it (`openai`); "" for a model a
        script made of its own."""
        ...

    @property
    def endpoint(self) -> Endpoint | None:
        """Where its requests go (None: it sends none of its own to record or replay)."""
        ...

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


@dataclass(frozen=True, kw_only=True)
class ModelRequest:
    """One call of `stream()` or `complete()`: the conversation, the tools offered, and options
    (`temperature`, `max_tokens`, ...) that go into the provider's request body as they are."""

    messages: MessagesIn
    tools: ToolsIn | None = None
    tool_choice: ToolChoice = None
    options: Mapping[str, Any] = field(default_factory=dict)

    def without_tools(self) -> ModelRequest:
        """The same request with no tools, for a model that refuses them."""
        return replace(self, tools=None, tool_choice=None)


async def collect(events: AsyncIterator[ModelEvent]) -> AssistantMessage:
    """Drain a model stream and return its final message."""
    final: AssistantMessage | None = None
    async for event in events:
        if isinstance(event, ModelResponse):
            final = event.message
    if final is None:
        raise ModelError("the model stream ended without a final response")
    return final


def well_formed_message(message: AssistantMessage) -> AssistantMessage:
    """The reply with valid Unicode in its text, reasoning and calls (`text.well_formed`): a
    surrogate pair a provider escaped over two chunks becomes its character again, so the
    reply can be sent back, saved and shown."""
    calls = tuple(
        ToolCall.from_raw(id=c.id, name=well_formed(c.name), raw_arguments=well_formed(raw))
        if (raw := c.raw_arguments) != well_formed(raw) or c.name != well_formed(c.name)
        else c
        for c in message.tool_calls
    )
    fixed = replace(
        message,
        text=well_formed(message.text),
        reasoning=well_formed(message.reasoning),
        refusal=well_formed(message.refusal),
        tool_calls=calls,
    )
    return message if fixed == message else fixed


async def _well_formed_reply(events: AsyncIterator[ModelEvent]) -> AsyncIterator[ModelEvent]:
    """The stream as it comes, its final message made well formed (the one place every reply
    passes); closing this closes the model's own stream, and its connection, at once."""
    try:
        async for event in events:
            if isinstance(event, ModelResponse):
                event = replace(event, message=well_formed_message(event.message))
            yield event
    finally:
        await events.aclose()  # type: ignore[attr-defined]


class ChatModel:
    """Base class of our models: a subclass writes `_stream(request)`; `stream()` and `complete()`
    are the public signature, written once here, and `complete()` is the stream, collected."""

    name: str
    endpoint: Endpoint | None = None
    """Where its requests go: the provider's endpoint the model was built on (None: a model
    that sends no request of its own, such as a scripted one)."""

    @property
    def provider(self) -> str:
        """Its endpoint's provider, by name ("" without an endpoint)."""
        return self.endpoint.provider.name if self.endpoint is not None else ""

    vision: bool | None = None
    """Whether the model accepts images (a cell's plot as a picture): None lets the provider
    say (Copilot's model list, Ollama's `/api/show`), else the name table of `capabilities`."""

    def image_limits(self) -> ImageLimits | None:
        """The images a request may carry; None: the model takes no images, only their text."""
        return image_limits_for(self.name, self.vision)

    def with_images(self, request: ModelRequest) -> ModelRequest:
        """The request with only the images this model is sent (`capabilities.images_to_send`)."""
        if not carries_images(request.messages):
            return request
        return replace(request, messages=images_to_send(request.messages, self.image_limits()))

    def stream(
        self,
        messages: MessagesIn,
        *,
        tools: ToolsIn | None = None,
        tool_choice: ToolChoice = None,
        **options: Any,
    ) -> AsyncIterator[ModelEvent]:
        """Stream one reply: deltas as they arrive, then a `ModelResponse` with the whole message."""
        request = ModelRequest(
            messages=messages, tools=tools, tool_choice=tool_choice, options=options
        )
        return _well_formed_reply(self._stream(request))

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

    def _stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """The one method a model class writes: an async generator of the reply's events."""
        raise NotImplementedError

    async def aclose(self) -> None:
        """Release connections; a model without any has nothing to do."""

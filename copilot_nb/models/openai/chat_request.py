"""Our conversation as a Chat Completions request body: pure, so it can be pinned by snapshots."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ...messages import (
    AssistantMessage,
    Image,
    Message,
    SystemMessage,
    ToolResult,
    ToolSpec,
    UserMessage,
    as_messages,
    as_tool_spec,
)
from ..base import ModelRequest, ToolChoice


def message_to_openai(message: Message) -> dict[str, Any]:
    """One message in the wire shape every OpenAI-compatible server accepts."""
    if isinstance(message, UserMessage) and message.images:
        text = [{"type": "text", "text": message.content}] if message.content else []
        return {"role": "user", "content": text + [image_part(i) for i in message.images]}
    if isinstance(message, (SystemMessage, UserMessage)):
        return {"role": message.role, "content": message.content}
    if isinstance(message, ToolResult):
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if isinstance(message, AssistantMessage):
        # Always a string: llama-cpp-python's server answers 500 to `content: null` beside
        # tool calls, and every server takes "" (OpenAI, llama.cpp, vLLM, Ollama).
        wire: dict[str, Any] = {"role": "assistant", "content": message.text}
        if message.tool_calls:
            wire["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.raw_arguments or "{}"},
                }
                for call in message.tool_calls
            ]
        return wire
    raise TypeError(f"not a message: {message!r}")


def openai_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The conversation as Chat Completions messages. A tool message holds only text, so the
    images of a round's tool results follow its tool messages in one user message, each
    image after a text part that names the call it came from."""
    wire: list[dict[str, Any]] = []
    pending: list[ToolResult] = []
    for message in messages:
        if not isinstance(message, ToolResult) and pending:
            wire.append(images_message(pending))
            pending = []
        wire.append(message_to_openai(message))
        if isinstance(message, ToolResult) and message.images:
            pending.append(message)
    if pending:
        wire.append(images_message(pending))
    return wire


def images_message(results: Sequence[ToolResult]) -> dict[str, Any]:
    """One user message carrying the images of these tool results."""
    parts: list[dict[str, Any]] = []
    for result in results:
        count = len(result.images)
        what = "Image" if count == 1 else f"{count} images"
        source = f"the {result.name} call {result.tool_call_id}"
        parts.append({"type": "text", "text": f"{what} from {source}:"})
        parts.extend(image_part(image) for image in result.images)
    return {"role": "user", "content": parts}


def image_part(image: Image) -> dict[str, Any]:
    """An image as a Chat Completions content part: its bytes inline, as a data URL."""
    return {"type": "image_url", "image_url": {"url": image.data_url}}


def tool_to_openai(spec: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": dict(spec.parameters),
        },
    }


def tool_choice_to_openai(
    choice: ToolChoice, *, flat: bool = False
) -> str | Mapping[str, Any] | None:
    """ "auto"/"none"/"required" pass through; any other string names the one tool to call,
    nested under `function` for Chat Completions, `flat` for the Responses API."""
    if choice is None or not isinstance(choice, str):
        return choice
    if choice in ("auto", "none", "required"):
        return choice
    if flat:
        return {"type": "function", "name": choice}
    return {"type": "function", "function": {"name": choice}}


def chat_request(
    model: str, request: ModelRequest, *, max_tokens: int | None = None
) -> dict[str, Any]:
    """The streamed request's body; `tools`/`tool_choice` are left out when empty (some servers
    reject null), and so are options that are None. `max_tokens` is the model's own output
    limit, sent when the request's options set none."""
    body: dict[str, Any] = {
        "model": model,
        "messages": openai_messages(as_messages(request.messages)),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.tools:
        body["tools"] = [tool_to_openai(as_tool_spec(t)) for t in request.tools]
        wire_choice = tool_choice_to_openai(request.tool_choice)
        if wire_choice is not None:
            body["tool_choice"] = wire_choice
    body.update({key: value for key, value in request.options.items() if value is not None})
    if max_tokens and not body.keys() & {"max_tokens", "max_completion_tokens"}:
        body["max_tokens"] = max_tokens
    return body


def prompt_cache_key(request: ModelRequest) -> str:
    """A name for the request's stable prefix (its system prompt and tool list): OpenAI routes
    requests with the same `prompt_cache_key` to the same cache, so they share its hits."""
    system = [m.content for m in as_messages(request.messages) if isinstance(m, SystemMessage)]
    tools = [as_tool_spec(t).name for t in request.tools or ()]
    digest = hashlib.sha256(json.dumps([system, tools]).encode()).hexdigest()
    return f"copilot-nb-{digest[:24]}"

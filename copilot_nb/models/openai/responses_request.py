"""Our conversation as an OpenAI Responses API request body: pure, so it can be pinned by snapshots.

The conversation is stateless (`store: false`): every request carries the whole history, and
reasoning items the model returned encrypted go back as they came, before that turn's calls.
"""

from __future__ import annotations

from typing import Any

from ...messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResult,
    ToolSpec,
    UserMessage,
    as_messages,
    as_tool_spec,
)
from ..base import ModelRequest
from .chat_request import tool_choice_to_openai

ENCRYPTED_REASONING = "reasoning.encrypted_content"


def message_to_items(message: Message) -> list[dict[str, Any]]:
    """One message as Responses input items (an assistant turn may become several)."""
    if isinstance(message, UserMessage) and message.images:
        text = [{"type": "input_text", "text": message.content}] if message.content else []
        images = [
            {"type": "input_image", "image_url": image.data_url, "detail": "auto"}
            for image in message.images
        ]
        return [{"role": "user", "content": text + images}]
    if isinstance(message, (SystemMessage, UserMessage)):
        return [{"role": message.role, "content": message.content}]
    if isinstance(message, ToolResult):
        return [
            {
                "type": "function_call_output",
                "call_id": message.tool_call_id,
                "output": tool_output(message),
            }
        ]
    if isinstance(message, AssistantMessage):
        items: list[dict[str, Any]] = [dict(item) for item in message.reasoning_items]
        if message.text:
            items.append({"role": "assistant", "content": message.text})
        items.extend(
            {
                "type": "function_call",
                "call_id": call.id,
                "name": call.name,
                "arguments": call.raw_arguments or "{}",
            }
            for call in message.tool_calls
        )
        return items
    raise TypeError(f"not a message: {message!r}")


def tool_output(result: ToolResult) -> str | list[dict[str, Any]]:
    """A tool result's `output`: its text, or with images a list of `input_text` and
    `input_image` parts (the image as a data URL)."""
    if not result.images:
        return result.content
    parts: list[dict[str, Any]] = [{"type": "input_text", "text": result.content}]
    parts.extend({"type": "input_image", "image_url": image.data_url} for image in result.images)
    return parts


def tool_to_responses(spec: ToolSpec) -> dict[str, Any]:
    """A Responses function tool: flat, unlike Chat Completions' nested `function`."""
    return {
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "parameters": dict(spec.parameters),
    }


def responses_request(
    model: str, request: ModelRequest, *, reasoning: bool = False
) -> dict[str, Any]:
    """The streamed request's body. Leading system messages become `instructions`; `max_tokens`
    is sent as `max_output_tokens`; encrypted reasoning is asked for when `reasoning` is True, the
    request sets `reasoning`, or the history carries reasoning items."""
    messages = as_messages(request.messages)
    system: list[str] = []
    while messages:
        first = messages[0]
        if not isinstance(first, SystemMessage):
            break
        system.append(first.content)
        messages.pop(0)
    body: dict[str, Any] = {"model": model}
    if system:
        body["instructions"] = "\n\n".join(system)
    body["input"] = [item for m in messages for item in message_to_items(m)]
    body["stream"] = True
    body["store"] = False
    if request.tools:
        body["tools"] = [tool_to_responses(as_tool_spec(t)) for t in request.tools]
        wire_choice = tool_choice_to_openai(request.tool_choice, flat=True)
        if wire_choice is not None:
            body["tool_choice"] = wire_choice
    options = {key: value for key, value in request.options.items() if value is not None}
    if "max_tokens" in options:
        options.setdefault("max_output_tokens", options.pop("max_tokens"))
    body.update(options)
    carried = any(isinstance(m, AssistantMessage) and m.reasoning_items for m in messages)
    if reasoning or carried or "reasoning" in options:
        include = list(body.get("include") or [])
        if ENCRYPTED_REASONING not in include:
            include.append(ENCRYPTED_REASONING)
        body["include"] = include
    return body

"""Our conversation as a Chat Completions request body: pure, so it can be pinned by snapshots."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResult,
    ToolSpec,
    UserMessage,
    as_messages,
    as_tool_spec,
)
from .base import ModelRequest, ToolChoice


def message_to_openai(message: Message) -> dict[str, Any]:
    """One message in the wire shape every OpenAI-compatible server accepts."""
    if isinstance(message, (SystemMessage, UserMessage)):
        return {"role": message.role, "content": message.content}
    if isinstance(message, ToolResult):
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if isinstance(message, AssistantMessage):
        wire: dict[str, Any] = {"role": "assistant", "content": message.text or None}
        if message.tool_calls:
            wire["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.raw_arguments or "{}"},
                }
                for call in message.tool_calls
            ]
        elif wire["content"] is None:
            wire["content"] = ""
        return wire
    raise TypeError(f"not a message: {message!r}")


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


def chat_request(model: str, request: ModelRequest) -> dict[str, Any]:
    """The streamed request's body; `tools`/`tool_choice` are left out when empty (some servers
    reject null), and so are options that are None."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [message_to_openai(m) for m in as_messages(request.messages)],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.tools:
        body["tools"] = [tool_to_openai(as_tool_spec(t)) for t in request.tools]
        wire_choice = tool_choice_to_openai(request.tool_choice)
        if wire_choice is not None:
            body["tool_choice"] = wire_choice
    body.update({key: value for key, value in request.options.items() if value is not None})
    return body

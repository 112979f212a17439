"""A Responses API request body (`POST /v1/responses`), checked and turned into a `ChatRequest`:
pure, no I/O.

The Responses API says the same things as Chat Completions in other words: `instructions` is
the system message, `input` is a string or a list of items (messages with `input_text` parts,
`function_call` items the model made, `function_call_output` items answering them), tools are
flat, `max_output_tokens` is `max_tokens`. Turned into the chat route's `ChatRequest`, a request
reaches the same backend, the same models and the same checks. The proxy keeps no state, so
`previous_response_id`, `conversation` and `item_reference` items are refused with what to send
instead, as is anything but function tools.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...messages import (
    AssistantMessage,
    Image,
    Message,
    SystemMessage,
    ToolCall,
    ToolResult,
    UserMessage,
)
from .api_errors import ApiError, invalid_type, invalid_value, kind, missing
from .chat_messages import read_tools
from .chat_request import (
    PASSED_THROUGH,
    ChatRequest,
    flag,
    model_name,
    positive_int,
    tool_choice_of,
)
from .image_parts import misplaced, read_parts, url_image
from .responses_echo import echo_of

_STATEFUL = {
    "previous_response_id": "this proxy stores no responses: send the whole conversation in input",
    "conversation": "this proxy keeps no conversations: send the whole conversation in input",
}
_TEXT_PARTS = ("input_text", "output_text", "text")
_MEDIA_PARTS = {"input_file": "files are", "input_audio": "audio is"}
_ROLES = ("system", "developer", "user", "assistant")


@dataclass(frozen=True, kw_only=True)
class ResponsesRequest:
    """A checked Responses request: the chat request the backend runs, and the settings its
    Response object repeats (`responses_echo.py`)."""

    chat: ChatRequest
    echo: Mapping[str, Any] = field(default_factory=dict)


def parse_responses_request(body: Any, *, models: Collection[str] | None) -> ResponsesRequest:
    """Check a decoded `/v1/responses` body; `models` (None: any) are the names served."""
    if not isinstance(body, Mapping):
        why = f'The body is {kind(body)}; send a JSON object {{"model": ..., "input": ...}}.'
        raise ApiError(why, code="invalid_type")
    for key, why in _STATEFUL.items():
        if body.get(key) is not None:
            raise ApiError(f"Unsupported parameter: '{key}': {why}.", param=key, code="stateless")
    for key in ("tool_execution", "use_notebook_tools"):
        if body.get(key) is not None:
            why = f"'{key}' is served at /v1/chat/completions only; there, the proxy runs tools."
            raise ApiError(why, param=key, code="unsupported_parameter")
    model = model_name(body.get("model"), models)
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise invalid_type("instructions", "a string", instructions)
    messages = read_input(body.get("input"), instructions)
    tools = read_tools(body.get("tools"), (), flat=True)
    choice = tool_choice_of(body.get("tool_choice"), [t.name for t in tools], flat=True)
    options = {key: body[key] for key in PASSED_THROUGH if body.get(key) is not None}
    if (limit := positive_int(body, "max_output_tokens")) is not None:
        options["max_tokens"] = limit
    if (response_format := _response_format(body.get("text"))) is not None:
        options["response_format"] = response_format
    echo = echo_of(body, max_output_tokens=options.get("max_tokens"))
    chat = ChatRequest(
        model=model,
        messages=messages,
        tools=tools,
        tool_choice=choice,
        stream=flag(body, "stream"),
        options=options,
    )
    return ResponsesRequest(chat=chat, echo=echo)


def read_input(value: Any, instructions: str | None) -> tuple[Message, ...]:
    """`input` (a string, or a list of items) as our messages, `instructions` first. Assistant
    text and the function calls after it become one assistant message, as Chat Completions
    has them; each `function_call_output` must answer an earlier `function_call`."""
    if value is None:
        raise missing("input", "send the user's text, or a list of input items.")
    messages: list[Message] = [SystemMessage(content=instructions)] if instructions else []
    if isinstance(value, str):
        return (*messages, UserMessage(content=value))
    if not isinstance(value, list):
        raise invalid_type("input", "a string or an array of input items", value)
    if not value:
        raise ApiError("Invalid 'input': empty array; send at least one item.", param="input")
    calls: dict[str, str] = {}  # the names of earlier function calls, by call_id
    reply: AssistantMessage | None = None  # the assistant turn being gathered
    for i, item in enumerate(value):
        at = f"input[{i}]"
        if not isinstance(item, Mapping):
            raise invalid_type(at, 'an input item {"role": ..., "content": ...}', item)
        kind = item.get("type", "message")
        if kind == "reasoning":  # the model's own summary, sent back: nothing for the upstream
            continue
        if kind == "function_call":
            call = _function_call(item, at)
            calls[call.id] = call.name
            reply = reply or AssistantMessage()
            reply = AssistantMessage(text=reply.text, tool_calls=(*reply.tool_calls, call))
            continue
        if kind == "message" and item.get("role") == "assistant":
            text = _content(item, at)
            reply = AssistantMessage(
                text=(reply.text if reply else "") + text,
                tool_calls=reply.tool_calls if reply else (),
            )
            continue
        if reply is not None:
            messages.append(reply)
            reply = None
        messages.append(_other(item, kind, at, calls))
    if reply is not None:
        messages.append(reply)
    return tuple(messages)


def _other(item: Mapping[str, Any], kind: Any, at: str, calls: dict[str, str]) -> Message:
    """A message from the user or the system, or a function call's output."""
    if kind == "function_call_output":
        call_id = _string(item, "call_id", at)
        if call_id not in calls:
            why = (
                f"'{at}.call_id' is {call_id!r}, which answers no function_call earlier in input; "
                "send the function_call item with that call_id before its output."
            )
            raise ApiError(why, param=f"{at}.call_id", code="unknown_call_id")
        output, images = _parts(item.get("output"), f"{at}.output", images=True)
        return ToolResult(tool_call_id=call_id, name=calls[call_id], content=output, images=images)
    if kind == "item_reference":
        why = f"'{at}' is an item_reference: this proxy stores no items; send the item itself."
        raise ApiError(why, param=f"{at}.type", code="stateless")
    if kind != "message":
        expected = "'message', 'function_call', 'function_call_output' or 'reasoning'"
        raise invalid_value(f"{at}.type", kind, expected)
    role = item.get("role")
    if role not in _ROLES:
        raise invalid_value(f"{at}.role", role, "'system', 'developer', 'user' or 'assistant'")
    if role == "user":
        content, images = _parts(_given(item, at), f"{at}.content", images=True)
        return UserMessage(content=content, images=images)
    return SystemMessage(content=_content(item, at))


def _function_call(item: Mapping[str, Any], at: str) -> ToolCall:
    call_id = _string(item, "call_id", at)
    name = _string(item, "name", at)
    arguments = item.get("arguments")
    if not isinstance(arguments, str):
        raise invalid_type(f"{at}.arguments", "a string", arguments, "send the JSON text.")
    return ToolCall.from_raw(id=call_id, name=name, raw_arguments=arguments)


def _content(item: Mapping[str, Any], at: str) -> str:
    return _parts(_given(item, at), f"{at}.content")[0]


def _given(item: Mapping[str, Any], at: str) -> Any:
    if "content" not in item:
        raise missing(f"{at}.content", "send the message's text.")
    return item.get("content")


def _parts(content: Any, at: str, *, images: bool = False) -> tuple[str, tuple[Image, ...]]:
    """A string, or text parts joined (a refusal part is the refusal's words); where `images`
    (a user message, a function call's output), `input_image` parts too (`image_parts.joined`)."""
    if isinstance(content, str):
        return content, ()
    if not isinstance(content, list):
        raise invalid_type(at, "a string or an array of content parts", content)
    return read_parts(content, at, lambda part, where: _part(part, where, images))


def _part(part: Any, where: str, images: bool) -> str | Image:
    if not isinstance(part, Mapping):
        raise invalid_type(where, 'a content part {"type": "input_text", "text": ...}', part)
    part_type = part.get("type")
    if part_type == "input_image":
        if not images:
            raise misplaced(where, "a user message or a function_call_output")
        if part.get("file_id") is not None and part.get("image_url") is None:
            why = f"'{where}.file_id': this proxy stores no files; send image_url as a data URL."
            raise ApiError(why, param=f"{where}.file_id", code="stateless")
        return url_image(part.get("image_url"), f"{where}.image_url")
    if isinstance(part_type, str) and part_type in _MEDIA_PARTS:
        why = f"'{where}' is {part_type}: {_MEDIA_PARTS[part_type]} not supported by the proxy yet."
        raise ApiError(why, param=f"{where}.type", code="unsupported_value")
    key = "refusal" if part_type == "refusal" else "text"
    if part_type not in (*_TEXT_PARTS, "refusal"):
        raise invalid_value(f"{where}.type", part_type, "'input_text' or 'output_text'")
    text = part.get(key)
    if not isinstance(text, str):
        raise invalid_type(f"{where}.{key}", "a string", text)
    return text


def _string(item: Mapping[str, Any], key: str, at: str) -> str:
    value = item.get(key)
    if value is None:
        raise missing(f"{at}.{key}", f"copy the {key} the model gave.")
    if not isinstance(value, str) or not value:
        raise invalid_type(f"{at}.{key}", "a non-empty string", value)
    return value


def _response_format(text: Any) -> dict[str, Any] | None:
    """`text.format` in Chat Completions' words (`response_format`); None for plain text."""
    if text is None:
        return None
    if not isinstance(text, Mapping):
        raise invalid_type("text", "an object", text)
    fmt = text.get("format")
    if fmt is None or (isinstance(fmt, Mapping) and fmt.get("type") == "text"):
        return None
    if not isinstance(fmt, Mapping) or fmt.get("type") not in ("json_schema", "json_object"):
        expected = "{'type': 'text'}, {'type': 'json_object'} or {'type': 'json_schema', ...}"
        raise invalid_value("text.format", fmt, expected)
    if fmt["type"] == "json_object":
        return {"type": "json_object"}
    schema = {key: fmt[key] for key in ("name", "schema", "strict", "description") if key in fmt}
    return {"type": "json_schema", "json_schema": schema}

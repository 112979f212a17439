"""A Chat Completions request's `messages` and `tools`, checked and turned into ours: pure, no I/O.

The conversation and the client's tools are most of a request's rules (roles, text parts, tool
calls and the results that answer them, tool names and schemas), so they live apart from the
request's other fields in `chat_request`. Each refusal is an `ApiError` whose `param` is the path
of the offending field, such as `messages[2].tool_calls[0].id`.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from ...messages import (
    AssistantMessage,
    Image,
    Message,
    SystemMessage,
    ToolCall,
    ToolResult,
    ToolSpec,
    UserMessage,
)
from .api_errors import ApiError, invalid_type, invalid_value, kind, missing, object_field, shown
from .image_parts import misplaced, read_parts, url_image

_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_ROLES = ("system", "developer", "user", "assistant", "tool")
_MEDIA = {"input_audio": "audio is", "file": "files are"}


def read_messages(value: Any) -> tuple[Message, ...]:
    """The request's `messages` as ours; each tool result must answer an earlier tool call."""
    if value is None:
        raise missing("messages", 'send the conversation as [{"role": ..., "content": ...}].')
    if not isinstance(value, list):
        raise invalid_type("messages", "an array of message objects", value)
    if not value:
        why = "Invalid 'messages': empty array; send at least one message."
        raise ApiError(why, param="messages", code="empty_array")
    calls: dict[str, str] = {}  # the names of earlier tool calls, by id
    return tuple(_message(item, f"messages[{i}]", calls) for i, item in enumerate(value))


def _message(item: Any, at: str, calls: dict[str, str]) -> Message:
    if not isinstance(item, Mapping):
        raise invalid_type(at, 'a message object {"role": ..., "content": ...}', item)
    role = item.get("role")
    if role is None:
        raise missing(f"{at}.role", "say who speaks: system, developer, user, assistant or tool.")
    if role not in _ROLES:
        raise invalid_value(
            f"{at}.role", role, "one of 'system', 'developer', 'user', 'assistant' or 'tool'"
        )
    if role in ("system", "developer"):
        return SystemMessage(content=_content(item, at))
    if role == "user":
        text, images = _content_parts(item, at, images=True)
        return UserMessage(content=text, images=images)
    if role == "assistant":
        tool_calls = _tool_calls(item.get("tool_calls"), f"{at}.tool_calls")
        calls.update((call.id, call.name) for call in tool_calls)
        text = _content(item, at, optional=bool(tool_calls))
        return AssistantMessage(text=text, tool_calls=tool_calls)
    call_id = _string(item, "tool_call_id", at, "give the id of the tool call this answers.")
    if call_id not in calls:
        why = (
            f"'{at}.tool_call_id' is {call_id!r}, which answers no tool call of an earlier "
            "assistant message; send the assistant message whose tool_calls hold that id first."
        )
        raise ApiError(why, param=f"{at}.tool_call_id", code="unknown_tool_call_id")
    return ToolResult(tool_call_id=call_id, name=calls[call_id], content=_content(item, at))


def _content(item: Mapping[str, Any], at: str, *, optional: bool = False) -> str:
    """A message's text: a string, or text parts joined (as `messages.as_message` joins them);
    null only where `optional` (an assistant message with tool calls)."""
    return _content_parts(item, at, optional=optional)[0]


def _content_parts(
    item: Mapping[str, Any], at: str, *, optional: bool = False, images: bool = False
) -> tuple[str, tuple[Image, ...]]:
    """A message's text and, where `images` (a user message), the images of its `image_url`
    parts, each also a line of the text (`image_parts.joined`)."""
    param = f"{at}.content"
    content = item.get("content")
    if content is None and optional:
        return "", ()
    if content is None and "content" not in item:
        raise missing(param, "send the message's text as a string.")
    if isinstance(content, str):
        return content, ()
    if not isinstance(content, list):
        hint = "null is only for an assistant message with tool_calls." if content is None else ""
        raise invalid_type(param, "a string or an array of text parts", content, hint)
    return read_parts(content, param, lambda part, at: _part(part, at, images))


def _part(part: Any, at: str, images: bool) -> str | Image:
    if not isinstance(part, Mapping):
        raise invalid_type(at, 'a content part {"type": "text", "text": ...}', part)
    part_type = part.get("type")
    if part_type == "image_url":
        if not images:
            raise misplaced(at, "a user message")
        return url_image(object_field(part, "image_url", at).get("url"), f"{at}.image_url.url")
    if isinstance(part_type, str) and part_type in _MEDIA:
        why = (
            f"'{at}' is {part_type}: {_MEDIA[part_type]} not supported by the proxy yet; send text."
        )
        raise ApiError(why, param=f"{at}.type", code="unsupported_value")
    if part_type != "text":
        raise invalid_value(f"{at}.type", part_type, "'text'")
    text = part.get("text")
    if not isinstance(text, str):
        raise invalid_type(f"{at}.text", "a string", text)
    return text


def _tool_calls(value: Any, at: str) -> tuple[ToolCall, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise invalid_type(at, "an array of tool calls", value)
    return tuple(_tool_call(call, f"{at}[{j}]") for j, call in enumerate(value))


def _tool_call(call: Any, at: str) -> ToolCall:
    if not isinstance(call, Mapping):
        raise invalid_type(at, "a tool call object", call)
    call_id = _string(call, "id", at, "copy the id the model gave this call.")
    if call.get("type", "function") != "function":
        raise invalid_value(f"{at}.type", call.get("type"), "'function'")
    function = object_field(call, "function", at)
    name = _string(function, "name", f"{at}.function", "copy the name of the tool called.")
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        raise invalid_type(
            f"{at}.function.arguments",
            "a string",
            arguments,
            "send the JSON text, as the model did.",
        )
    return ToolCall.from_raw(id=call_id, name=name, raw_arguments=arguments)


def read_tools(
    value: Any, reserved: Collection[str] | None, *, flat: bool = False
) -> tuple[ToolSpec, ...]:
    """The client's tools; `reserved` are the kernel's tool names, which they must not take.
    `flat`: the Responses API's tools, whose name and schema sit beside `type`, not in `function`."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise invalid_type("tools", "an array of tools", value)
    specs: dict[str, int] = {}
    tools = tuple(_tool(item, f"tools[{i}]", flat) for i, item in enumerate(value))
    for i, spec in enumerate(tools):
        param = f"tools[{i}].name" if flat else f"tools[{i}].function.name"
        if spec.name in specs:
            why = f"tools[{specs[spec.name]}] has it too; give each tool a unique name."
        elif spec.name in (reserved or ()):
            why = "a kernel tool (use_notebook_tools) has it; rename yours, or leave those out."
        else:
            specs[spec.name] = i
            continue
        why = f"Duplicate tool name {spec.name!r} in '{param}': {why}"
        raise ApiError(why, param=param, code="duplicate_tool_name")
    return tools


def _tool(item: Any, at: str, flat: bool) -> ToolSpec:
    if not isinstance(item, Mapping):
        shape = (
            '{"type": "function", "name": ...}'
            if flat
            else '{"type": "function", "function": {...}}'
        )
        raise invalid_type(at, f"a tool {shape}", item)
    if item.get("type") != "function":
        raise invalid_value(f"{at}.type", item.get("type"), "'function', the only kind served")
    function = item if flat else object_field(item, "function", at)
    at = at if flat else f"{at}.function"
    name = function.get("name")
    if not isinstance(name, str) or not _TOOL_NAME.fullmatch(name):
        why = f"Invalid '{at}.name': {shown(name)}; use 1 to 64 letters, digits, _ or -."
        raise ApiError(why, param=f"{at}.name", code="invalid_value")
    description = function.get("description")
    if description is None:
        description = ""
    elif not isinstance(description, str):
        raise invalid_type(f"{at}.description", "a string", description)
    parameters = function.get("parameters")
    if parameters is None:
        parameters = {"type": "object", "properties": {}}
    elif not isinstance(parameters, Mapping) or parameters.get("type") != "object":
        why = (
            f'Invalid \'{at}.parameters\': {kind(parameters)} with no "type": "object"; '
            'describe the arguments as a JSON schema {"type": "object", "properties": {...}}.'
        )
        raise ApiError(why, param=f"{at}.parameters", code="invalid_value")
    return ToolSpec(name=name, description=description, parameters=parameters)


def _string(obj: Mapping[str, Any], key: str, at: str, hint: str) -> str:
    value = obj.get(key)
    if value is None:
        raise missing(f"{at}.{key}", hint)
    if not isinstance(value, str) or not value:
        raise invalid_type(f"{at}.{key}", "a non-empty string", value, hint)
    return value

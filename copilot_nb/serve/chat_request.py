"""A Chat Completions request body, checked and turned into our messages: pure, no I/O.

Every refusal is an `ApiError` in OpenAI's own shape (status, type, `param` path, code), so a
client written against OpenAI shows our errors as it shows theirs. Fields we do not know are
ignored, as OpenAI-compatible servers do; the fields in `PASSED_THROUGH` go to the upstream model
as they are, and three of our own (`tool_execution`, `use_notebook_tools`, `max_tool_rounds`) say
what the proxy does with tools.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResult,
    ToolSpec,
    UserMessage,
)
from ..models.base import ToolChoice

PASSED_THROUGH = (
    "temperature",
    "top_p",
    "stop",
    "seed",
    "presence_penalty",
    "frequency_penalty",
    "user",
    "parallel_tool_calls",
    "response_format",
)
"""Request fields handed to the upstream model unchecked (it knows their rules better)."""
MAX_TOOL_ROUNDS = 50
"""The most model rounds `max_tool_rounds` may ask for: past that a run is stuck, not working."""
ToolExecution = Literal["client", "auto"]
_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_ROLES = ("system", "developer", "user", "assistant", "tool")
_CHOICES = ("none", "auto", "required")
_KINDS: tuple[tuple[type, str], ...] = (
    *((type(None), "null"), (bool, "a boolean"), (int, "an integer"), (float, "a number")),
    *((str, "a string"), (list, "an array"), (Mapping, "an object")),
)
"""JSON types in words, for messages; bool before int, which it subclasses."""
_MEDIA = {"image_url": "images are", "input_audio": "audio is", "file": "files are"}


class ApiError(Exception):
    """A request the proxy refuses (or a failure it reports), sent as OpenAI's error body."""

    def __init__(
        self,
        message: str,
        *,
        status: int = 400,
        type: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.param = param
        self.code = code

    def body(self) -> dict[str, Any]:
        error = {"message": self.message, "type": self.type, "param": self.param, "code": self.code}
        return {"error": error}


@dataclass(frozen=True, kw_only=True)
class ChatRequest:
    """A checked request: our messages and tools, and what goes to the upstream as is."""

    model: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    tool_choice: ToolChoice = None
    """As our models take it: "none", "auto", "required" or the name of the one tool to call."""
    stream: bool = False
    include_usage: bool = False
    options: Mapping[str, Any] = field(default_factory=dict)
    tool_execution: ToolExecution = "client"
    """"client": tool calls go back to the client; "auto": the proxy runs the kernel's tools."""
    use_notebook_tools: bool = False
    """Offer the kernel's tools (files, notebook, kernel) to the model beside the client's own."""
    max_tool_rounds: int | None = None
    """Model rounds the proxy may run with tool_execution "auto"; None: the server's default."""


def parse_chat_request(
    body: Any, *, models: Collection[str] | None, kernel_tools: Collection[str] | None = None
) -> ChatRequest:
    """Check a decoded request body; `models` (None: any) are the names served, `kernel_tools`
    (None: not known, not checked) the tools `use_notebook_tools` adds."""
    if not isinstance(body, Mapping):
        why = f'The body is {_kind(body)}; send a JSON object {{"model": ..., "messages": [...]}}.'
        raise ApiError(why, code="invalid_type")
    model = _model(body.get("model"), models)
    messages = _messages(body.get("messages"))
    use_notebook_tools = _flag(body, "use_notebook_tools")
    tools = _tools(body.get("tools"), kernel_tools if use_notebook_tools else ())
    offered: list[str] | None = [spec.name for spec in tools]
    if use_notebook_tools:  # the model sees the kernel's tools too, named or not known
        offered = None if kernel_tools is None else [spec.name for spec in tools] + [*kernel_tools]
    stream = _flag(body, "stream")
    tool_execution, max_tool_rounds = _tool_execution(body)
    n = body.get("n")
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n != 1):
        why = f"Unsupported value for 'n': {_shown(n)}; the proxy returns one choice: send n=1."
        raise ApiError(why, param="n", code="unsupported_value")
    return ChatRequest(
        model=model,
        messages=messages,
        tools=tools,
        tool_choice=_tool_choice(body.get("tool_choice"), offered),
        stream=stream,
        include_usage=_include_usage(body.get("stream_options"), stream=stream),
        options=_options(body),
        tool_execution=tool_execution,
        use_notebook_tools=use_notebook_tools,
        max_tool_rounds=max_tool_rounds,
    )


def _tool_execution(body: Mapping[str, Any]) -> tuple[ToolExecution, int | None]:
    """Who runs the tool calls, and (when the proxy does) for how many model rounds at most."""
    given = body.get("tool_execution")
    if given not in (None, "client", "auto"):
        expected = "'client' (tool calls come back to you) or 'auto' (the proxy runs them)"
        raise _invalid_value("tool_execution", given, expected)
    execution: ToolExecution = "auto" if given == "auto" else "client"
    rounds = _positive_int(body, "max_tool_rounds", maximum=MAX_TOOL_ROUNDS)
    if rounds is not None and execution != "auto":
        why = (
            "'max_tool_rounds' counts the proxy's rounds; set tool_execution to 'auto' or drop it."
        )
        raise ApiError(why, param="max_tool_rounds", code="invalid_value")
    return execution, rounds


def _model(model: Any, models: Collection[str] | None) -> str:
    if model is None:
        raise _missing("model", "name the model to use; GET /v1/models lists them.")
    if not isinstance(model, str) or not model:
        raise _invalid_type("model", "a model name (a non-empty string)", model)
    if models is not None and model not in models:
        why = (
            f"The model {model!r} is not served here; it serves {_listed(models)} (GET /v1/models)."
        )
        raise ApiError(why, param="model", code="model_not_found")
    return model


def _messages(value: Any) -> tuple[Message, ...]:
    if value is None:
        raise _missing("messages", 'send the conversation as [{"role": ..., "content": ...}].')
    if not isinstance(value, list):
        raise _invalid_type("messages", "an array of message objects", value)
    if not value:
        why = "Invalid 'messages': empty array; send at least one message."
        raise ApiError(why, param="messages", code="empty_array")
    calls: dict[str, str] = {}  # the names of earlier tool calls, by id
    return tuple(_message(item, f"messages[{i}]", calls) for i, item in enumerate(value))


def _message(item: Any, at: str, calls: dict[str, str]) -> Message:
    if not isinstance(item, Mapping):
        raise _invalid_type(at, 'a message object {"role": ..., "content": ...}', item)
    role = item.get("role")
    if role is None:
        raise _missing(f"{at}.role", "say who speaks: system, developer, user, assistant or tool.")
    if role not in _ROLES:
        raise _invalid_value(
            f"{at}.role", role, "one of 'system', 'developer', 'user', 'assistant' or 'tool'"
        )
    if role in ("system", "developer"):
        return SystemMessage(content=_content(item, at))
    if role == "user":
        return UserMessage(content=_content(item, at))
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
    param = f"{at}.content"
    content = item.get("content")
    if content is None and optional:
        return ""
    if content is None and "content" not in item:
        raise _missing(param, "send the message's text as a string.")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        hint = "null is only for an assistant message with tool_calls." if content is None else ""
        raise _invalid_type(param, "a string or an array of text parts", content, hint)
    return "".join(_text_part(part, f"{param}[{j}]") for j, part in enumerate(content))


def _text_part(part: Any, at: str) -> str:
    if not isinstance(part, Mapping):
        raise _invalid_type(at, 'a content part {"type": "text", "text": ...}', part)
    kind = part.get("type")
    if isinstance(kind, str) and kind in _MEDIA:
        why = f"'{at}' is {kind}: {_MEDIA[kind]} not supported by the proxy yet; send text."
        raise ApiError(why, param=f"{at}.type", code="unsupported_value")
    if kind != "text":
        raise _invalid_value(f"{at}.type", kind, "'text'")
    text = part.get("text")
    if not isinstance(text, str):
        raise _invalid_type(f"{at}.text", "a string", text)
    return text


def _tool_calls(value: Any, at: str) -> tuple[ToolCall, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _invalid_type(at, "an array of tool calls", value)
    return tuple(_tool_call(call, f"{at}[{j}]") for j, call in enumerate(value))


def _tool_call(call: Any, at: str) -> ToolCall:
    if not isinstance(call, Mapping):
        raise _invalid_type(at, "a tool call object", call)
    call_id = _string(call, "id", at, "copy the id the model gave this call.")
    if call.get("type", "function") != "function":
        raise _invalid_value(f"{at}.type", call.get("type"), "'function'")
    function = _object(call, "function", at)
    name = _string(function, "name", f"{at}.function", "copy the name of the tool called.")
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        raise _invalid_type(
            f"{at}.function.arguments",
            "a string",
            arguments,
            "send the JSON text, as the model did.",
        )
    return ToolCall.from_raw(id=call_id, name=name, raw_arguments=arguments)


def _tools(value: Any, reserved: Collection[str] | None) -> tuple[ToolSpec, ...]:
    """The client's tools; `reserved` are the kernel's tool names, which they must not take."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _invalid_type("tools", "an array of tools", value)
    specs: dict[str, int] = {}
    tools = tuple(_tool(item, f"tools[{i}]") for i, item in enumerate(value))
    for i, spec in enumerate(tools):
        param = f"tools[{i}].function.name"
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


def _tool(item: Any, at: str) -> ToolSpec:
    if not isinstance(item, Mapping):
        raise _invalid_type(at, 'a tool {"type": "function", "function": {...}}', item)
    if item.get("type") != "function":
        raise _invalid_value(f"{at}.type", item.get("type"), "'function', the only kind served")
    function = _object(item, "function", at)
    name = function.get("name")
    if not isinstance(name, str) or not _TOOL_NAME.fullmatch(name):
        why = f"Invalid '{at}.function.name': {_shown(name)}; use 1 to 64 letters, digits, _ or -."
        raise ApiError(why, param=f"{at}.function.name", code="invalid_value")
    description = function.get("description")
    if description is None:
        description = ""
    elif not isinstance(description, str):
        raise _invalid_type(f"{at}.function.description", "a string", description)
    parameters = function.get("parameters")
    if parameters is None:
        parameters = {"type": "object", "properties": {}}
    elif not isinstance(parameters, Mapping) or parameters.get("type") != "object":
        why = (
            f'Invalid \'{at}.function.parameters\': {_kind(parameters)} with no "type": "object"; '
            'describe the arguments as a JSON schema {"type": "object", "properties": {...}}.'
        )
        raise ApiError(why, param=f"{at}.function.parameters", code="invalid_value")
    return ToolSpec(name=name, description=description, parameters=parameters)


def _tool_choice(value: Any, offered: list[str] | None) -> ToolChoice:
    """As our models take it; `offered` is every tool the model will see (None: not known)."""
    if value is None:
        return None
    if isinstance(value, str) and value in _CHOICES:
        if value == "required" and offered == []:
            why = "tool_choice 'required' needs tools, and the request has none; add tools."
            raise ApiError(why, param="tool_choice", code="invalid_value")
        return value
    if not isinstance(value, Mapping):
        expected = "'none', 'auto', 'required' or {\"type\": \"function\", \"function\": {...}}"
        raise _invalid_value("tool_choice", value, expected)
    if value.get("type") != "function":
        raise _invalid_value("tool_choice.type", value.get("type"), "'function'")
    name = _object(value, "function", "tool_choice").get("name")
    if not isinstance(name, str):
        raise _invalid_type("tool_choice.function.name", "a tool name", name)
    if offered == []:
        why = f"tool_choice names the tool {name!r}, but the request has no tools; add it to tools."
        raise ApiError(why, param="tool_choice.function.name", code="invalid_value")
    if offered is not None and name not in offered:
        why = f"tool_choice names {name!r}, not one of the tools ({_listed(offered)}); pick one."
        raise ApiError(why, param="tool_choice.function.name", code="invalid_value")
    return dict(value) if name in _CHOICES else name  # a tool named "auto" stays a dict


def _include_usage(value: Any, *, stream: bool) -> bool:
    if value is None:
        return False
    if not stream:
        why = "'stream_options' needs 'stream': true; set stream to true or drop stream_options."
        raise ApiError(why, param="stream_options", code="invalid_value")
    if not isinstance(value, Mapping):
        raise _invalid_type("stream_options", "an object", value)
    return _flag(value, "include_usage", "stream_options.")


def _options(body: Mapping[str, Any]) -> dict[str, Any]:
    """The fields for the upstream; `max_completion_tokens` (the newer name) is sent as
    `max_tokens`, which every provider we speak to takes."""
    options = {key: body[key] for key in PASSED_THROUGH if body.get(key) is not None}
    limits = {key: _positive_int(body, key) for key in ("max_tokens", "max_completion_tokens")}
    given = {value for value in limits.values() if value is not None}
    if len(given) > 1:
        tokens, completion = limits["max_tokens"], limits["max_completion_tokens"]
        why = f"max_tokens ({tokens}) and max_completion_tokens ({completion}) disagree; send one."
        raise ApiError(why, param="max_completion_tokens", code="invalid_value")
    if given:
        options["max_tokens"] = given.pop()
    return options


def _flag(obj: Mapping[str, Any], key: str, prefix: str = "") -> bool:
    value = obj.get(key)
    if value is not None and not isinstance(value, bool):
        raise _invalid_type(f"{prefix}{key}", "a boolean (true or false)", value)
    return bool(value)


def _positive_int(obj: Mapping[str, Any], key: str, *, maximum: int | None = None) -> int | None:
    value = obj.get(key)
    if value is None:
        return None
    whole = isinstance(value, int) and not isinstance(value, bool)
    if not whole or value < 1 or (maximum is not None and value > maximum):
        top = "" if maximum is None else f" up to {maximum}"
        raise _invalid_value(key, value, f"a positive integer{top}")
    return int(value)


def _string(obj: Mapping[str, Any], key: str, at: str, hint: str) -> str:
    value = obj.get(key)
    if value is None:
        raise _missing(f"{at}.{key}", hint)
    if not isinstance(value, str) or not value:
        raise _invalid_type(f"{at}.{key}", "a non-empty string", value, hint)
    return value


def _object(obj: Mapping[str, Any], key: str, at: str) -> Mapping[str, Any]:
    value = obj.get(key)
    if value is None:
        raise _missing(f"{at}.{key}", f"{at} needs a {key!r} object.")
    if not isinstance(value, Mapping):
        raise _invalid_type(f"{at}.{key}", "an object", value)
    return value


def _missing(param: str, hint: str) -> ApiError:
    message = f"Missing required parameter: '{param}'; {hint}"
    return ApiError(message, param=param, code="missing_required_parameter")


def _invalid_type(param: str, expected: str, value: Any, hint: str = "") -> ApiError:
    message = f"Invalid type for '{param}': expected {expected}, but got {_kind(value)}."
    return ApiError(
        f"{message[:-1]}; {hint}" if hint else message, param=param, code="invalid_type"
    )


def _invalid_value(param: str, value: Any, expected: str) -> ApiError:
    message = f"Invalid value for '{param}': {_shown(value)}; expected {expected}."
    return ApiError(message, param=param, code="invalid_value")


def _kind(value: Any) -> str:
    """A JSON value's type in words, for messages."""
    if value == "":
        return "an empty string"
    return next((name for kind, name in _KINDS if isinstance(value, kind)), type(value).__name__)


def _shown(value: Any) -> str:
    """A value as the client wrote it: a string quoted, anything else as JSON."""
    return repr(value) if isinstance(value, str) else json.dumps(value, default=repr)[:80]


def _listed(names: Collection[str], limit: int = 5) -> str:
    shown = [repr(name) for name in list(names)[:limit]]
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return (", ".join(shown) + more) if shown else "none"
